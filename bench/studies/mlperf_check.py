"""MLPerf Training ResNet-50 on one node against the shipped model: the
cross-GPU AMP ratios at the same GPU count and the same code.

The rows (set M of docs/four_sources_rule.md, ``published_check.csv``; built by
``profet_core/data/build/mlcommons_resnet.py``) are one-node MLPerf Training v3.0-v4.0 ResNet-50
runs of NVIDIA's MXNet implementation: FP16 (AMP) NHWC, DALI, real ImageNet, LARS; each run a
time-to-train run whose per-epoch training throughput (evaluation excluded) is read. They form no
pair of the fitted models and inform only this check.

Per GPU count N: per-GPU images/s of each GPU (median over its systems), and the ratio of each
GPU to the count's reference GPU (H100 SXM5 where measured at N, else the GPU with the most
systems). The shipped model's predicted ratio is the one-GPU AMP step ratio of the data's
ResNet-50 profile (224 px, batch 64; median over the four anchors;
``bench/claims/amp_hopper_blackwell.steps``), and the FP32 one beside it. ``miss``: predicted /
measured - 1. The setup differences of each row against the model's answer are said: MLPerf's
per-GPU batch (110-816) against the profile's 64, NHWC FP16 with DALI against a TensorFlow FP32
profile moved to AMP, and N GPUs against one (the data-parallel factor is taken as the same for
the two GPUs of a ratio: both run the same all-reduce, ResNet-50's gradients overlap its backward
pass; PCIe against SXM servers is said per row).

    python bench/studies/mlperf_check.py [--data ../shared/data/profet] [--artifacts DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench" / "claims")]

import amp_hopper_blackwell as ahb  # noqa: E402

from profet_core import load_artifacts  # noqa: E402
from profet_core.crossgpu.spec._published import load_published  # noqa: E402

CHECK = ROOT / "profet_core" / "data" / "published_check.csv"
REFERENCE = "NVIDIA H100 SXM5 80GB"


def mlperf_rows() -> pd.DataFrame:
    """Set M's rows with the GPU's name (catalog GPU, else as published), per-GPU images/s and
    the round."""
    t = load_published(CHECK)
    t = t[t["source"].str.startswith("mlcommons/training_results_v")].copy()
    # a GPU without a catalog line is named by its variant note ("A30 24GB PCIe: no catalog GPU")
    named = t["variant_note"].str.split(":").str[0]
    t["gpu"] = t["catalog_gpu"].where(t["catalog_gpu"] != "", named)
    t["gpu_count"] = t["gpu_count"].astype(int)
    t["per_gpu"] = t["images_per_s"] / t["gpu_count"]
    t["round"] = t["source"].str.extract(r"_v(\d\.\d)@", expand=False)
    t["pcie"] = t["gpu_published"].str.contains("PCIe|PCIE|L40|L4|A10G|A30|A40|A5000", regex=True)
    return t


def per_count(t: pd.DataFrame) -> pd.DataFrame:
    """Per GPU count and GPU: systems, per-GPU images/s (median, range), batch range, rounds."""
    g = t.groupby(["gpu_count", "gpu", "catalog_gpu"])
    out = g.agg(
        systems=("per_gpu", "size"),
        per_gpu=("per_gpu", "median"),
        lo=("per_gpu", "min"),
        hi=("per_gpu", "max"),
        batch_lo=("batch_size", "min"),
        batch_hi=("batch_size", "max"),
        pcie=("pcie", "first"),
        rounds=("round", lambda r: ",".join(sorted(set(r)))),
    )
    return out.reset_index()


def ratios(pc: pd.DataFrame, pred: pd.DataFrame) -> pd.DataFrame:
    """Each GPU against its count's reference: measured and predicted ratios and the misses."""
    step = pred.groupby("catalog_gpu")[["fp32_ms", "amp_ms"]].median()
    rows = []
    eight = pc[(pc["gpu_count"] == 8) & (pc["gpu"] == REFERENCE)].set_index("gpu")
    for n, grp in pc.groupby("gpu_count"):
        cat = grp[grp["catalog_gpu"] != ""]
        if len(grp) < 2:  # no other GPU at this count: against the H100 SXM5 on 8 GPUs
            ref, r = REFERENCE, eight.loc[REFERENCE]
        else:
            top = cat.nlargest(1, "systems")["gpu"].iloc[0]
            ref = REFERENCE if REFERENCE in set(grp["gpu"]) else top
            r = grp.set_index("gpu").loc[ref]
        for g in grp.itertuples(index=False):
            if g.gpu == ref:
                continue
            known = g.catalog_gpu in step.index and ref in step.index
            amp = step.loc[ref, "amp_ms"] / step.loc[g.catalog_gpu, "amp_ms"] if known else np.nan
            fp = step.loc[ref, "fp32_ms"] / step.loc[g.catalog_gpu, "fp32_ms"] if known else np.nan
            meas = g.per_gpu / r["per_gpu"]
            rows.append(
                {
                    "N": n,
                    "gpu": g.gpu,
                    "vs": ref if r["gpu_count"] == n else f"{ref} on {r['gpu_count']} GPUs",
                    "systems": f"{g.systems} / {r['systems']}",
                    "measured": meas,
                    "pred AMP": amp,
                    "miss AMP %": 100 * (amp / meas - 1),
                    "pred FP32": fp,
                    "setup": (
                        f"batch/GPU {g.batch_lo}-{g.batch_hi} vs {r['batch_lo']}-{r['batch_hi']} "
                        f"(profile 64); {'PCIe' if g.pcie else 'SXM'} vs "
                        f"{'PCIe' if r['pcie'] else 'SXM'}; rounds {g.rounds}"
                    ),
                }
            )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    ap.add_argument("--artifacts", default=None)
    args = ap.parse_args(argv)
    t0 = time.time()
    t = mlperf_rows()
    pc = per_count(t)
    predictor = load_artifacts(args.artifacts)
    gpus = sorted({g for g in pc["catalog_gpu"] if g} | {REFERENCE})
    pred = ahb.steps(predictor, Path(args.data), gpus)
    out = ratios(pc, pred)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(f"MLPerf one-node ResNet-50 rows: {len(t)} systems, per GPU count and GPU:")
        print(pc.round(0).to_string(index=False))
        print(
            "\nPer-GPU throughput ratio to the count's reference GPU: measured (MLPerf, FP16 NHWC"
        )
        print("MXNet) vs the shipped model's one-GPU AMP and FP32 step ratios (ResNet-50 profile):")
        print(out.round(3).to_string(index=False))
    known = out.dropna(subset=["pred AMP"])
    ape = (known["miss AMP %"]).abs()
    print(
        f"\nAMP ratio miss over {len(known)} GPU/count rows with a catalog GPU: mean |miss| "
        f"{ape.mean():.1f} %, median {ape.median():.1f} %; predicted above measured in "
        f"{int((known['miss AMP %'] > 0).sum())} of {len(known)}."
    )
    for gpu, grp in known.groupby("gpu"):
        print(
            f"  {gpu}: miss {', '.join(f'{m:+.0f}% (N={n})' for n, m in zip(grp['N'], grp['miss AMP %'], strict=True))}"
        )
    print(f"\nMade by `python bench/studies/mlperf_check.py` in {time.time() - t0:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
