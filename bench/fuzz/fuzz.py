"""Fuzz run over the `profet` CLI of any checkout: counts outcomes per class of hostile input.

    .venv/bin/python bench/fuzz/fuzz.py [--repo PATH] [--classes issue-13 edge-numbers ...]

Each case is one malformed or absurd input; its outcome is one of
``refused`` (exit 2, one `profet: error:` line), ``answered`` (exit 0; finite numbers),
``garbage`` (exit 0 where the input must be refused, non-finite numbers, a RuntimeWarning on
stderr, or a 300-digit number in a message), ``injected`` (user text written out as live
markup or a spreadsheet formula), ``traceback`` (any other exit or a Python traceback) or
``hang`` (no answer within 60 s); ``memory`` (the catalog classes: past 4 GiB of
address space); ``wrong-message`` (refused, but not for the reason the case
is about: the bad value was let through). The edge classes (numbers, CSV structure, names, injection,
large tables) live in bench/fuzz/fuzz_edges.py; library type misuse, out-of-range numbers and tampered resume files in
bench/fuzz/fuzz_library.py, the write-rule probes (class ``writes``: ``data-loss`` counted too) in
bench/fuzz/fuzz_writes.py; catalog files, hostile catalog text, option
combinations, many-row offerings and the offerings library in bench/fuzz/fuzz_offerings.py;
sky-plan's task forms, catalogs handed to SkyPilot, hostile text in plans, the long bounds and
the sky library in bench/fuzz/fuzz_sky.py (outcome ``blow-up``: a case that left files in its
TMPDIR or hit its 1 GiB file-size limit).
Run it on an old checkout (``--repo``) and on this one to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

GOOD = {"Device_Conv2D": 5000.0, "Device_Relu": 800.0, "Host_IDLE": 100.0}


def _files(tmp: Path) -> dict[str, Path]:
    """Malformed profile files by name (the ``issue-13`` class: the readers' hostile inputs)."""
    raw = {
        "deep-json": "[" * 1000 + "]" * 1000,
        "int-beyond-float": '{"Device_Conv2D": 1' + "0" * 400 + "}",
        "int-4300-digits": '{"Device_Conv2D": 1' + "0" * 4400 + "}",
        "lone-surrogate": '{"Device_\\ud800": 5}',
        "duplicate-key-negative": '{"Device_Conv2D": -5, "Device_Conv2D": 5}',
        "all-1e308": json.dumps({k: 1e308 for k in GOOD}),
        "csv-nan": "Device_Conv2D,Device_Relu\nnan,5\n",
        "csv-null": "Device_Conv2D,Device_Relu\nnull,5\n",
        "csv-bool": "Device_Conv2D,Device_Relu\nTrue,5\n",
        "csv-400-digits": "Device_Conv2D,Device_Relu\n1" + "0" * 400 + ",5\n",
        "csv-duplicate-column": "Device_Conv2D,Device_Conv2D\n5,6\n",
        "tfstats-empty-type": "Host/device,Type,Total time (us)\nDevice,,5\nDevice,Conv2D,7\n",
        "all-zero": json.dumps({k: 0 for k in GOOD}),
        "no-device-time": json.dumps({"Host_IDLE": 100.0, "Host_Dataset": 50.0}),
        "10000-unknown-ops": json.dumps({f"Device_Op{i}": 1.0 for i in range(10_000)}),
        "10M-char-name": json.dumps({"Device_" + "x" * 10_000_000: 1.0}),
    }
    out = {}
    for name, text in raw.items():
        suffix = ".csv" if name.startswith(("csv", "tfstats")) else ".json"
        path = tmp / f"{name}{suffix}"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        out[name] = path
    good = tmp / "good.json"
    good.write_text(json.dumps(GOOD))
    out["good"] = good
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    out["fifo"] = fifo
    return out


def cases(tmp: Path) -> list[tuple[str, list[str], bool]]:
    """(name, argv, must_refuse)."""
    f = _files(tmp)
    predict = ["predict", "--format", "csv", "--anchor", "g3s.xlarge", "--profile"]
    out = [(n, [*predict, str(p)], n != "good") for n, p in f.items() if n != "fifo"]
    out += [
        ("fifo", [*predict, str(f["fifo"])], True),
        ("directory", [*predict, str(tmp)], True),
        ("dev-zero", [*predict, "/dev/zero"], True),
        ("empty-path", [*predict, ""], True),
        ("name-over-255", [*predict, str(tmp / ("x" * 300 + ".json"))], True),
        ("latency-nan", [*predict, str(f["good"]), "--anchor-latency-ms", "nan"], True),
        (
            "latency-minus-inf",
            [
                "scale",
                "--target",
                "p3.2xlarge",
                "--by",
                "batch",
                "--latency-min-ms",
                "-inf",
                "--latency-max-ms",
                "30",
                "--size",
                "64",
            ],
            True,
        ),
        (
            "conflicting-points",
            [
                "scale",
                "--target",
                "p3.2xlarge",
                "--by",
                "batch",
                "--latency-min-ms",
                "10",
                "--latency-max-ms",
                "30",
                "--size",
                "64",
                "--point",
                "32=12",
                "--point",
                "32=20",
            ],
            True,
        ),
        (
            "doe-seed-minus-1",
            ["doe", "design", "--factor", "a=1,2", "--factor", "b=1,2", "--seed", "-1"],
            True,
        ),
    ]
    return out


def outcome(code: int | None, out: str, err: str, must_refuse: bool, csv_out: bool = True) -> str:
    if code is None:
        return "hang"
    if "Traceback" in err or code not in (0, 2):
        return "traceback"
    if "RuntimeWarning" in err or re.search(r"\d{100}", err):
        return "garbage"
    if code == 2:
        return (
            "refused" if err.strip().splitlines()[-1].startswith("profet: error:") else "traceback"
        )
    if must_refuse or (csv_out and not _finite_latencies(out)):
        return "garbage"
    return "answered"


def _finite_latencies(out: str) -> bool:
    """The predicted latencies (CSV column batch_latency_ms, or scale's first number) are finite."""
    import io
    import math

    import pandas as pd

    try:
        values = pd.read_csv(io.StringIO(out))["batch_latency_ms"].tolist()
    except Exception:  # not CSV: `profet scale` prints one number first
        values = [float(out.split()[0])] if out.split() else [math.nan]
    return all(math.isfinite(v) for v in values)


def _all_cases(tmp: Path, classes: list[str]):
    """(class, name, argv, expect, check) of every case of the chosen classes."""
    from fuzz_edges import CLASSES, good_profile
    from fuzz_library import CLASSES as MORE
    from fuzz_offerings import CLASSES as OFFERINGS
    from fuzz_sky import CLASSES as SKY

    CLASSES = {**CLASSES, **MORE, **OFFERINGS, **SKY}
    good_profile(tmp)
    for cls in classes:
        if cls == "issue-13":
            for name, argv, must in cases(tmp):
                yield cls, name, argv, "refuse" if must else "answer", None
        else:
            for name, argv, expect, check in CLASSES[cls](tmp):
                yield cls, name, argv, expect, check


#: Address space a case may take (the catalog classes): beyond it, a memory blow-up.
MEMORY_LIMIT = 4 * 2**30


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _run_case(repo: str, argv, expect: str, check, tmp: Path, limit=False) -> tuple[str, float]:
    t0 = time.perf_counter()
    try:
        run = subprocess.run(
            [sys.executable, "-m", "profet_core", *argv],
            cwd=repo,
            env={**os.environ, "PYTHONPATH": repo},
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            errors="replace",
            preexec_fn=_limit_memory if limit else None,
        )
    except subprocess.TimeoutExpired:
        return "hang", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    if limit and ("MemoryError" in run.stderr or "Unable to allocate" in run.stderr):
        return "memory", seconds
    csv_out = "--format" in argv and "csv" in argv
    result = outcome(run.returncode, run.stdout, run.stderr, expect == "refuse", csv_out)
    if result == "refused" and isinstance(check, str):
        result = "refused" if re.search(check, run.stderr) else "wrong-message"
    elif result == "answered" and callable(check):
        text = run.stdout + run.stderr if getattr(check, "wants_err", False) else run.stdout
        result = check(tmp, text) or result
    return result, seconds


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fuzz_edges import CLASSES
    from fuzz_library import CLASSES as MORE
    from fuzz_library import LIBRARY_CLASSES, run_library
    from fuzz_offerings import CLASSES as OFFERINGS
    from fuzz_offerings import LIBRARY_OFFERINGS, run_offerings_library
    from fuzz_sky import CLASSES as SKY
    from fuzz_sky import LIBRARY_SKY, run_sky_case, run_sky_library

    LIBRARY_CLASSES = {
        **LIBRARY_CLASSES,
        "library-offerings": LIBRARY_OFFERINGS,
        "library-sky": LIBRARY_SKY,
    }
    runners = {"library-offerings": run_offerings_library, "library-sky": run_sky_library}

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    every = ["issue-13", *CLASSES, *MORE, *LIBRARY_CLASSES, "writes", *OFFERINGS, *SKY]
    ap.add_argument("--classes", nargs="+", default=every, choices=every)
    args = ap.parse_args()
    counts, rows = {}, []
    if "writes" in args.classes:  # the write-rule probes: bench/fuzz/fuzz_writes.py
        from fuzz_writes import run_probes

        counts["writes"] = run_probes(args.repo)
    for cls in [c for c in args.classes if c in LIBRARY_CLASSES]:
        t0 = time.perf_counter()
        runner = runners.get(cls, run_library)
        found = runner(args.repo, LIBRARY_CLASSES[cls])
        seconds = (time.perf_counter() - t0) / max(1, len(found))
        for name, result in found.items():
            counts.setdefault(cls, Counter())[result] += 1
            rows.append(f"{cls:15s} {name:32s} {result:10s} {seconds:6.1f} s")
    cli_classes = [c for c in args.classes if c not in LIBRARY_CLASSES and c != "writes"]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (cls, name, argv, expect, check) in enumerate(_all_cases(Path(tmp), cli_classes)):
            limit = cls in OFFERINGS  # catalog classes: memory blow-ups counted, not suffered
            if cls in SKY:  # sky-plan classes: disk blow-ups and injections counted on every case
                result, seconds = run_sky_case(args.repo, argv, expect, check, Path(tmp), i)
            else:
                result, seconds = _run_case(args.repo, argv, expect, check, Path(tmp), limit)
            counts.setdefault(cls, Counter())[result] += 1
            rows.append(f"{cls:15s} {name:32s} {result:10s} {seconds:6.1f} s")
    print("\n".join(rows))
    for cls, c in counts.items():
        print(f"{cls:15s} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    total = sum(counts.values(), Counter())
    print("totals          " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))


if __name__ == "__main__":
    main()
