"""Predicting GPUs the data never measured: leave-one-GPU-out x leave-one-architecture-out.

For each of the 4 GPUs and each of the 12 CNNs, the cross-instance model is fitted on the other
3 GPUs' rows of the other 11 CNNs and predicts every pair involving the left-out GPU on the
left-out CNN, with the anchor latency: from specs only (k = 0) and after calibrating on the
k = 1 or 3 cheapest CNNs (median latency on the training GPUs) measured on the left-out GPU.
``measured`` rows: all 4 GPUs trained, the CNN left out (the per-pair default's setting).
Baselines on the same rows: FP32-peak ratio, bandwidth ratio, roofline mix (the anchor profile's
compute share moved by peak FLOPS, memory share by bandwidth, the rest unchanged). Interval
coverage is cross-fitted: each left-out GPU's rows use a half-width set on the other GPUs' rows.
Also validates the will-it-fit model. Prints the report (with --out, writes it there; about 1-2
minutes on 2 cores).

    .venv/bin/python bench/claims/crossgpu.py [--data ../shared/data/profet] [--out FILE]
        [--unbounded]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _sections import marked_tail, md_table

from profet_core import load_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.spec._memory import validate_fit
from profet_core.crossgpu.spec._pairs import MODEL_FAMILIES
from profet_core.crossgpu.spec._validate import (
    interval_log_quantiles,
    logo_runs,
    measured_runs,
    summarize_gpus,
)
from profet_core.inputs._gpu_specs import load_specs

ROOT = Path(__file__).resolve().parent.parent
COLS = {
    "mape_cross": "cross",
    "max_pair_cross": "cross worst pair",
    "mape_physical": "physical only",
    "mape_cross-nolat": "cross, no anchor latency",
    "mape_fp32-ratio": "FP32-ratio",
    "mape_bandwidth-ratio": "bandwidth-ratio",
    "mape_roofline": "roofline mix",
    "r2_cross": "R2 cross",
    "coverage_pct": "80% coverage",
}
REFERENCE = (
    "Reference, the per-pair default (hybrid) trained with all 4 GPUs, leave-one-architecture-"
    "out with the anchor latency (docs/accuracy.md): mean 9.6 %, worst pair 14.4 %; median-ratio "
    "baseline 24.9 % / 57.0 %."
)


def goals_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per basis/k/left-out GPU/direction with the headline columns, rounded."""
    t = summary.sort_values(["k", "left_out", "direction"], key=lambda s: s.astype(str))
    t = t[["basis", "k", "left_out", "direction", "rows", *COLS]].rename(columns=COLS)
    t["k"] = t["k"].replace(-1, "all")
    return t.round({c: 3 if c == "R2 cross" else 1 for c in COLS.values()})


def learned_table(medians: pd.DataFrame, specs: pd.DataFrame, params: dict) -> str:
    model = CrossInstanceModel(**params).fit_pairs(all_pairs(medians), specs)
    th = pd.DataFrame(model.theta_, columns=["peak TFLOPS", "bandwidth", "clock"])
    th.insert(0, "family", MODEL_FAMILIES)
    eta = pd.DataFrame(model.eta_, columns=["compute", "memory"]).round(3)
    eta.insert(0, "generation", model.generations_)
    return (
        "Exponents learned on all 4 GPUs (time ~ (anchor spec / target spec) ** exponent; "
        "prior: compute families 1 on peak FLOPS, memory families 1 on bandwidth, sd 0.5):\n\n"
        + md_table(th.round(3))
        + "\n\nGeneration efficiency (log time added; prior 0, sd 0.3; a generation never seen "
        "gets 0):\n\n" + md_table(eta)
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    ap.add_argument(
        "--out",
        help="write the report into this Markdown file, keeping the sections the published "
        "benches wrote (e.g. docs/crossgpu.md, a tracked doc: only to regenerate it); default: "
        "print only",
    )
    ap.add_argument(
        "--unbounded", action="store_true", help="let exponents leave [0, 1] (bounded=False)"
    )
    args = ap.parse_args(argv)
    params = {"bounded": not args.unbounded}
    start = time.time()
    specs = load_specs()
    medians = median_table(load_dataset(args.data))
    oof = pd.concat(
        [logo_runs(medians, specs, params=params), measured_runs(medians, specs, params=params)],
        ignore_index=True,
    )
    summary = summarize_gpus(oof)
    table = goals_table(summary)
    q = interval_log_quantiles(oof)
    qt = pd.DataFrame(
        {
            "basis": list(q),
            "log_half_width": [round(v, 3) for v in q.values()],
            "interval": [f"x{np.exp(-v):.2f} .. x{np.exp(v):.2f}" for v in q.values()],
        }
    )
    text = "\n\n".join(
        [
            "# Cross-instance accuracy (leave-one-GPU-out x leave-one-architecture-out)",
            __doc__.split("\n\n")[1].replace("\n", " "),
            "MAPE in %: per anchor -> target pair, then the mean over the pairs (`both`: the 6 "
            "pairs involving the left-out GPU; `to`/`from`: the 3 with it as target/anchor; "
            "`all`: every pair of every left-out GPU). `cross worst pair`: the worst pair's "
            "MAPE. Medians over the 9 repetitions.",
            REFERENCE,
            md_table(table),
            "80% interval half-widths per basis (|log error| quantile over all these runs; "
            "shipped with the model via `with_intervals`):",
            md_table(qt),
            learned_table(medians, specs, params),
            "## Will it fit? (leave-one-architecture-out)\n\nA workload measured on some "
            "instance but absent on another counts as not fitting there. Logistic P(fits) from "
            "log(anchor latency x anchor peak FLOPS), log(batch x input^2) and log(target "
            "memory); `brier_base_rate`: always predicting the training share of fits.",
            md_table(validate_fit(medians, specs).round(3)),
            f"Made by `python bench/claims/crossgpu.py{' --unbounded' if args.unbounded else ''}` in "
            f"{time.time() - start:.0f} s; model parameters {params}.",
        ]
    )
    # Keep the sections bench/claims/published.py and bench/studies/published_structures.py write.
    if args.out:
        kept = marked_tail(args.out)
        Path(args.out).write_text(text + "\n" + ("\n" + kept if kept else ""))
    print(text)


if __name__ == "__main__":
    main()
