"""Case generators of the catalog classes for bench/fuzz/fuzz.py: catalog files given to
``offerings refresh``, hostile text from a catalog, option combinations, many-row offerings,
and the offerings library's argument misuse.

CLI generators return ``(name, argv, expect, check)`` as bench/fuzz/fuzz_edges.py's do; a
``check`` may also be a regex the refusal must match (else ``wrong-message``), or a callable
marked ``wants_err`` that reads stdout and stderr together. The library class runs in one
subprocess of the checkout (:func:`run_offerings_library`): each case returns None (answered
as it should), an outcome name, or raises (ProfetError: refused; anything else: traceback).
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
GOOD_ROW = "gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-east-1,\n"
GCP = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
GCP += "Price,SpotPrice\n"
HOST = "n1-highmem-8,8.0,52.0,,,us-central1,{zone},0.47,0.12\n"
FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "=1+2"]
MARKUP = ['<img src="http://evil.example/i.png">', "[x](http://evil.example)"]
ESCAPES = ["\x1b]8;;http://evil.example\x07link\x1b]8;;\x07", "\x1b[31mred"]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _catalog(root: Path, cloud: str = "lambda", text=None, raw=None) -> Path:
    (root / cloud).mkdir(parents=True, exist_ok=True)
    if raw is not None:
        (root / cloud / "vms.csv").write_bytes(raw)
    elif text is not None:
        (root / cloud / "vms.csv").write_text(text)
    return root


def _refresh(folder: Path, *extra) -> list[str]:
    return ["offerings", "refresh", "--catalog", str(folder), *extra]


def _names_rows(names: list[str], kinds: list[str]):
    """A check: each of ``names`` is reported on stdout with its kind (else wrong-message)."""

    def check(tmp, out):
        missing = [n for n, k in zip(names, kinds, strict=True) if n not in out or k not in out]
        return "wrong-message" if missing else None

    return check


def catalog_files(tmp: Path) -> list[tuple]:
    """Malformed catalog files and odd rows given to ``offerings refresh``."""
    out = []
    files = {
        "zero-bytes": (b"", "empty"),
        "blank": (b"\n \n\n", "empty"),
        "latin-1": ((HEADER + "gpu_1x_\xe9,A100,1,1,1,1,x,\n").encode("latin-1"), "UTF-8"),
        "utf-16": ((HEADER + GOOD_ROW).encode("utf-16"), "UTF-8"),
    }
    for name, (raw, match) in files.items():
        out.append(
            (f"vms-{name}", _refresh(_catalog(tmp / f"cat-{name}", raw=raw)), "refuse", match)
        )
    folder = tmp / "cat-folder"
    (folder / "lambda" / "vms.csv").mkdir(parents=True)
    out.append(("vms-is-a-folder", _refresh(folder), "refuse", "folder"))
    fifo = tmp / "cat-fifo"
    (fifo / "lambda").mkdir(parents=True)
    os.mkfifo(fifo / "lambda" / "vms.csv")
    out.append(("vms-fifo", _refresh(fifo), "refuse", "pipe"))
    zero = tmp / "cat-zero"
    (zero / "lambda").mkdir(parents=True)
    os.symlink("/dev/zero", zero / "lambda" / "vms.csv")
    out.append(("vms-link-to-dev-zero", _refresh(zero), "refuse", "device"))
    big = _catalog(tmp / "cat-big-source", text=HEADER + GOOD_ROW)
    with open(big / "lambda" / "SOURCE.md", "wb") as fh:  # sparse: no disk used
        fh.truncate(3 * 2**30)
    out.append(("source-md-3-GB", _refresh(big), "refuse", "SOURCE.md"))
    out.append(("catalog-is-a-file", _refresh(Path("/etc/hostname")), "refuse", "not a folder"))
    plain = _catalog(tmp / "cat-plain", text=HEADER + GOOD_ROW)
    out.append(("out-empty", _refresh(plain, "--out", ""), "refuse", "--out '' is empty"))
    rows = {
        "gpu_1x_inf": ("inf", "absurd price"),
        "gpu_1x_big": ("1e308", "absurd price"),
        "gpu_1x_mil": ("1000000", "absurd price"),
        "gpu_1x_neg": ("-2", "absurd price"),
        "gpu_1x_txt": ("cheap", "text in a number"),
    }
    for inst, (price, kind) in rows.items():
        text = HEADER + GOOD_ROW + f"{inst},A100,1.0,30.0,200.0,{price},us-east-1,1.0\n"
        folder = _catalog(tmp / f"cat-{inst}", text=text)
        out.append((f"row-price-{price}", _refresh(folder), "answer", _names_rows([inst], [kind])))
    odd = {
        "vcpus-negative": ("gpu_1x_cpu,A100,1.0,-4,200.0,1.99,us-east-1,\n", "impossible vcpus"),
        "ragged-row": ("gpu_1x_rag,A100,1.0,30.0,200.0,1.99,us-east-1,,x\n", "ragged row"),
        "nul-byte": ("gpu_1x_nul\x00,A100,1.0,30.0,200.0,1.99,us-east-1,\n", "control characters"),
        "gpus-zero": ("gpu_0x_zero,A100,0,30.0,200.0,1.99,us-east-1,\n", "impossible GPU count"),
        "gpus-minus-1": ("gpu_1x_m,A100,-1,30.0,200.0,1.99,us-east-1,\n", "impossible GPU count"),
        "empty-instance": (",A100,1,30.0,200.0,1.99,us-east-1,\n", "no instance name"),
    }
    for name, (row, kind) in odd.items():
        folder = _catalog(tmp / f"cat-{name}", text=HEADER + GOOD_ROW + row)
        inst = row.split(",")[0].replace("\x00", "")
        out.append((f"row-{name}", _refresh(folder), "answer", _names_rows([inst], [kind])))
    gcp = GCP + HOST.format(zone="us-central1-a")
    dup = gcp + ",,,T4,1.0,us-central1,us-central1-a,0.35,0.1\n" * 2
    out.append(
        (
            "gcp-duplicate-gpu-row",
            _refresh(_catalog(tmp / "cat-gdup", "gcp", dup)),
            "answer",
            _names_rows([""], ["duplicate"]),
        )
    )
    a2 = gcp + "a2-highgpu-1g,12.0,85.0,,,us-central1,us-central1-a,0.74,0.37\n"
    a2 += ",,,A100,1.0,us-central1,us-central1-a,2.93,1.43\n" * 2
    out.append(
        (
            "gcp-duplicate-a100-row",
            _refresh(_catalog(tmp / "cat-ga2", "gcp", a2)),
            "answer",
            _names_rows(["A100:1"], ["duplicate"]),
        )
    )
    half = gcp + ",,,T4,1.5,us-central1,us-central1-a,0.35,0.1\n"
    out.append(
        (
            "gcp-t4-x1.5",
            _refresh(_catalog(tmp / "cat-ghalf", "gcp", half)),
            "answer",
            _names_rows([""], ["fractional GPUs"]),
        )
    )
    many = GCP + "".join(HOST.format(zone=f"z{i % 20}") for i in range(20))
    many += "".join(f",,,T4,1.0,us-central1,z{i % 20},0.35,0.1\n" for i in range(200_000))
    out.append(
        ("gcp-200000-rows", _refresh(_catalog(tmp / "cat-g200k", "gcp", many)), "answer", None)
    )
    return out


def _written_csv(folder: Path):
    """A check: offerings.csv in ``folder`` holds no formula cell."""

    def check(tmp, out):
        path = folder / "offerings.csv"
        if not path.is_file():
            return "garbage"
        cells = [c for row in csv.reader(io.StringIO(path.read_text())) for c in row]
        return "injected" if any(re.match(r"[=+@]|-(?![\d.]+$)", c) for c in cells) else None

    return check


def _no_escapes(tmp, out):
    return "injected" if _CONTROL.search(out) else None


_no_escapes.wants_err = True


def hostile_text(tmp: Path) -> list[tuple]:
    """Catalog text that is formulas, markup or terminal escapes, refreshed and written."""
    out = []
    for i, text in enumerate(FORMULAS + MARKUP):
        for where in ("instance", "accelerator", "region"):
            row = {"instance": f"gpu_1x_a{i}", "accelerator": "A100", "region": "us-east-1"}
            row[where] = text
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow(
                [row["instance"], row["accelerator"], 1.0, 30.0, 200.0, 1.99, row["region"], ""]
            )
            folder = _catalog(tmp / f"hostile-{i}-{where}", text=HEADER + buf.getvalue())
            dest = tmp / f"hostile-out-{i}-{where}"
            argv = _refresh(folder, "--out", str(dest))
            out.append((f"csv-{where}-{i}", argv, "answer", _written_csv(dest)))
    for i, esc in enumerate(ESCAPES):
        folder = _catalog(tmp / f"escape-{i}", text=HEADER + GOOD_ROW)
        (folder / "lambda" / "SOURCE.md").write_text(f"- Repository: {esc} (x)\n- Commit: {esc}\n")
        out.append((f"source-line-escape-{i}", _refresh(folder), "answer", _no_escapes))
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([esc, "A100", 1, 30, 200, 1.99, "x", ""])
        folder = _catalog(tmp / f"escape-row-{i}", text=HEADER + buf.getvalue())
        out.append((f"instance-escape-{i}", _refresh(folder), "answer", _no_escapes))
    return out


def option_combinations(tmp: Path) -> list[tuple]:
    """Options at odds with each other or with what exists (profet predict, instances)."""
    good = str(Path("examples") / "profile_g3s.json")
    p = ["predict", "--profile", good]
    refuse = {
        "gpus-9": ([*p, "--gpus", "9"], "the most any"),
        "gpus-64-csv": ([*p, "--gpus", "64", "--format", "csv"], "the most any"),
        "gpus-1_0": ([*p, "--gpus", "1_0"], "1_0"),
        "offerings-gpus-17": ([*p, "--offerings", "--gpus", "17"], "the most any has is 16"),
        "cloud-empty": ([*p, "--cloud", ""], "names nothing"),
        "gpu-dash": ([*p, "--gpu", "-"], "names nothing"),
        "gpu-bangs": ([*p, "--gpu", "!!!"], "names nothing"),
        "cloud-unknown": ([*p, "--cloud", "foo"], "clouds offered"),
        "gpu-unknown": ([*p, "--gpu", "Z99"], "GPUs offered"),
        "region-unknown": ([*p, "--region", "mars"], "regions offered"),
        "spot-on-lambda": ([*p, "--cloud", "lambda", "--spot"], "spot price"),
        "price-below-all": ([*p, "--max-usd-per-hour", "0.001"], "the cheapest"),
        "gpu-without-spec": ([*p, "--gpu", "MI300X"], "no spec model"),
        "instances-cloud-unknown": (["instances", "--cloud", "foo"], "clouds offered"),
        "instances-targets-filter": (["instances", "--targets", "--cloud", "aws"], "--targets"),
        "params-half": ([*p, "--params", "0.5"], "params 0.5"),
        "params-1e30": ([*p, "--params", "1e30"], "params 1e\\+30"),
        "amp-latency-5800": (
            [*p, "--precision", "amp", "--anchor-amp-latency-ms", "5800"],
            "FP32 step",
        ),
        "latency-400-digits": ([*p, "--anchor-latency-ms", "1" * 400], "400-digit number"),
    }
    out = [(n, argv, "refuse", match) for n, (argv, match) in refuse.items()]

    def noted(text):
        def check(tmp, out):
            return None if text in out else "wrong-message"

        check.wants_err = True
        return check

    answer = {
        "params-one-gpu": ([*p, "--params", "1e6"], "params is used only"),
        "amp-anchor-no-tensor-cores": (
            [*p, "--precision", "amp", "--anchor-amp-latency-ms", "60"],
            "no FP16 tensor cores, so its AMP gain",
        ),
        "batch-64-on-batch-32": ([*p, "--batch-size", "64"], "taken at batch 32"),
        "run-without-batch": ([*p, "--dataset-images", "5000", "--epochs", "2"], "run_usd"),
    }
    out += [(n, argv, "answer", noted(text)) for n, (argv, text) in answer.items()]
    return out


def many_row_offerings(tmp: Path) -> list[tuple]:
    """Many-row profiles priced on every offering, and a large answer in the table format."""
    import pandas as pd

    base = pd.read_csv(Path("examples") / "profiles_g3s.csv")
    ops = [c for c in base.columns if c.startswith(("Host_", "Device_"))]
    base = base[ops].round(0)  # whole microseconds: a 95,000-row file under the 52 MB limit

    def first_row_noted(tmp, out):
        return None if "prices the first one" in out else "wrong-message"

    first_row_noted.wants_err = True
    out = []
    # The audit's cases: --offerings with 1,000 rows and --all-regions took 203 s and 511 MB;
    # 10,000 rows (or 95,000 in the default view) passed 6 GB; the table format of 95,000.
    for n in (1_000, 10_000, 95_000):
        path = tmp / f"profiles-{n}.csv"
        pd.concat([base] * (n // len(base) + 1)).head(n).to_csv(path, index=False)
        argv = ["predict", "--profile", str(path), "--anchor", "g3s.xlarge"]
        if n < 95_000:
            offer = [*argv, "--offerings", "--all-regions", "--format", "json"]
            out.append((f"offerings-{n}-rows-all-regions", offer, "answer", first_row_noted))
        else:
            # JSON: the harness reads a CSV's batch_latency_ms as "all finite", and offerings of
            # GPUs without a spec model are listed with an empty one (said in a note)
            offer = [*argv, "--offerings", "--format", "json"]
            out.append((f"offerings-{n}-rows-default-view", offer, "answer", first_row_noted))
            out.append((f"table-{n}-rows", argv, "either", "--format csv"))
    return out


CLASSES = {
    "catalog-files": catalog_files,
    "hostile-text": hostile_text,
    "option-combos": option_combinations,
    "many-row-offerings": many_row_offerings,
}

#: The offerings library's misuse: each case's code returns None when answered as it should.
LIBRARY_OFFERINGS = [
    ("predict-offerings-gpus-list", "po(gpus=[1, 2])"),
    ("predict-offerings-run-missing-keys", "po(run={'dataset_images': 1000})"),
    ("predict-offerings-amp-10**400", "po(precision='amp', anchor_amp_latency_s=10**400)"),
    ("predict-offerings-params-10**400", "po(params=10**400)"),
    ("predict-offerings-negative-price", "po(offerings=snap('usd_per_hour', -1.0))"),
    ("predict-offerings-inf-price", "po(offerings=snap('spot_usd_per_hour', float('inf')))"),
    ("predict-offerings-nan-name", "po(offerings=snap('instance', float('nan')))"),
    ("predict-offerings-gpus-1.5", "po(offerings=snap('gpus', 1.5))"),
    ("filter-clouds-none", "pc.OfferingFilter(clouds=None)"),
    ("where-none", "done().where(None)"),
    ("compare-none", "compare(None, pc.load_offerings())"),
    ("price-source-int-commit", "text(pc.price_source({'clouds': {'a': {'commit': 5}}}))"),
    ("estimate-run-negative-latency", "run_negative()"),
    ("write-offerings-half-written", "half_written()"),
    ("hostile-front-figure", "hostile_figure()"),
]

_RUNNER = r"""
import json, math, re, sys, tempfile, warnings
from pathlib import Path
import pandas as pd
import profet_core as pc
from profet_core import ProfetError
from profet_core.offerings._snapshot import compare
warnings.simplefilter("ignore")
p = pc.load_artifacts()
prof = pc.read_profile("examples/profile_g3s.json")

