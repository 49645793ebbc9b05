"""Case generators of the sky-plan classes for bench/fuzz/fuzz.py: ``profet sky-plan``'s task forms
and malformed tasks, catalogs handed to SkyPilot (and to ``offerings refresh`` and ``--catalog``),
hostile text in plans and catalogs, the long bounds, and the sky library's misuse.

    .venv/bin/python bench/fuzz/fuzz.py --classes sky-tasks sky-catalogs sky-text long-bounds \\
        library-sky

CLI generators return ``(name, argv, expect, check)`` as bench/fuzz/fuzz_edges.py's do (a
``check`` string: the refusal must match it, else ``wrong-message``; a callable: it reads what an
answer wrote). Each CLI case runs with a TMPDIR of its own and a 1 GiB file-size limit
(:func:`run_sky_case`): a case that leaves anything in it (SkyPilot's child folder) or is stopped
by the limit is a ``blow-up``; any control character on its stdout or stderr is ``injected``,
whatever its outcome. The catalog is the small one the tests write (tests/core/sky/_utils.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
PROFILE = str(Path("examples") / "profile_g3s.json")
RUN = ["--dataset-images", "50000", "--epochs", "10"]
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
GOOD = "gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-east-1,\n"
#: Cases whose file-size limit and TMPDIR are their own (a disk blow-up is counted, not suffered).
FILE_LIMIT = 2**30


def _catalog(root: Path) -> Path:
    """The tests' small catalog (AWS us-east-1, Lambda, common) in ``root``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.core.sky._utils import write_catalog

    return write_catalog(root)


def _plan(task, catalog, *extra) -> list[str]:
    return ["sky-plan", str(task), "--profile", PROFILE, *RUN, "--catalog", str(catalog), *extra]


def _json_plan(check_extra=None):
    """A check: the JSON plan's prices are plausible and its run times finite or null."""

    def check(tmp, out):
        try:
            doc = json.loads(out[out.index("{") :])
        except ValueError:
            return "garbage"
        for c in doc["candidates"]:
            price, hours = c["usd_per_hour"], c["run_hours"]
            if price is not None and not 1e-4 <= price <= 1000:
                return "garbage"
            if hours is not None and not 0 < hours < 1e12:
                return "garbage"
        return check_extra(doc) if check_extra else None

    return check


def _said(text: str):
    """A check on stdout and stderr together: ``text`` is said (else garbage: silent nonsense)."""

    def check(tmp, out):
        return None if text in out else "garbage"

    check.wants_err = True
    return check


#: ``resources:`` of a task: every form SkyPilot accepts (answered) and malformed ones (refused,
#: the refusal matching the text).
TASK_FORMS = {
    "ordered": ("{ordered: [{accelerators: H100:1}, {accelerators: T4:1}]}", "answer", None),
    "accelerator-list": ("{accelerators: [T4, A100]}", "answer", None),
    "accelerator-set": ("{accelerators: {T4, A100:8}}", "answer", None),
    "accelerator-map": ("{accelerators: {T4: 1, A100: 8}}", "answer", None),
    "instance-type": ("{instance_type: p5.48xlarge}", "answer", None),
    "tpu-beside-t4": (
        "{any_of: [{accelerators: tpu-v4-8}, {accelerators: T4}]}",
        "answer",
        None,
    ),
    "lowercase-name": ("{accelerators: a100}", "either", None),
    "cpus": ("{cpus: 4+}", "refuse", "asks for no GPU"),
    "accelerators-null": ("{accelerators: null}", "refuse", "asks for no GPU"),
    "any_of-empty": ("{any_of: []}", "refuse", "asks for no GPU"),
    "ordered-empty": ("{ordered: []}", "refuse", "asks for no GPU"),
    "tpu-only": ("{accelerators: tpu-v4-8}", "refuse", "is a TPU"),
    "name-empty": ("{accelerators: ''}", "refuse", "name is empty"),
    "name-regex": ("{accelerators: 'A100(:1'}", "refuse", "is not allowed"),
    "name-escape": ('{accelerators: "\\e[31mT4"}', "refuse", "is not allowed"),
    "unknown-instance": ("{instance_type: p99.huge}", "refuse", "SkyPilot cannot plan"),
    "unknown-region": ("{accelerators: T4, region: mars-1}", "refuse", "SkyPilot cannot plan"),
    "count-2^63": ("{accelerators: {T4: 9223372036854775808}}", "refuse", "no instance has"),
    "count-10^400": ("{accelerators: {T4: 1" + "0" * 400 + "}}", "refuse", "no instance has"),
    "count-nan": ("{accelerators: H100:nan}", "refuse", "not a number of GPUs"),
    "count-inf": ("{accelerators: H100:inf}", "refuse", "not a number of GPUs"),
    "count-1e400": ("{accelerators: H100:1e400}", "refuse", "not a number of GPUs"),
    "misspelt-key": ("{acelerators: T4}", "refuse", "did you mean"),
}


