"""Measure device busy time / batch latency on the shared PROFET data (for profet_core.inputs._sanity).

Device busy time is the sum of every ``Device_*`` op column except ``Device_IDLE`` (us); the
latency is the measured median step time (``batch_latency_s``). One ratio per
(exp, instance, model, input_size, batch_size). Prints its quantiles, per instance too.

    python bench/studies/ratio_range.py [DATA_DIR]   # default $PROFET_DATA or ../shared/data/profet
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

KEY = ["exp", "instance", "model", "input_size", "batch_size"]
QS = (0.0, 0.005, 0.01, 0.05, 0.5, 0.95, 0.99, 0.995, 1.0)


def ratios(data: Path) -> pd.DataFrame:
    """Each workload's device busy time (us) and its ratio to the measured batch latency."""
    prof = pd.read_parquet(data / "profiles.parquet")
    lat = pd.read_parquet(data / "latencies.parquet")
    dev = [c for c in prof.columns if c.startswith("Device_") and c != "Device_IDLE"]
    prof = prof.assign(busy_us=prof[dev].sum(axis=1))[KEY + ["busy_us"]]
    df = prof.merge(lat[KEY + ["batch_latency_s"]], on=KEY, how="inner")
    return df.assign(ratio=df["busy_us"] / (df["batch_latency_s"] * 1e6))


def main(argv: list[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    default = os.environ.get("PROFET_DATA", root.parent / "shared" / "data" / "profet")
    data = Path(argv[0] if argv else default)
    df = ratios(data)
    print(f"{len(df)} workloads (profile joined to its own instance's latency)")
    qs = np.quantile(df["ratio"], QS)
    print("device busy time / batch latency, quantiles " + " ".join(f"q{q:g}" for q in QS))
    print("  all: " + " ".join(f"{v:.3f}" for v in qs))
    for inst, part in df.groupby("instance"):
        qi = np.quantile(part["ratio"], QS)
        print(f"  {inst}: " + " ".join(f"{v:.3f}" for v in qi) + f"  (n={len(part)})")
    print(f"device busy time (us): min {df['busy_us'].min():.0f}, max {df['busy_us'].max():.0f}")
    zero = (df["busy_us"] <= 0).sum()
    print(f"rows with no device busy time: {zero}")


if __name__ == "__main__":
    main(sys.argv[1:])
