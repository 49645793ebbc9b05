"""One-point scaler accuracy: leave-one-architecture-out on the shared data, per instance.

Prints, per dimension and target instance, the mean absolute % error of the latency at every
other size predicted from one latency, for the one-point scaler (with and without the anchor
profile) and the three baselines (linear in the work, the median training ratio per instance,
PROFET's quadratic through the one point); then the interval coverage per dimension.

    python bench/claims/onepoint.py [--data ../shared/data/profet]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from profet_core import load_dataset
from profet_core.onepoint import cross_validate_one_point, summarize_one_point
from profet_core.onepoint._validate import interval_table


def _coverage(oof: pd.DataFrame) -> pd.DataFrame:
    """Nested check of the intervals: quantiles from 11 CNNs' errors, scored on the 12th."""
    rows = []
    oof = oof.assign(step=np.ceil(np.abs(np.log2(oof["s1"] / oof["s0"])) - 1e-9).clip(1))
    for (_, arch), part in oof.groupby(["by", "model"]):
        rest = oof[(oof["by"] == part["by"].iloc[0]) & (oof["model"] != arch)]
        t = part.merge(interval_table(rest, "profile"), on=["target", "step"])
        r = t["y"] - t["profile"]
        rows.append(t.assign(inside=(r >= t["q_lo"]) & (r <= t["q_hi"])))
    both = pd.concat(rows)
    return both.groupby(["by", "target"])["inside"].mean().mul(100).round(1).unstack()


def _affine_ceiling(oof: pd.DataFrame) -> pd.Series:
    """Error of the best curve of the form ``L0 (phi + (1 - phi) (s1/s0)^p)`` (a fixed overhead
    plus work-proportional time) fitted to each held-out curve itself: what a perfect guess of
    one number per curve, its overhead share ``phi``, would reach."""
    from scipy.optimize import minimize_scalar

    power = {"batch": 1.0, "input": 2.0}
    rows = oof.drop_duplicates(["by", "target", "model", "other", "s0", "s1"])
    out = {}
    for by, part in rows.groupby("by"):
        apes = []
        for _, g in part.groupby(["target", "model", "other", "s0"]):
            r = (g["s1"] / g["s0"]).to_numpy() ** power[by]
            y = g["y"].to_numpy()

            def loss(phi, r=r, y=y):
                return np.sum((np.log(np.maximum(phi + (1 - phi) * r, 1e-9)) - y) ** 2)

            phi = minimize_scalar(loss, bounds=(-0.5, 0.999), method="bounded").x
            apes.append(np.abs((phi + (1 - phi) * r) / np.exp(y) - 1))
        out[by] = 100 * float(np.concatenate(apes).mean())
    return pd.Series(out, name="mape_pct")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/profet")
    args = ap.parse_args()
    dataset = load_dataset(args.data)
    t0 = time.perf_counter()
    oof = pd.concat(
        [cross_validate_one_point(dataset, by) for by in ("batch", "input")], ignore_index=True
    )
    took = time.perf_counter() - t0
    table = summarize_one_point(oof)
    pd.set_option("display.width", 200)
    for metric in ("mape_pct", "median_ape_pct", "mape_1step_pct"):
        print(f"\n{metric} (leave-one-architecture-out, one given point, every other size)")
        wide = table.pivot_table(index=["by", "variant"], columns="instance", values=metric)
        print(wide.round(1).to_string())
    print("\n80% interval coverage of the profile variant, % (nested leave-one-architecture-out)")
    print(_coverage(oof).to_string())
    ape = 100 * np.abs(np.exp(oof["profile"] - oof["y"]) - 1)
    per_arch = ape.groupby([oof["by"], oof["model"]]).mean().unstack(0).round(1)
    print("\nprofile variant: MAPE % per left-out architecture (mean over instances)")
    print(per_arch.to_string())
    print("\nceiling of the curve family: overhead share fitted to each held-out curve itself")
    print(_affine_ceiling(oof).round(1).to_string())
    print(f"\nvalidation took {took:.0f} s")


if __name__ == "__main__":
    main()
