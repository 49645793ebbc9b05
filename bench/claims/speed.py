"""Speed benchmark of prediction (the goals: predictions in milliseconds), printed as a table.

- `profet predict` of one profile as a whole process, against `python -c "import pandas"`;
- one profile predicted in process on every target (ms);
- a 1,000-row table in process (predictions per second);
- `profet predict` on a 100,000-row CSV as a process (seconds and peak memory), CSV and JSON;
- with --train, `profet train` (minutes).

    .venv/bin/python bench/claims/speed.py [--artifacts artifacts] [--repeats 5] [--train]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from profet_core import load_artifacts


def _process(cmd, repeats: int) -> tuple[float, float]:
    """Median wall time (s) and peak resident memory (MB) of running ``cmd``."""
    times, peak = [], 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = subprocess.run(
            ["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True, check=False
        )
        times.append(time.perf_counter() - t0)
        if out.returncode != 0:
            raise SystemExit(f"{cmd[:4]} failed: {out.stderr[-500:]}")
        peak = max(peak, float(out.stderr.strip().splitlines()[-1]) / 1024)
    return statistics.median(times), peak


def _table(example: dict, n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = pd.DataFrame([example["profile"]])
    # Whole microseconds, as the profiler reports them: 100,000 rows stay under the 50 MB limit.
    table = (pd.concat([base] * n, ignore_index=True) * rng.uniform(0.5, 2.0, size=(n, 1))).round()
    lat = example["batch_latency_s"] * rng.uniform(0.5, 2.0, n)
    return table.assign(batch_latency_s=lat.round(6))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--artifacts", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--train", action="store_true", help="also time `profet train` (minutes)")
    ap.add_argument("--data", default="../shared/data/profet")
    args = ap.parse_args()

    pred = load_artifacts(args.artifacts)
    anchor = pred.instances[0]
    example = pred.examples[anchor]
    art = ["--artifacts", args.artifacts] if args.artifacts else []
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "p.json"
        prof.write_text(json.dumps([example["profile"]]))
        lat_ms = str(1000 * example["batch_latency_s"])
        one = [py, "-m", "profet_core", "predict", "--anchor", anchor, "--profile", str(prof)]
        t_pd, _ = _process([py, "-c", "import pandas"], args.repeats)
        t_one, m_one = _process([*one, "--anchor-latency-ms", lat_ms, *art], args.repeats)
        rows += [
            ("python -c 'import pandas' (process)", f"{t_pd:.2f} s", ""),
            ("profet predict, one profile (process)", f"{t_one:.2f} s", f"{m_one:.0f} MB"),
            ("  ratio to import pandas (goal <= 1.5)", f"{t_one / t_pd:.2f}x", ""),
        ]
        big = Path(tmp) / "big.csv"
        _table(example, 100_000).to_csv(big, index=False)
        for fmt in ("csv", "json"):
            cmd = [py, "-m", "profet_core", "predict", "--anchor", anchor, "--profile", str(big)]
            t, m = _process([*cmd, "--format", fmt, *art], 1)
            rows.append(
                (f"profet predict, 100,000-row CSV, --format {fmt}", f"{t:.1f} s", f"{m:.0f} MB")
            )

    one_row = pd.DataFrame([example["profile"]])
    best = min(
        _timed(lambda: pred.predict(anchor, one_row, anchor_latency_s=example["batch_latency_s"]))
        for _ in range(20)
    )
    rows.append(
        ("one profile in process, all targets (goal <= 15 ms)", f"{1000 * best:.1f} ms", "")
    )
    table = _table(example, 1000)
    n_targets = len(pred.targets(anchor))
    for method in pred.methods:
        for with_lat in (True, False):
            t = table if with_lat else table.drop(columns="batch_latency_s")
            best = min(
                _timed(lambda t=t, m=method: pred.predict(anchor, t, method=m)) for _ in range(3)
            )
            label = f"1,000 rows in process, {method}, latency {'given' if with_lat else 'absent'}"
            rows.append((label, f"{1000 * n_targets / best:,.0f} predictions/s", ""))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows.append(("this process's peak memory", f"{peak:.0f} MB", ""))

    if args.train:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            cmd = [py, "-m", "profet_core", "train", "--data", args.data, "--out", f"{tmp}/art"]
            subprocess.run(cmd, check=True)
            rows.append(
                ("profet train (all methods, calibration)", f"{time.perf_counter() - t0:.0f} s", "")
            )
    print(
        pd.DataFrame(rows, columns=["what", "time or rate", "peak memory"]).to_string(index=False)
    )


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
