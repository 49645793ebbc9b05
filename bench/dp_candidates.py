"""N-GPU scaling: candidate model changes judged by a rule fixed before they were run.

The rule (``docs/amp_decision_rule.md``, round 6, committed before this was run): the primary score
is the mean over the left-out GPUs of each GPU's leave-one-GPU-out scaling MAPE on fitted rows
(each GPU weighs 1); a candidate is adopted only if it lowers it by >= 1.0 point, does not raise
the leave-one-source-out MAPE (row mean; 0.1-point tolerance) and keeps the leave-one-GPU-out
cross-fitted 80% coverage within 75-85%. Candidates: N2, a GPU without peer-to-peer keeps its own
PCIe link at half speed (gradients staged through host memory) instead of sharing the host's
links among the N GPUs. Held-out rows (VGG16, Inception-v3) are never fitted; their APE is
reported, never a criterion. Prints the table; ``--out`` writes it.

    .venv/bin/python bench/dp_candidates.py [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np
import pandas as pd
from _sections import emit, md_table

from profet_core.crossgpu import _dataparallel as dp
from profet_core.crossgpu._amp_validate import ape, summarize_logo
from profet_core.crossgpu._gpuref import gpu_table
from profet_core.crossgpu._published import load_published
from profet_core.inputs._gpu_specs import load_specs

_SHIPPED = dp.allreduce_s


def own_link_allreduce_s(params, n_gpus, gbs) -> np.ndarray:
    """N2: ring all-reduce time (s) where a GPU without peer-to-peer (negative ``gbs``, already
    half its link) keeps its own link (not divided among the N GPUs)."""
    g = np.abs(np.asarray(gbs, float))
    n = np.asarray(n_gpus, float)
    return 2.0 * (n - 1) / n * dp.GRAD_BYTES * np.asarray(params, float) / (g * 1e9)


@contextlib.contextmanager
def allreduce(fn):
    dp.allreduce_s = fn
    try:
        yield
    finally:
        dp.allreduce_s = _SHIPPED


def score(rows: pd.DataFrame) -> tuple[dict, pd.Series]:
    """The rule's numbers of the current ``allreduce_s``, and the per-GPU MAPE (%)."""
    by_gpu, by_src = dp.dp_logo(rows, "catalog_gpu"), dp.dp_logo(rows, "repo")
    s_gpu = summarize_logo(by_gpu, "catalog_gpu", "scaling", ["linear"]).set_index("catalog_gpu")
    s_src = summarize_logo(by_src, "repo", "scaling", ["linear"]).set_index("repo")
    per = s_gpu.drop(index="all")["mape"]
    held = by_gpu[by_gpu["held_out"]]
    out = {
        "P": float(per.mean()),
        "row_mape": float(s_gpu.loc["all", "mape"]),
        "loso": float(s_src.loc["all", "mape"]),
        "coverage": float(s_gpu.loc["all", "coverage_pct"]),
        "gpus_le_8": int((per <= 8).sum()),
        "held_out_ape": float(ape(held["pred"], held["scaling"]).mean()),
    }
    out["k1"] = dp.fit_dataparallel(rows[~rows["held_out"]])["k1"]
    return out, per


def report() -> str:
    t0 = time.time()
    rows = dp.scaling_rows(load_published(), gpu_table(load_specs()))
    base, per0 = score(rows)
    with allreduce(own_link_allreduce_s):
        n2, per2 = score(rows)
    ok = (
        n2["P"] <= base["P"] - 1.0
        and n2["loso"] <= base["loso"] + 0.1
        and 75.0 <= n2["coverage"] <= 85.0
    )
    table = pd.DataFrame(
        [
            {"candidate": "shipped (host links shared by the N GPUs)", **base, "adopted": "-"},
            {"candidate": "N2 own link at half speed", **n2, "adopted": "yes" if ok else "no"},
        ]
    )
    per = pd.DataFrame({"shipped": per0, "N2": per2}).reset_index(names="catalog_gpu")
    return "\n".join(
        [
            "## N-GPU scaling: candidate model changes against a rule fixed beforehand",
            "",
            __doc__.split("\n\n")[1].replace("\n", " "),
            "",
            "P: mean over left-out GPUs of leave-one-GPU-out MAPE (%); row_mape: over rows; loso:"
            " leave-one-source-out MAPE (%); coverage: cross-fitted 80% interval (%); k1: fitted"
            " on every fitted row; held_out_ape reported, never a criterion.",
            "",
            md_table(table, ".2f"),
            "",
            "Leave-one-GPU-out MAPE (%) per GPU:",
            "",
            md_table(per, ".2f"),
            "",
            f"Made by `python bench/dp_candidates.py` in {time.time() - t0:.0f} s.",
        ]
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    emit(report(), args.out)


if __name__ == "__main__":
    main()
