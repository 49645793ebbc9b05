"""Case generators of the edge classes for bench/fuzz/fuzz.py: numbers at the edges, CSV structure,
instance names, injection and large tables.

Each generator returns ``(name, argv, expect, check)``: ``expect`` is ``"refuse"`` (the input
makes no sense), ``"answer"`` (finite numbers) or ``"either"``; ``check(tmp, out)`` (or None)
inspects what the command wrote and returns ``"injected"`` when user text came out live.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from pathlib import Path

GOOD = {"Device_Conv2D": 5000.0, "Device_Relu": 800.0, "Host_IDLE": 100.0}
ANCHOR = "g3s.xlarge"
BIG = "1" + "0" * 400
EDGES = {"denormal": "1e-320", "tiny": "1e-300", "huge": "1e300", "400-digits": BIG}
EVIL = "evil.example"
#: Live markup in HTML or Plotly text.
_LIVE = re.compile(r"<\s*(a|img|b)\b[^>]*>", re.IGNORECASE)


def _predict(profile, *extra) -> list[str]:
    return ["predict", "--anchor", ANCHOR, "--profile", str(profile), "--format", "csv", *extra]


def _scale_one(latency="10", size_from="32", size="64", other="32") -> list[str]:
    return [
        *("scale", "--target", "p3.2xlarge", "--by", "batch", "--latency-ms", latency),
        *("--size-from", size_from, "--size", size, "--other-size", other),
    ]


def edge_numbers(tmp: Path) -> list[tuple]:
    good = tmp / "good.json"
    out = []
    for name, v in EDGES.items():
        out.append((f"anchor-latency-{name}", _predict(good, "--anchor-latency-ms", v), "refuse"))
        out.append((f"scale-one-latency-{name}", _scale_one(latency=v), "refuse"))
        two = ["scale", "--by", "batch", "--latency-min-ms", v, "--latency-max-ms", "30"]
        out.append((f"scale-two-latency-{name}", [*two, "--size", "64"], "refuse"))
        prof = tmp / f"ops-{name}.json"
        prof.write_text(f'{{"Device_Conv2D": {v}, "Device_Relu": {v}}}')
        out.append((f"profile-times-{name}", _predict(prof), "refuse"))
        lat = tmp / f"lat-{name}.json"
        lat.write_text(f'{{"ops": {json.dumps(GOOD)}, "batch_latency_s": {v}}}')
        out.append((f"profile-latency-{name}", _predict(lat), "refuse"))
        cat = tmp / f"price-{name}.csv"
        cat.write_text(f"instance,gpu,usd_per_hour\ng4dn.xlarge,T4,{v}\n")
        out.append((f"catalog-price-{name}", _predict(good, "--catalog", str(cat)), "refuse"))
        doe = tmp / f"doe-{name}.csv"
        rows = [f"{a},{b},{v if i == 0 else 1 + i}" for i, (a, b) in enumerate(_runs())]
        doe.write_text("A,B,y\n" + "\n".join(rows) + "\n")
        out.append(
            (f"doe-response-{name}", ["doe", "analyze", str(doe), "--response", "y"], "refuse")
        )
    for flag, v in (("--dataset-images", "10" * 9), ("--epochs", "1000000000")):
        run = ["--dataset-images", "1000", "--batch-size", "32", "--epochs", "1", flag, v]
        out.append((f"run-cost{flag}", _predict(good, *run), "refuse"))
    for name, cell in (("bool", "True"), ("nan", "nan")):
        cat = tmp / f"price-{name}.csv"
        cat.write_text(f"instance,gpu,usd_per_hour\ng4dn.xlarge,T4,{cell}\n")
        out.append((f"catalog-price-{name}", _predict(good, "--catalog", str(cat)), "refuse"))
    exact = tmp / "doe-exact.csv"
    rows = [f"{a},{b},{10 + 3 * a + 2 * b}" for a, b in _runs()]
    exact.write_text("A,B,y\n" + "\n".join(rows) + "\n")
    out.append(("doe-exact-fit", ["doe", "analyze", str(exact), "--response", "y"], "answer"))
    dup = tmp / "price-dup.csv"
    dup.write_text("instance,gpu,usd_per_hour,usd_per_hour\ng4dn.xlarge,T4,1,2\n")
    out.append(("catalog-duplicate-column", _predict(good, "--catalog", str(dup)), "refuse"))
    return [(*c, _no_f_overflow) if c[0] == "doe-exact-fit" else (*c, None) for c in out]


def _runs():
    return list(itertools.product([-1, 1], [-1, 1])) * 2


def _no_f_overflow(tmp: Path, out: str):
    """An exact fit must not print F = 1e30."""
    return "garbage" if re.search(r"\d\.\d+e\+(2\d|3\d)", out) else None


def csv_structure(tmp: Path) -> list[tuple]:
    texts = {
        "extra-field": "Device_Conv2D,Device_Relu\n5000,800,77\n",
        "shifted-row": "Device_Conv2D,Device_Relu,batch_latency_s\n5000,800\n6000,900,0.05\n",
        "comma-space": "Device_Conv2D, Device_Relu\n5000, 800\n",
        "quoted-extra": 'Device_Conv2D,Device_Relu\n"5000",800\n6000,"900",1\n',
    }
    out = []
    for name, text in texts.items():
        path = tmp / f"shape-{name}.csv"
        path.write_text(text)
        out.append((f"profile-{name}", _predict(path), "refuse", None))
        cat = tmp / f"cat-{name}.csv"
        cat.write_text(text.replace("Device_Conv2D", "instance").replace("Device_Relu", "gpu"))
        out.append(
            (f"catalog-{name}", _predict(tmp / "good.json", "--catalog", str(cat)), "refuse", None)
        )
    doe = tmp / "doe-extra.csv"
    doe.write_text("A,B,y\n" + "\n".join(f"{a},{b},{i},9" for i, (a, b) in enumerate(_runs())))
    out.append(("doe-extra-field", ["doe", "analyze", str(doe), "--response", "y"], "refuse", None))
    frac = tmp / "frac.json"
    frac.write_text(json.dumps({"ops": GOOD, "batch_size": 32.5}))
    out.append(("fractional-batch-json", _predict(frac), "refuse", None))
    out.append(("fractional-scale-size", _scale_one(size="64.5"), "refuse", None))
    out.append(("fractional-size-from", _scale_one(size_from="32.5"), "refuse", None))
    return out


def instance_names(tmp: Path) -> list[tuple]:
    out = []
    for i, name in enumerate(["a->b", "g4dn.xlarge->p3", "x,y", "a b", "=cmd", "a/b", "é", "a>b"]):
        cat = tmp / f"name-{i}.csv"
        with cat.open("w", newline="") as fh:
            csv.writer(fh).writerows([["instance", "gpu", "usd_per_hour"], [name, "G", "1"]])
        out.append(
            (
                f"catalog-name-{i}",
                _predict(tmp / "good.json", "--catalog", str(cat)),
                "refuse",
                None,
            )
        )
        prof = tmp / f"name-{i}.json"
        prof.write_text(json.dumps({"ops": GOOD, "instance": name}))
        argv = ["predict", "--profile", str(prof), "--format", "csv"]
        out.append((f"profile-instance-{i}", argv, "refuse", None))
    return out


def injection(tmp: Path) -> list[tuple]:
    link, image = f'<a href="http://{EVIL}/">lo</a>', f'<img src="http://{EVIL}/i.png">'
    formula = f'=HYPERLINK("http://{EVIL}","x")'
    doe = tmp / "hostile.csv"
    with doe.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["A", "B", "@y<b>"])
        for i, (a, b) in enumerate(itertools.product([link, formula], [image, "+cmd"])):
            w.writerow([a, b, 1 + i])
        for i, (a, b) in enumerate(itertools.product([link, formula], [image, "+cmd"])):
            w.writerow([a, b, 2.5 + i * 1.3])
    out_dir = tmp / "doe-out"
    cat = tmp / "hostile-catalog.csv"
    with cat.open("w", newline="") as fh:
        csv.writer(fh).writerows(
            [
                ["instance", "gpu", "usd_per_hour"],
                ["g4dn.xlarge", formula, "1"],
                ["p2.xlarge", "@SUM(1)", "1"],
            ]
        )
    design_dir = tmp / "design-out"
    return [
        (
            "doe-analyze-html-csv",
            ["doe", "analyze", str(doe), "--response", "@y<b>", "--out", str(out_dir)],
            "answer",
            _outputs(out_dir),
        ),
        (
            "doe-design-run-sheet",
            [
                "doe",
                "design",
                "--factor",
                "a=@SUM(1),-cmd",
                "--factor",
                "b==1+2,+A1",
                "--seed",
                "1",
                "--out",
                str(design_dir),
            ],
            "answer",
            _outputs(design_dir),
        ),
        (
            "predict-csv-catalog-text",
            _predict(tmp / "good.json", "--catalog", str(cat)),
            "answer",
            _stdout_csv,
        ),
    ]


def _live_html(path: Path) -> bool:
    body = path.read_text(errors="replace")
    script = body[body.find("Plotly.newPlot") :]
    # the figure is JSON in a <script>: "<" is written \u003c there, and live once parsed
    for code, char in (("\\u003c", "<"), ("\\u003e", ">"), ("\\u002f", "/")):
        script = script.replace(code, char)
    return bool(_LIVE.search(script))


def _formula_cells(text: str) -> bool:
    return any(_is_formula(c) for row in csv.reader(text.splitlines()) for c in row)


def _is_formula(cell: str) -> bool:
    """OWASP: text starting with = + - @ tab or CR; numbers (-1.5e-05) and a lone sign pass."""
    if not cell or cell[0] not in "=+-@\t\r" or cell in "+-":
        return False
    try:
        float(cell)
    except ValueError:
        return True
    return cell[0] in "=@\t\r"


def _outputs(folder: Path):
    def check(tmp: Path, out: str):
        files = list(folder.glob("*"))
        bad = [f for f in files if f.suffix == ".html" and _live_html(f)]
        bad += [f for f in files if f.suffix == ".csv" and _formula_cells(f.read_text())]
        return "injected" if bad else None

    return check


def _stdout_csv(tmp: Path, out: str):
    return "injected" if _formula_cells(out) else None


def large_tables(tmp: Path) -> list[tuple]:
    import numpy as np

    rng = np.random.default_rng(0)
    ops = json.loads(
        (Path(__file__).resolve().parents[2] / "examples" / "profile_g3s.json").read_text()
    )
    ops = ops.get("ops", ops)
    base = np.array(list(ops.values()), dtype=float)
    out = []
    for n in (8192, 20_001, 200_000):
        times = np.maximum((base * rng.uniform(0.5, 2.0, (n, len(base)))).round(), 1).astype(
            np.int64
        )
        path = tmp / f"rows-{n}.csv"
        with path.open("w") as fh:
            fh.write(",".join(ops) + "\n")
            np.savetxt(fh, times, fmt="%d", delimiter=",")
        out.append((f"predict-{n}-rows", _predict(path), "answer", None))
    return out


def good_profile(tmp: Path) -> Path:
    """``tmp/good.json``, the plain profile several classes' cases use."""
    path = tmp / "good.json"
    path.write_text(json.dumps(GOOD))
    return path


CLASSES = {
    "edge-numbers": edge_numbers,
    "csv-structure": csv_structure,
    "instance-names": instance_names,
    "injection": injection,
    "large-tables": large_tables,
}
