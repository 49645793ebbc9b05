"""Case generators of the library classes for bench/fuzz/fuzz.py: library type misuse (public functions
and Predictor methods called with wrong types, run in one subprocess), out-of-range but
well-formed numbers and tampered resume files (through the CLI, without running TensorFlow
workloads: a collect whose grid is empty stops right after its checks).

Library outcomes: ``refused`` (a ProfetError, one line), ``answered`` (a return value where one
is fine), ``garbage`` (a return value where the call must be refused) or ``traceback`` (any
other exception).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: (name, call) evaluated with ``p`` (the shipped artifacts' Predictor), ``ops`` (the example
#: profile's op columns) and ``pc`` (profet_core) in scope; every one must be refused.
LIBRARY_CASES = [
    ("predict-targets-empty", "p.predict(A, ops, targets=[])"),
    ("predict-targets-int", "p.predict(A, ops, targets=5)"),
    ("predict-text-cell", "p.predict(A, ops.astype(object).assign(Device_Conv2D='abc'))"),
    ("predict-list-cell", "p.predict(A, ops.astype(object).assign(Device_Conv2D=[[1, 2]]))"),
    ("predict-bool-cell", "p.predict(A, ops.assign(Device_Conv2D=True))"),
    ("predict-duplicate-column", "p.predict(A, pd.concat([ops, ops[['Device_Conv2D']]], axis=1))"),
    ("predict-latency-400-digits", "p.predict(A, ops, anchor_latency_s=10**400)"),
    ("predict-latency-text", "p.predict(A, ops, anchor_latency_s='0.1')"),
    ("predict-latency-object", "p.predict(A, ops, anchor_latency_s=object())"),
    ("predict-batch-text", "p.predict(A, ops, batch_size='x')"),
    ("predict-input-400-digits", "p.predict(A, ops, input_size=10**400)"),
    ("predict-ops-1e300", "p.predict(A, ops * 0 + 1e300)"),
    ("breakdown-targets-empty", "p.breakdown(A, ops, targets=[])"),
    ("breakdown-targets-float", "p.breakdown(A, ops, targets=3.5)"),
    ("scale-warnings-none", "p.scale_warnings('batch', None)"),
    ("scale-two-latency-400-digits", "p.scale('p3.2xlarge', 'batch', {16: 10**400, 256: 210}, 64)"),
    (
        "scale-one-latency-400-digits",
        "p.scale_from_point('p3.2xlarge', 'batch', 10**400, 32, [64], 128)",
    ),
    ("novelty-band-text", "p.novelty_band('x', True)"),
    ("with-catalog-int", "p.with_catalog(5)"),
    ("load-artifacts-int", "pc.load_artifacts(5)"),
    ("load-artifacts-catalog-text", "pc.load_artifacts(catalog='prices.csv')"),
    ("read-profile-none", "pc.read_profile(None)"),
    ("read-profile-int", "pc.read_profile(5)"),
    ("parse-profile-dict", "pc.parse_profile({'Device_X': 1.0})"),
    ("parse-profile-none", "pc.parse_profile(None)"),
    ("estimate-run-none", "pc.estimate_run(None, 1000, 32, 1)"),
    ("estimate-run-empty", "pc.estimate_run(pd.DataFrame(), 1000, 32, 1)"),
    ("load-catalog-int", "pc.load_catalog(5)"),
    ("load-dataset-int", "pc.load_dataset(5)"),
    ("make-dataset-none", "pc.make_dataset(None, None)"),
    ("make-pairs-none", "pc.make_pairs(None, 'a', 'b')"),
    ("summarize-none", "pc.summarize(None)"),
    ("cross-validate-none", "pc.cross_validate(None, {})"),
    ("validate-int", "pc.validate(5, out=5)"),
    ("add-instance-int", "pc.add_instance(5, 5, 5)"),
    ("train-none", "pc.train(None, None, None)"),
]
#: Out-of-range but well-formed numbers given to the library (must be refused or, for P(fits),
#: left empty).
LIBRARY_NUMBERS = [
    ("predict-latency-100000x-long", "p.predict(A, prof, anchor_latency_s=0.113 * 1e5)"),
    ("predict-latency-100000x-short", "p.predict(A, prof, anchor_latency_s=0.113 / 1e5)"),
    (
        "predict-device-5e-324",
        "p.predict(A, pd.DataFrame({'Device_Conv2D': [5e-324], 'Host_IDLE': [100.0]}))",
    ),
    (
        "fit-batch-1e6",
        "fit_garbage(p.predict(A, ops, anchor_latency_s=0.113, batch_size=10**6, input_size=128))",
    ),
    ("published-1e-300-ips", "published_with('images_per_s', '1e-300')"),
    ("published-duplicate-row", "published_dup()"),
]

_RUNNER = r"""
import json, sys, warnings
import pandas as pd
import profet_core as pc
from profet_core import ProfetError
warnings.simplefilter("ignore")
A = "g3s.xlarge"
p = pc.load_artifacts()
prof = pc.read_profile("examples/profile_g3s.json")
ops = prof[[c for c in prof.columns if c.startswith(("Host_", "Device_"))]]

