"""Per-architecture efficiencies (A) and the in-house H200 rows as a source (B): the scores of
docs/arch_efficiency_rule.md for main, A, B and A+B.

FP32 speed-up MAPE over the published pairs of main (fitted rows only), one GPU left out (pooled
and mean over GPUs) and one source document left out; the cross-fitted coverage of the
``published`` and ``specs only`` bases; the in-house pairs' own out-of-fold MAPE (not a criterion);
held-out VGG16 / Inception-v3 APE (not a criterion). AMP gain and N-GPU scaling are not touched by
either candidate (their fits read neither ``published_eta_`` nor these pairs):
``python bench/claims/amp_multigpu.py`` before and after shows it. About 2-3 minutes on 2 cores.

    .venv/bin/python bench/studies/arch_efficiency.py [--data ../shared/data/profet]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))  # _variants.py beside this script

from _variants import published_and_inhouse_pairs

from profet_core import load_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.spec._holdout import (
    basis_frames,
    published_logo,
    summarize_published,
)
from profet_core.crossgpu.spec._published import load_published, published_pairs
from profet_core.inputs._gpu_specs import load_specs

VARIANTS = {"main": (False, False), "A": (True, False), "B": (False, True), "A+B": (True, True)}


def _mape(part: pd.DataFrame) -> float:
    return float(np.mean(np.abs(part["cross"] / part["speedup"] - 1)) * 100)


def scores(base, pairs: pd.DataFrame, common: np.ndarray) -> dict:
    """The rule's scores on ``pairs`` (``common``: the main variant's fitted pairs' index)."""
    gpu = published_logo(base, pairs)
    src = published_logo(base, pairs, "document")
    summary = summarize_published(gpu, basis_frames(base, pairs))
    cov = summary[summary["scope"] == "basis"].set_index("group")["coverage_pct"]
    g = gpu.loc[gpu.index.isin(common)]
    s = src.loc[src.index.isin(common)]
    new = gpu[~gpu.index.isin(common) & ~gpu["held_out"]]
    held = gpu[gpu["held_out"]]
    return {
        "pairs fitted": int((~pairs["held_out"]).sum()),
        "1 LOGO pooled %": _mape(g),
        "1 LOGO mean over GPUs %": float(g.groupby("left_out").apply(_mape).mean()),
        "2 LOSO pooled %": _mape(s),
        "4 coverage published %": float(cov.get("published", np.nan)),
        "4 coverage specs only %": float(cov.get("specs only", np.nan)),
        "in-house H200 pairs LOGO % (not a criterion)": _mape(new) if len(new) else np.nan,
        "held-out APE mean % (not a criterion)": _mape(held),
    }, g.groupby("left_out").apply(_mape)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/profet")
    args = ap.parse_args(argv)
    t0 = time.time()
    medians = median_table(load_dataset(args.data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    plain = published_pairs(load_published(), specs, medians)
    common = plain.index[~plain["held_out"]].to_numpy()
    cols, per_gpu = {}, {}
    for name, (arch, inhouse) in VARIANTS.items():
        base.set_params(share_arch=arch)  # every fit below reads the variant from the model
        source = published_and_inhouse_pairs if inhouse else published_pairs
        pairs = source(load_published(), specs, medians)
        cols[name], per_gpu[name] = scores(base, pairs, common)
    pd.set_option("display.width", 200)
    print(pd.DataFrame(cols).round(3).to_string())
    print("\nLeave-one-GPU-out MAPE per left-out GPU (%), main's fitted pairs:")
    print(pd.DataFrame(per_gpu).round(2).to_string())
    print(f"\nMade by `python bench/studies/arch_efficiency.py` in {time.time() - t0:.0f} s.")


if __name__ == "__main__":
    main()
