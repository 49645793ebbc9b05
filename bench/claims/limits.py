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

    .venv/bin/python bench/claims/limits.py [--data ../shared/data/profet]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.ensemble import ExtraTreesRegressor

from profet_core import load_dataset, make_pairs
from profet_core._schema import PAIR_KEY, op_columns
from profet_core.features._profile_features import profile_features
from profet_core.models._curve_scaler import SCALER_VARIANTS
from profet_core.training._cross_validate import validate_scalers

KEY = [c for c in PAIR_KEY if c != "exp"]


def _learner() -> ExtraTreesRegressor:
    return ExtraTreesRegressor(
        n_estimators=100, min_samples_leaf=2, max_features=0.5, random_state=0, n_jobs=-1
    )


def predictor_ceiling(dataset) -> pd.DataFrame:
    """Per pair: LOAO MAPE % with the anchor profile, and with the target's profile added."""
    rows = []
    for anchor in dataset.instances:
        for target in dataset.instances:
            if anchor == target:
                continue
            pairs = make_pairs(dataset, anchor, target)
            prof_t = dataset.profiles[dataset.profiles["instance"] == target].drop(
                columns="instance"
            )
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


def scaler_ceiling(latencies: pd.DataFrame) -> pd.DataFrame:
    """Per dimension and instance: interior MAPE % of the default scaler (linear in the work)."""
    med = (
        latencies.groupby(["instance", "model", "input_size", "batch_size"], as_index=False)[
            "batch_latency_s"
        ]
        .median()
        .assign(exp="median")
    )
    default = {"default": SCALER_VARIANTS["default"]}
    one, noiseless = (
        validate_scalers(d, default).set_index(["by", "instance"]) for d in (latencies, med)
    )
    return pd.DataFrame(
        {
            "two ends, one run": one["mape_pct"],
            "two ends, median of runs": noiseless["mape_pct"],
            "three sizes, one run": one["mape_3pt_pct"],
        }
    ).reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", default="../shared/data/profet")
    args = ap.parse_args()
    dataset = load_dataset(args.data)
    t0 = time.perf_counter()
    print("## Predictor, leave-one-architecture-out MAPE % with the anchor latency (extra trees)\n")
    print(predictor_ceiling(dataset).round(2).to_string(index=False))
    print(
        "\n## Scaler, MAPE % at the sizes between the given ones (linear in batch size / pixel count)\n"
    )
    print(scaler_ceiling(dataset.latencies).round(2).to_string(index=False))
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