def fit_garbage(result):
    return None if result.table["p_fit"].isna().all() else "finite P(fits)"

def published_with(column, value):
    from profet_core.crossgpu.spec._published import load_published, validate_published
    t = load_published().astype(str)
    t.loc[0, column] = value
    return validate_published(t)

def published_dup():
    from profet_core.crossgpu.spec._published import load_published, validate_published
    t = load_published().astype(str)
    return validate_published(pd.concat([t, t.iloc[[0]]], ignore_index=True))

out = {}
for name, code in json.loads(sys.argv[1]):
    try:
        value = eval(code)
        out[name] = "answered" if value is None else "garbage"
    except ProfetError as exc:
        out[name] = "refused" if "\n" not in str(exc) and len(str(exc)) < 600 else "garbage"
    except Exception as exc:
        out[name] = "traceback"
        print(name, type(exc).__name__, str(exc)[:120], file=sys.stderr)
print(json.dumps(out))
"""


def run_library(repo: str, cases, runner: str = _RUNNER) -> dict[str, str]:
    """Outcome per case name, all cases in one subprocess of the checkout ``repo`` running the
    script ``runner`` (it prints ``{case: outcome}`` as its last line)."""
    import os

    run = subprocess.run(
        [sys.executable, "-c", runner, json.dumps(cases)],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": repo},
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines:
        return {name: "traceback" for name, _ in cases}
    return json.loads(lines[-1])


def _collect(out: Path, *extra) -> list[str]:
    """A collect whose grid is empty (InceptionV3 needs >= 75 px): only its checks run."""
    return [
        *("collect", "--instance", "x1", "--out", str(out)),
        *("--models", "InceptionV3", "--input-sizes", "32", "--batch-sizes", "16", *extra),
    ]


def out_of_range(tmp: Path) -> list[tuple]:
    """Well-formed numbers beyond what the code can do (CLI)."""
    out = []
    # a zoo name that does not exist: a refusal naming the model, not the flag, is a wrong
    # message (the flag was let through), and no TensorFlow workload ever runs
    for name, flags, match in (
        ("profile-batch-0", ["--batch-size", "0", "--input-size", "32"], "batch size 0"),
        (
            "profile-classes-1e6",
            ["--batch-size", "32", "--input-size", "32", "--classes", "1000000"],
            "classes",
        ),
        ("profile-input-3", ["--batch-size", "32", "--input-size", "3"], "input size 3"),
        (
            "profile-input-1e5",
            ["--batch-size", "32", "--input-size", "100000"],
            "input size 100000",
        ),
        (
            "profile-batch-beyond-data",
            ["--batch-size", "3000", "--input-size", "224"],
            "batch size 3,000",
        ),
    ):
        target = tmp / f"{name}.json"
        argv = ["profile", "NoSuchZooNet", *flags, "--out", str(target)]
        out.append((name, argv, "refuse", match))
    for name, extra, match in (
        ("collect-price-1e9", ["--gpu", "T4", "--usd-per-hour", "1e9"], "usd-per-hour"),
        ("collect-gpu-empty", ["--gpu", "", "--usd-per-hour", "1"], "gpu"),
        ("collect-latency-steps-0", ["--latency-steps", "0"], "latency-steps"),
    ):
        out.append((name, _collect(tmp / f"c-{name}", *extra), "refuse", match))
    good = tmp / "good.json"
    base = ["predict", "--anchor", "g3s.xlarge", "--profile", str(good), "--format", "csv"]
    out.append(("predict-latency-1e5x", [*base, "--anchor-latency-ms", "1e7"], "refuse", "latency"))
    tiny = tmp / "device-5e-324.json"
    tiny.write_text('{"Device_Conv2D": 5e-324, "Host_IDLE": 100.0}')
    argv = [*base[:4], str(tiny), "--format", "csv"]
    out.append(("predict-device-5e-324", argv, "refuse", "no GPU device time"))
    return out


def _folder(d: Path) -> Path:
    """A collect folder of this convention (else any collect refuses it for that)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from profet_core.inputs._convention import CONVENTION, ZOO_VERSION

    d.mkdir(parents=True, exist_ok=True)
    record = {"convention": CONVENTION, "zoo": ZOO_VERSION}
    (d / "convention.json").write_text(json.dumps(record))
    return d