def sky_tasks(tmp: Path) -> list[tuple]:
    """Every task form SkyPilot accepts, planned; malformed and hostile tasks, refused."""
    cat = _catalog(tmp / "sky-cat" / "v8")
    out = []
    for name, (resources, expect, check) in TASK_FORMS.items():
        path = tmp / f"task-{name}.yaml"
        path.write_text(f"name: fuzz\nresources: {resources}\nrun: echo\n")
        if expect == "answer":
            out.append((f"task-{name}", _plan(path, cat, "--format", "json"), expect, _json_plan()))
        else:
            out.append((f"task-{name}", _plan(path, cat), expect, check))
    (tmp / "task-none.yaml").write_text("name: x\nrun: echo\n")
    out.append(("task-no-resources", _plan(tmp / "task-none.yaml", cat), "refuse", "no GPU"))
    (tmp / "task-nodes.yaml").write_text("num_nodes: 2\nresources: {accelerators: T4}\n")
    out.append(("task-two-nodes", _plan(tmp / "task-nodes.yaml", cat), "refuse", "2 nodes"))
    text, prev = "a: &a [x,x,x,x,x,x,x,x,x]\n", "a"
    for n in "bcdefghij":
        text += f"{n}: &{n} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = n
    (tmp / "task-bomb.yaml").write_text(text)
    out.append(("task-alias-bomb", _plan(tmp / "task-bomb.yaml", cat), "refuse", "aliases"))
    (tmp / "task-deep.yaml").write_text("resources: " + "[" * 50_000 + "]" * 50_000 + "\n")
    out.append(("task-50000-deep", _plan(tmp / "task-deep.yaml", cat), "refuse", "nests deeper"))
    many = "".join(f"    - accelerators: T4:{1 + i % 8}\n" for i in range(500))
    (tmp / "task-500.yaml").write_text(f"resources:\n  any_of:\n{many}")
    out.append(("task-500-candidates", _plan(tmp / "task-500.yaml", cat), "refuse", "at most 64"))
    fifo = tmp / "task-fifo.yaml"
    os.mkfifo(fifo)
    loop = tmp / "task-loop.yaml"
    loop.symlink_to(loop)
    for name, path, match in (
        ("dev-zero", "/dev/zero", "character device"),
        ("fifo", fifo, "named pipe"),
        ("folder", tmp, "a folder"),
        ("symlink-loop", loop, "symlink loop"),
        ("empty-path", "", "path is empty"),
    ):
        out.append((f"task-{name}", _plan(path, cat), "refuse", match))
    year = tmp / "task-year.yaml"
    year.write_text("resources: {accelerators: T4}\n")
    argv = [*_plan(year, cat)[:4], "--dataset-images", "100000000000", "--epochs", "100000"]
    out.append(("run-600000-years", [*argv, "--catalog", str(cat)], "answer", _said("a year")))
    return out


def _bad_catalog(root: Path, cloud: str = "aws", data=None, link=None) -> Path:
    """The tests' catalog with one cloud's vms.csv replaced (``data`` bytes, a ``link``, or a
    FIFO where both are None)."""
    _catalog(root)
    path = root / cloud / "vms.csv"
    path.unlink()
    if link is not None:
        path.symlink_to(link)
    elif data is None:
        os.mkfifo(path)
    else:
        path.write_bytes(data)
    return root


