"""How accurate could any predictor be on this data? Prints leave-one-architecture-out ceilings.

Predictor: the same learner as the default's extra-trees member (log target/anchor latency ratio
from ``profile_features``), on the median of the repetitions of each workload, once on the
anchor's profile as in the product and once also given the *target's own measured profile*, which
no real prediction has. If knowing the target's profile barely helps, the remaining error is not
in the profiles.

Scaler: error at the sizes strictly between the two given ends (as docs/accuracy.md) of
interpolation linear in the work (batch size, or pixel count) on single runs and on the median
of the repetitions (noise removed), and of piecewise-linear interpolation given a third measured
size in the middle.

    .venv/bin/python bench/limits.py [--data ../shared/data/profet]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.ensemble import ExtraTreesRegressor

from profet_core import load_dataset, make_pairs
from profet_core._data import PAIR_KEY, op_columns
from profet_core._methods import profile_features
from profet_core._scaler import DIMENSIONS, scaling_curves

KEY = [c for c in PAIR_KEY if c != "exp"]


def _learner() -> ExtraTreesRegressor:
    return ExtraTreesRegressor(n_estimators=100, min_samples_leaf=2, max_features=0.5, random_state=0, n_jobs=-1)


def predictor_ceiling(dataset) -> pd.DataFrame:
    """Per pair: LOAO MAPE % with the anchor profile, and with the target's profile added."""
    rows = []
    for anchor in dataset.instances:
        for target in dataset.instances:
            if anchor == target:
                continue
            pairs = make_pairs(dataset, anchor, target)
            prof_t = dataset.profiles[dataset.profiles["instance"] == target].drop(columns="instance")
            ops = op_columns(pairs.columns)
            both = pairs.merge(prof_t, on=list(PAIR_KEY), suffixes=("", "__t"))
            cols = [c for c in both.columns if c not in PAIR_KEY]
            med = both.groupby(KEY)[cols].median()
            agg = pd.concat([med.index.to_frame(index=False), med.reset_index(drop=True)], axis=1)
            X_a, _ = profile_features(agg[ops], agg["anchor_latency_s"])
            X_t, _ = profile_features(agg[[f"{c}__t" for c in ops]].set_axis(ops, axis=1))
            X_o = pd.concat([X_a, X_t.add_prefix("target_")], axis=1)
            y = np.log(agg["target_latency_s"] / agg["anchor_latency_s"]).to_numpy()
            out = {}
            for name, X in (("anchor profile", X_a), ("+ target's own profile", X_o)):
                pred = np.empty(len(agg))
                for arch in agg["model"].unique():
                    test = (agg["model"] == arch).to_numpy()
                    pred[test] = _learner().fit(X[~test], y[~test]).predict(X[test])
                truth = agg["target_latency_s"].to_numpy()
                p = agg["anchor_latency_s"].to_numpy() * np.exp(pred)
                out[name] = 100 * float(np.mean(np.abs(p - truth) / truth))
            rows.append({"pair": f"{anchor} -> {target}", **out})
    t = pd.DataFrame(rows)
    t.loc[len(t)] = {"pair": "mean", **t.drop(columns="pair").mean()}
    return t


def _interior_mape(curves: pd.DataFrame, by: str) -> pd.Series:
    size_col, _ = DIMENSIONS[by]
    power = 2.0 if by == "input" else 1.0
    lo, hi = curves["size"].min(), curves["size"].max()
    inner = curves[~curves["size"].isin([lo, hi])]
    x = (inner["size"] ** power - lo**power) / (hi**power - lo**power)
    pred = inner["lat_lo_s"] + x * (inner["lat_hi_s"] - inner["lat_lo_s"])
    ape = 100 * (pred - inner["latency_s"]).abs() / inner["latency_s"]
    return ape.groupby(inner["instance"]).mean()


def _three_point_mape(latencies: pd.DataFrame, by: str) -> pd.Series:
    size_col, group = DIMENSIONS[by]
    power = 2.0 if by == "input" else 1.0
    wide = latencies.pivot_table(index=group, columns=size_col, values="batch_latency_s").dropna()
    sizes = sorted(wide.columns)
    given = [sizes[0], sizes[len(sizes) // 2], sizes[-1]]
    test = [s for s in sizes if s not in given]
    g = np.asarray(given, dtype=float) ** power
    apes = []
    for s in test:
        pred = np.array([np.interp(s**power, g, row) for row in wide[given].to_numpy()])
        apes.append(100 * np.abs(pred - wide[s].to_numpy()) / wide[s].to_numpy())
    return pd.Series(np.mean(apes, axis=0), index=wide.index).groupby(level="instance").mean()


def scaler_ceiling(latencies: pd.DataFrame) -> pd.DataFrame:
    """Per dimension and instance: interior MAPE % of the interpolants described above."""
    med = (latencies.groupby(["instance", "model", "input_size", "batch_size"], as_index=False)
           ["batch_latency_s"].median().assign(exp="median"))
    parts = []
    for by in ("batch", "input"):
        parts.append(pd.DataFrame({
            "by": by,
            "two ends, one run": _interior_mape(scaling_curves(latencies, by), by),
            "two ends, median of runs": _interior_mape(scaling_curves(med, by), by),
            "three sizes, one run": _three_point_mape(latencies, by),
        }))
    return pd.concat(parts).reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data/profet")
    args = ap.parse_args()
    dataset = load_dataset(args.data)
    t0 = time.perf_counter()
    print("## Predictor, leave-one-architecture-out MAPE % with the anchor latency (extra trees)\n")
    print(predictor_ceiling(dataset).round(2).to_string(index=False))
    print("\n## Scaler, MAPE % at the sizes between the given ones (linear in batch size / pixel count)\n")
    print(scaler_ceiling(dataset.latencies).round(2).to_string(index=False))
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