def po(**kw):
    pc.predict_offerings(p, "g3s.xlarge", prof, **kw)

def done():
    return pc.predict_offerings(p, "g3s.xlarge", prof, filter=pc.OfferingFilter(clouds=("aws",)))

def snap(col, value):
    t = pc.load_offerings()
    t[col] = t[col].astype(object)
    t.loc[t.index[t["cloud"].eq("lambda")][0], col] = value
    return t

def text(value):
    return None if isinstance(value, str) else "garbage"

def run_negative():
    out = pc.estimate_run(pd.DataFrame({"batch_latency_ms": [-5.0], "usd_per_hour": [1.0]}), 1000, 32, 1)
    return "garbage" if (out["run_usd"] < 0).any() else None

def half_written():
    d = Path(tempfile.mkdtemp())
    try:
        pc.write_offerings({"table": pc.load_offerings().head(2), "meta": {"x": object()}}, d / "o")
    except ProfetError:
        pass
    return "data-loss" if (d / "o").exists() else None

def hostile_figure():
    try:
        from profet_app.offerings_front import front_figure
    except ImportError:
        return None
    t = pc.load_offerings()
    lam = t.index[t["cloud"].eq("lambda") & t["gpu"].ne("")]
    t.loc[lam, "instance"] = '<a href="http://evil.example">x</a>'
    r = pc.predict_offerings(p, "g3s.xlarge", prof, offerings=t, filter=pc.OfferingFilter(clouds=("lambda",)))
    spec = json.loads(front_figure(r.table, r.cost_column, "USD").to_json())
    texts = [a["text"] for a in spec["layout"]["annotations"]]
    texts += [str(c) for tr in spec["data"] for c in tr.get("customdata", [])]
    return "injected" if any(re.search(r"<\s*a\b", s) for s in texts) else None

out = {}
for name, code in json.loads(sys.argv[1]):
    try:
        value = eval(code)
        out[name] = value if isinstance(value, str) else "answered"
    except ProfetError as exc:
        out[name] = "refused" if "\n" not in str(exc) and len(str(exc)) < 600 else "garbage"
    except Exception as exc:
        out[name] = "traceback"
        print(name, type(exc).__name__, str(exc)[:120], file=sys.stderr)
print(json.dumps(out))
"""

#: Cases whose right answer is a refusal: answered is then garbage (accepted nonsense).
MUST_REFUSE = {n for n, _ in LIBRARY_OFFERINGS} - {
    "price-source-int-commit",
    "estimate-run-negative-latency",
    "write-offerings-half-written",
    "hostile-front-figure",
}


def run_offerings_library(repo: str, cases) -> dict[str, str]:
    """Outcome per case name, all cases in one subprocess of the checkout ``repo``."""
    from fuzz_library import run_library  # this folder is on sys.path, as for fuzz.py

    found = run_library(repo, cases, _RUNNER)
    return {n: "garbage" if r == "answered" and n in MUST_REFUSE else r for n, r in found.items()}
