"""Speed benchmark: prints the time of `profet predict` as a process, in-process predictions per
second on a 1,000-row table, and (with --train) the time of `profet train`.

    .venv/bin/python bench/speed.py [--artifacts artifacts] [--train --data ../shared/data/profet]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from profet_core import load_artifacts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--artifacts", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--train", action="store_true", help="also time `profet train` (minutes)")
    ap.add_argument("--data", default="../shared/data/profet")
    args = ap.parse_args()

    t0 = time.perf_counter()
    pred = load_artifacts(args.artifacts)
    load_s = time.perf_counter() - t0
    anchor = pred.instances[0]
    example = pred.examples[anchor]
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "p.json"
        prof.write_text(json.dumps([example["profile"]]))
        cmd = [
            sys.executable,
            "-m",
            "profet_core",
            "predict",
            "--anchor",
            anchor,
            "--profile",
            str(prof),
            "--anchor-latency-ms",
            str(1000 * example["batch_latency_s"]),
        ]
        if args.artifacts:
            cmd += ["--artifacts", args.artifacts]
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
    print(f"load_artifacts (in process):           {load_s:.2f} s")
    print(
        f"`profet predict`, one profile, process: median {statistics.median(times):.2f} s "
        f"(min {min(times):.2f}, n={len(times)})"
    )

    rng = np.random.default_rng(0)
    base = pd.DataFrame([example["profile"]])
    table = pd.concat([base] * 1000, ignore_index=True) * rng.uniform(0.5, 2.0, size=(1000, 1))
    lat = example["batch_latency_s"] * rng.uniform(0.5, 2.0, size=1000)
    for method in pred.methods:
        for with_lat in (True, False):
            best = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                pred.predict(
                    anchor, table, anchor_latency_s=lat if with_lat else None, method=method
                )
                best = min(best, time.perf_counter() - t0)
            n = 1000 * len(pred.targets(anchor))
            print(
                f"in-process, 1,000-row table, method {method:>8}, latency {'given' if with_lat else 'absent'}: "
                f"{best:.3f} s -> {n / best:,.0f} predictions/s ({len(pred.targets(anchor))} targets/row)"
            )

    if args.train:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "profet_core",
                    "train",
                    "--data",
                    args.data,
                    "--out",
                    str(Path(tmp) / "art"),
                ],
                check=True,
            )
            print(
                f"`profet train` (all methods, calibration included): {time.perf_counter() - t0:.0f} s"
            )


if __name__ == "__main__":
    main()