def sky_catalogs(tmp: Path) -> list[tuple]:
    """Catalog folders handed to sky-plan (checked before they are copied), to offerings
    refresh and to --catalog."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.core.sky._utils import AWS

    task = tmp / "cat-task.yaml"
    task.write_text("resources:\n  any_of:\n    - accelerators: T4:1\n    - accelerators: A100:8\n")
    out = []
    bad = {
        "empty": (b"", None, "is empty"),
        "random-bytes": (bytes(range(256)) * 16, None, "not UTF-8"),
        "wrong-columns": (b"a,b\n1,2\n", None, "lacks column"),
        "fifo": (None, None, "named pipe"),
        "dev-zero": (None, "/dev/zero", "character device"),
        "etc-shadow": (None, "/etc/shadow", "outside the catalog folder"),
        "price-twice": (AWS.replace("Price,", "Price,Price,", 1).encode(), None, "twice"),
    }
    for name, (data, link, match) in bad.items():
        folder = _bad_catalog(tmp / f"cat-{name}" / "v8", data=data, link=link)
        out.append((f"sky-catalog-{name}", _plan(task, folder), "refuse", match))
    for name, price in (("minus-1", "-1"), ("zero", "0"), ("1e308", "1e308"), ("1e-300", "1e-300")):
        text = AWS.replace(",0.526,", f",{price},").replace(",7.824,", f",{price},")
        folder = _bad_catalog(tmp / f"cat-t4-{name}" / "v8", data=text.encode())
        argv = [*_plan(task, folder), "--format", "json"]
        out.append((f"sky-catalog-t4-price-{name}", argv, "answer", _json_plan()))
    text = AWS.replace(",0.526,", ",cheap,")
    folder = _bad_catalog(tmp / "cat-t4-text" / "v8", data=text.encode())
    out.append(("sky-catalog-t4-price-text", _plan(task, folder), "answer", _said("left out")))
    out.append(("sky-catalog-empty-path", _plan(task, ""), "refuse", "is empty"))
    esc = _catalog(tmp / "cat-esc" / "v8")
    (esc / "\x1b[31mred").mkdir()
    (esc / "\x1b[31mred" / "vms.csv").write_text(HEADER + GOOD)
    out.append(("sky-catalog-cloud-escape", _plan(task, esc), "refuse", "cloud folder named"))
    out.append(("refresh-cloud-escape", _refresh(esc), "refuse", "cloud folder named"))
    return out + _refresh_and_catalog_lines(tmp)


def _refresh_and_catalog_lines(tmp: Path) -> list[tuple]:
    """What ``offerings refresh`` and ``--catalog`` took silently."""
    out = []
    price2 = _lambda(
        tmp / "ref-price2", HEADER.replace("\n", ",Price\n") + GOOD.replace("\n", ",2\n")
    )
    out.append(("refresh-price-twice", _refresh(price2), "refuse", "twice"))
    rows = {
        "refresh-price-1e-300": (
            "gpu_1x_a10,A10,1.0,30.0,200.0,1e-300,us-east-1,\n",
            "absurd price",
        ),
        "refresh-empty-region": ("gpu_1x_h100,H100,1.0,30.0,200.0,2.49,,\n", "no region"),
    }
    for name, (row, kind) in rows.items():
        folder = _lambda(tmp / name, HEADER + GOOD + row)
        out.append((name, _refresh(folder), "answer", _said(kind)))
    p4d = "p4d.24xlarge,A100,8.0,96,1152,21.9,us-east-1,\n"
    folder = _lambda(
        tmp / "ref-p4d",
        HEADER + p4d + p4d.replace("8.0", "16.0").replace("us-east-1", "us-west-2"),
        "aws",
    )
    out.append(("refresh-16-gpus-on-8", _refresh(folder), "answer", _said("the spec sheet's")))
    predict = ["predict", "--profile", PROFILE]
    out.append(("predict-catalog-empty", [*predict, "--catalog", ""], "refuse", "is empty"))
    line = tmp / "cat-gpu-count.csv"
    line.write_text("instance,gpu,usd_per_hour,gpu_count\ng4dn.xlarge,T4,0.5,-8\n")
    out.append(
        (
            "instances-gpu-count--8",
            ["instances", "--targets", "--catalog", str(line)],
            "refuse",
            "gpu_count -8",
        )
    )
    out.append(
        ("predict-gpu-count--8", [*predict, "--catalog", str(line)], "refuse", "gpu_count -8")
    )
    return out


def _lambda(root: Path, text: str, cloud: str = "lambda") -> Path:
    (root / cloud).mkdir(parents=True, exist_ok=True)
    (root / cloud / "vms.csv").write_text(text)
    return root


def _refresh(folder: Path, *extra) -> list[str]:
    return ["offerings", "refresh", "--catalog", str(folder), *extra]


def sky_text(tmp: Path) -> list[tuple]:
    """Terminal escapes and formulas from a catalog or a task, through every output."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.core.sky._utils import AWS

    task = tmp / "text-task.yaml"
    task.write_text("resources:\n  any_of:\n    - accelerators: T4:1\n    - accelerators: L4:1\n")
    out = []
    for i, esc in enumerate(
        ["\x1b]8;;http://evil.example\x07x\x1b]8;;\x07", "\x1b[2J\x1b[31m", "\u202e"]
    ):
        text = AWS.replace("g4dn.xlarge,", f"g4dn.{esc}xlarge,").replace(
            "us-east-1,use1-az1", f"us-east-1,use1-az1{esc}", 1
        )
        folder = _bad_catalog(tmp / f"text-{i}" / "v8", data=text.encode())
        for fmt in ("table", "csv", "json"):
            out.append(
                (
                    f"sky-plan-escape-{i}-{fmt}",
                    [*_plan(task, folder), "--format", fmt],
                    "answer",
                    None,
                )
            )
    for i, formula in enumerate(['=HYPERLINK("http://evil.example","x")', "@SUM(1+1)"]):
        text = AWS.replace("g4dn.xlarge,", f'"{formula.replace(chr(34), chr(34) * 2)}",')
        folder = _bad_catalog(tmp / f"formula-{i}" / "v8", data=text.encode())
        argv = [*_plan(task, folder), "--format", "csv"]
        out.append((f"sky-plan-formula-{i}", argv, "answer", _no_formula))
    nul = tmp / "cat-nul.csv"
    nul.write_text("instance,gpu,usd_per_hour\ng4dn.xlarge,T4\x00\x1b[31mx,0.5\n")
    argv = ["predict", "--profile", PROFILE, "--catalog", str(nul), "--format", "csv"]
    out.append(("predict-csv-nul-gpu", argv, "refuse", "control characters"))
    return out


