"""Time `profet collect` per workload on this machine and list op types the shared data lacks.

    python bench/studies/capture_cpu.py OUT_DIR [--data ../shared/data/profet]

Runs a few `--quick` workloads and a few default-grid workloads (a sample; extrapolate from the
per-workload seconds it prints), then compares the captured op types with the shared data's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from profet_core.capture._collect import collect

QUICK = {"models": ["LeNet5", "ResNet18", "MobileNetV2"], "input_sizes": [32], "batch_sizes": [32]}
FULL = {"models": ["LeNet5", "ResNetSmall"], "input_sizes": [224], "batch_sizes": [64]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--data", default="../shared/data/profet")
    args = p.parse_args()
    for name, grid, quick in (("quick", QUICK, True), ("full", FULL, False)):
        out = args.out / name
        t = time.monotonic()
        s = collect("cpu-bench", out, quick=quick, progress=False, **grid)
        status = pd.read_csv(out / "status.csv")
        print(f"{name}: {s.ok} ok, {s.failed} failed in {time.monotonic() - t:.0f}s")
        print(status[["model", "input_size", "batch_size", "status", "seconds"]].to_string())
    prof = pd.concat(
        [pd.read_parquet(args.out / n / "profiles.parquet") for n in ("quick", "full")]
    )
    lat = pd.concat(
        [pd.read_parquet(args.out / n / "latencies.parquet") for n in ("quick", "full")]
    )
    ops = [c for c in prof.columns if c.startswith(("Host_", "Device_"))]
    for row, lt in zip(prof.itertuples(index=False), lat.itertuples(index=False), strict=True):
        r = row._asdict()
        busy = sum(r[c] for c in ops if not c.endswith("IDLE")) / 1e6
        n = sum(r[c] > 0 for c in ops)
        print(
            f"{r['model']} {r['input_size']}px b{r['batch_size']}: {n} ops, "
            f"host busy {busy * 1e3:.1f} ms / 2 steps, idle {r.get('Host_IDLE', 0) / 1e3:.1f} ms, "
            f"device {sum(r[c] for c in ops if c.startswith('Device_')) / 1e3:.1f} ms, "
            f"latency {lt.batch_latency_s * 1e3:.1f} ms"
        )
    shared = Path(args.data) / "profiles.parquet"
    if not shared.is_file():
        sys.exit(f"no shared data at {shared}")
    old = {c.split("_", 1)[1] for c in pd.read_parquet(shared).columns if "_" in c}
    new = {c.split("_", 1)[1] for c in ops if (prof[c] > 0).any()}
    print("op types captured here but never in the shared data:", sorted(new - old))
    print("op types shared by both:", sorted(new & old))


if __name__ == "__main__":
    main()