def _status(d: Path, text: str) -> Path:
    _folder(d)
    (d / "status.csv").write_text(text)
    return d


def tampered_resume(tmp: Path) -> list[tuple]:
    """Resume files of a collect folder edited or broken (CLI)."""
    head = "exp,instance,model,input_size,batch_size,status,error_kind,message\n"
    cases = {
        "status-size-text": head + "exp01,x1,LeNet5,abc,16,ok,,\n",
        "status-batch-400-digits": head + "exp01,x1,LeNet5,32,1" + "0" * 400 + ",ok,,\n",
        "status-columns": "a,b\n1,2\n",
        "status-word": head + "exp01,x1,LeNet5,32,16,maybe,,\n",
        "status-not-utf8": "\udcff\udcfe",
    }
    out = []
    for name, text in cases.items():
        d = _folder(tmp / f"resume-{name}")
        (d / "status.csv").write_text(text, errors="surrogateescape")
        out.append((name, _collect(d), "refuse", "status"))
    d = _status(tmp / "resume-corrupt-parquet", head + "exp01,x1,LeNet5,32,16,ok,,\n")
    (d / "profiles.parquet").write_bytes(b"PAR1 not parquet")
    out.append(("corrupt-profiles-table", _collect(d), "refuse", "profiles.parquet"))
    d = _folder(tmp / "resume-bad-catalog")
    (d / "instances.csv").write_text("instance,gpu\n=cmd,\n")
    argv = _collect(d, "--gpu", "T4", "--usd-per-hour", "1")
    out.append(("malformed-instances-csv", argv, "refuse", "instances.csv"))
    d = tmp / "resume-deep-convention"
    d.mkdir()
    (d / "convention.json").write_text("[" * 100_000 + "]" * 100_000)
    out.append(("deep-convention-json", _collect(d), "refuse", "convention"))
    model = tmp / "exits.py"
    model.write_text("import sys\nsys.exit(0)\n")
    argv = ["profile", str(model), "--batch-size", "8", "--input-size", "16"]
    argv += ["--out", str(tmp / "exit.json")]
    out.append(("model-sys-exit-0", argv, "refuse", "exit"))
    return out


CLASSES = {"out-of-range": out_of_range, "tampered-resume": tampered_resume}
LIBRARY_CLASSES = {"library-types": LIBRARY_CASES, "library-numbers": LIBRARY_NUMBERS}