def _no_formula(tmp, out):
    import csv
    import io

    cells = [c for row in csv.reader(io.StringIO(out)) for c in row]
    return "injected" if any(re.match(r"[=+@]", c) for c in cells) else None


def long_bounds(tmp: Path) -> list[tuple]:
    """The bounds that ran long: a 1,000,000-row vms.csv, 95,000 profile rows on every GPU
    count with mixed precision, a 64-candidate task (the cap) on the tests' catalog."""
    import pandas as pd

    rows = "".join(
        f"gpu_1x_a100_{i},A100,1.0,30.0,200.0,1.99,us-east-{i % 50},\n" for i in range(1_000_000)
    )
    big = _lambda(tmp / "long-1m", HEADER + rows)
    out = [("refresh-1000000-rows", _refresh(big), "refuse", "the limit is 300,000")]
    base = pd.read_csv(Path("examples") / "profiles_g3s.csv")
    ops = [c for c in base.columns if c.startswith(("Host_", "Device_"))]
    many = pd.concat([base[ops].round(0)] * (95_000 // len(base) + 1)).head(95_000)
    path = tmp / "profiles-95000.csv"
    many.to_csv(path, index=False)
    argv = ["predict", "--profile", str(path), "--anchor", "g3s.xlarge", "--gpus", "all"]
    out.append(
        (
            "predict-95000-rows-gpus-all-amp",
            [*argv, "--precision", "amp", "--format", "csv"],
            "refuse",
            "at most 1,200,000",
        )
    )
    cat = _catalog(tmp / "long-cat" / "v8")
    gpus = ["T4", "L4", "A10G", "A100", "H100", "A100-80GB", "V100", "L40S"]
    lines = "".join(
        f"    - accelerators: {g}:{n}\n" for g in gpus for n in (1, 2, 3, 4, 5, 6, 7, 8)
    )
    (tmp / "task-64.yaml").write_text(f"resources:\n  any_of:\n{lines}")
    out.append(
        (
            "sky-plan-64-candidates",
            _plan(tmp / "task-64.yaml", cat, "--format", "json"),
            "answer",
            _json_plan(),
        )
    )
    return out


CLASSES = {
    "sky-tasks": sky_tasks,
    "sky-catalogs": sky_catalogs,
    "sky-text": sky_text,
    "long-bounds": long_bounds,
}


def _limits() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


def run_sky_case(repo: str, argv, expect: str, check, tmp: Path, index: int) -> tuple[str, float]:
    """One case of these classes: :func:`fuzz.outcome`, then ``blow-up`` where its TMPDIR is
    not empty afterwards or the file-size limit stopped it, ``injected`` where a control
    character reached its stdout or stderr."""
    from fuzz import outcome

    own = tmp / f"case-tmp-{index}"
    own.mkdir()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "profet_core", *argv],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": repo, "TMPDIR": str(own)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        preexec_fn=_limits,
        start_new_session=True,  # a hang's SkyPilot child is stopped with it, never orphaned
    )
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "hang", time.perf_counter() - t0
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it left running
        except OSError:
            pass
    run = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
    seconds = time.perf_counter() - t0
    if any(own.iterdir()) or run.returncode in (-25, 153) or "File too large" in run.stderr:
        return "blow-up", seconds
    if "MemoryError" in run.stderr or "Unable to allocate" in run.stderr:
        return "memory", seconds
    csv_out = "predict" in argv and "csv" in argv
    result = outcome(run.returncode, run.stdout, run.stderr, expect == "refuse", csv_out)
    if result == "garbage" and expect == "either" and run.returncode == 0:
        result = "answered"
    if result == "refused" and isinstance(check, str):
        result = "refused" if re.search(re.escape(check), run.stderr) else "wrong-message"
    elif result == "answered" and callable(check):
        text = run.stdout + run.stderr if getattr(check, "wants_err", False) else run.stdout
        result = check(tmp, text) or result
    if _CONTROL.search(run.stdout + run.stderr):
        result = "injected"
    return result, seconds


#: The sky library's misuse: each case's code returns None when answered as it should.
LIBRARY_SKY = [
    ("estimator-deepcopy", "same(copy.deepcopy(est()))"),
    ("estimator-pickle", "same(pickle.loads(pickle.dumps(est())))"),
    ("estimator-count-10**400", "unanswered({'T4': 10**400})"),
    ("estimator-count-nan", "unanswered({'H100': float('nan')})"),
    ("estimator-escape-warning", "escaped_warning()"),
    ("warnings-for-none", "est().warnings_for(None)"),
    ("sky-plan-timeout-0.01", "plan(timeout_s=0.01)"),
    ("sky-plan-catalog-empty", "plan(catalog='')"),
    ("offerings-catalog-price--1", "po(catalog=cat(usd_per_hour=-1.0))"),
    ("offerings-catalog-price-1e9", "po(catalog=cat(usd_per_hour=1e9))"),
    ("offerings-catalog-markup", "po(catalog=cat(instance='<b>x</b>'))"),
    ("offerings-catalog-formula", "po(catalog=cat(instance='=1+2'))"),
    ("offerings-catalog-text-price", "po(catalog=cat(usd_per_hour='cheap'))"),
    ("offerings-catalog-text-count", "po(catalog=cat(gpu_count='eight'))"),
    ("filter-all-regions-no", "pc.OfferingFilter(all_regions='no')"),
]

_RUNNER = r"""
import copy, json, pickle, sys, tempfile, warnings
from pathlib import Path
import pandas as pd
import profet_core as pc
from profet_core import ProfetError
from profet_core.sky import UNANSWERED_S, sky_plan, time_estimator
sys.path.insert(0, ".")
from tests.core.sky._utils import write_catalog

prof = pc.read_profile("examples/profile_g3s.json")
p = pc.load_artifacts()
tmp = Path(tempfile.mkdtemp())
catalog = write_catalog(tmp / "v8")
(tmp / "t.yaml").write_text("resources: {accelerators: T4}\n")

class R:
    def __init__(self, acc):
        self.accelerators = acc

def est():
    return time_estimator(prof, dataset_images=50_000, epochs=10)

def same(other):
    want = est()
    for cfg in ({"H100": 8}, {"T4": 3}):
        if abs(other(R(cfg)) - want(R(cfg))) > 1e-9 * want(R(cfg)):
            return "garbage"

def unanswered(acc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return None if est()(R(acc)) == UNANSWERED_S else "garbage"

def escaped_warning():
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        est()(R({"\x1b]8;;http://evil.example\x07X": 1}))
    return "injected" if any("\x1b" in str(w.message) for w in got) else None

def plan(**kw):
    return sky_plan(tmp / "t.yaml", prof, **{"catalog": catalog, "dataset_images": 5000, "epochs": 1, **kw})

def po(**kw):
    pc.predict_offerings(p, "g3s.xlarge", prof, **kw)

def cat(**cells):
    return pd.DataFrame([{"instance": "g4dn.xlarge", "gpu": "T4", "usd_per_hour": 0.5, **cells}])

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
MUST_REFUSE = {
    n for n, _ in LIBRARY_SKY if n.startswith(("warnings", "sky-plan", "offerings", "filter"))
}


def run_sky_library(repo: str, cases) -> dict[str, str]:
    """Outcome per case name, all cases in one subprocess of the checkout ``repo``."""
    from fuzz_library import run_library  # this folder is on sys.path, as for fuzz.py

    found = run_library(repo, cases, _RUNNER)
    return {n: "garbage" if r == "answered" and n in MUST_REFUSE else r for n, r in found.items()}
