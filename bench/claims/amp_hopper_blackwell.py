"""The shipped AMP model against the measured AMP gains of Hopper, Blackwell and the GPUs before
them, side by side.

Measured, one GPU, AMP images/s over FP32-mode (TF32) images/s of the same host:

- Lambda's PyTorch tables (lambdal/deeplearning-benchmark, NVIDIA DeepLearningExamples' scripts,
  synthetic data, the AMP batch twice the FP32 batch): v1 rows of ``published.csv`` and the v1/v2
  rows the builders put in ``published_check.csv`` (ResNet-50 and SSD300; median and range over
  the hosts of a GPU);
- the in-house rows (``inhouse_torch.csv``: eager PyTorch, NCHW, the same batch for both
  precisions; FP16 AMP over TF32) of ResNet-50 on the H100 SXM5 and the H200 at batch 128 (the
  least host-bound) and 64.

Predicted: the shipped model's AMP gain (FP32 step / AMP step, ``Predictor.predict`` with
``precision`` fp32 and amp, one GPU) of the data's ResNet-50 profile at 224 px and batch 64 (the
largest the data has there): the median over the four anchors (the three others for the V100
itself) and its range, and the value from ``p3.2xlarge``. ``miss``: predicted (median) /
measured - 1 (positive: the model promises more gain than was measured). A prediction is for a
user's own setup (the AMP model's centre offset over the published sources); ``pred, Lambda's
offset`` is the same prediction with Lambda's learned source offset instead, the part of a miss
that Lambda's setup explains.

Also printed: the spec-sheet terms of the AMP model per GPU (FP16 tensor rate over the rate FP32
training uses, memory bandwidth) and Lambda's throughputs of the Hopper and Blackwell GPUs, which
show what the spec sheet cannot carry.

``--record`` writes ``profet_core/data/amp_checks.csv`` (one row per GPU and measured set), which
the AMP answer's note reads: where the model misses a GPU's measured gains by more than 15 %, the
note says by how much and where (``profet_core/crossgpu/configurations/_amp_checks.py``).

    python bench/claims/amp_hopper_blackwell.py [--data ../shared/data/profet] [--record]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).parent)]

import hopper_check  # noqa: E402

from profet_core import load_artifacts  # noqa: E402
from profet_core.crossgpu.configurations._amp import _features, amp_pairs, user_offset  # noqa: E402
from profet_core.crossgpu.configurations._amp_checks import CHECKS_PATH, MISS_NOTE_PCT  # noqa: E402
from profet_core.crossgpu.spec._gpuref import gpu_table  # noqa: E402
from profet_core.crossgpu.spec._inhouse import amp_gains, load_inhouse  # noqa: E402
from profet_core.crossgpu.spec._published import load_published  # noqa: E402

DATA = ROOT / "profet_core" / "data"
LAMBDA = "lambdal/deeplearning-benchmark"
#: The data profile every prediction here starts from (as the issue's numbers).
PROFILE = ("ResNet50", 224, 64)
HOPPER_ON = ("H100", "H200", "GH200", "B200")


def lambda_gains() -> pd.DataFrame:
    """Lambda's one-GPU AMP / TF32 gains per host and CNN (both tables' rows)."""
    rows = pd.concat(
        [load_published(), load_published(DATA / "published_check.csv")], ignore_index=True
    )
    rows = rows[rows["source"].str.startswith(LAMBDA + "@")]
    pairs = amp_pairs(rows)
    pairs = pairs[pairs["catalog_gpu"] != ""]
    return pairs.assign(table=np.where(pairs["source"].str.contains("-v2-"), "v2", "v1"))


def lambda_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Median, range and host count of the gains per GPU and CNN."""
    g = pairs.groupby(["catalog_gpu", "model"])["gain"]
    out = g.agg(["median", "min", "max", "size"]).reset_index()
    return out.rename(columns={"size": "hosts"})


def steps(predictor, data: Path, gpus: list[str]) -> pd.DataFrame:
    """Predicted one-GPU FP32 and AMP steps (ms) of :data:`PROFILE` per GPU and anchor
    (``catalog_gpu, instance, anchor, fp32_ms, amp_ms``); a GPU that is an anchor is predicted
    from the three others."""
    specs = predictor.cross.specs_
    inst = specs.sort_values("instance").drop_duplicates("gpu").set_index("gpu")["instance"]
    targets = {g: inst[g] for g in gpus if g in inst.index}
    prof = hopper_check.anchor_profiles(data)
    model, px, batch = PROFILE
    prof = prof[(prof["model"] == model) & (prof["input_size"] == px)]
    prof = prof[prof["batch_size"] == batch]
    ops = [c for c in prof if c.startswith(("Host_", "Device_"))]
    rows = []
    for anchor, grp in prof.groupby("instance"):
        got = {}
        for precision in ("fp32", "amp"):
            res = predictor.predict(
                anchor,
                grp[ops].fillna(0.0).reset_index(drop=True),
                anchor_latency_s=grp["batch_latency_s"].to_numpy(),
                batch_size=grp["batch_size"].to_numpy(),
                input_size=grp["input_size"].to_numpy(),
                precision=precision,
                targets=sorted(set(targets.values()) - {anchor}),
            )
            got[precision] = res.table.groupby("target")["batch_latency_ms"].median()
        for gpu, t in targets.items():
            if t in got["fp32"].index:
                rows.append(
                    {
                        "catalog_gpu": gpu,
                        "instance": t,
                        "anchor": anchor,
                        "fp32_ms": got["fp32"][t],
                        "amp_ms": got["amp"][t],
                    }
                )
    return pd.DataFrame(rows)


def predicted(predictor, data: Path, gpus: list[str]) -> pd.DataFrame:
    """The shipped model's AMP gain of :data:`PROFILE` per GPU: the median over anchors, its
    range, and the value from p3.2xlarge."""
    p = steps(predictor, data, gpus)
    p = p.assign(gain=p["fp32_ms"] / p["amp_ms"])
    out = p.groupby("catalog_gpu")["gain"].agg(["median", "min", "max"]).add_prefix("pred ")
    out.insert(
        1, "pred p3.2xlarge", p[p["anchor"] == "p3.2xlarge"].set_index("catalog_gpu")["gain"]
    )
    out.insert(0, "instance", p.groupby("catalog_gpu")["instance"].first())
    return out.reset_index()


def inhouse_resnet50() -> pd.DataFrame:
    g = amp_gains(load_inhouse())
    g = g[(g["model"] == "resnet50") & g["batch_size"].isin([64, 128])]
    return g.pivot_table(index="catalog_gpu", columns="batch_size", values="fp16_tf32").rename(
        columns=lambda b: f"in-house b{b}"
    )


def side_by_side(lam: pd.DataFrame, pred: pd.DataFrame, inh: pd.DataFrame, gpus) -> pd.DataFrame:
    """One row per GPU: spec terms, measured gains, the prediction and the misses (%)."""
    r, _ = _features(gpus.loc[pred["catalog_gpu"]])
    out = pred.assign(
        r_fp16_over_fp32_rate=r,
        bandwidth_tbs=gpus.loc[pred["catalog_gpu"], "mem_bandwidth_gbs"].to_numpy() / 1000,
    )
    for cnn, label in (("resnet50", "Lambda ResNet-50"), ("ssd", "Lambda SSD")):
        s = lam[lam["model"] == cnn].set_index("catalog_gpu")
        text = s.apply(
            lambda x: (
                f"{x['median']:.2f}"
                + (
                    f" [{x['min']:.2f}-{x['max']:.2f}, {x['hosts']} hosts]"
                    if x["hosts"] > 1
                    else ""
                )
            ),
            axis=1,
        )
        out[label] = out["catalog_gpu"].map(text)
        out[f"{label} median"] = out["catalog_gpu"].map(s["median"])
        out[f"miss vs {label} %"] = 100 * (
            out["pred median"] / out["catalog_gpu"].map(s["median"]) - 1
        )
    out = out.merge(inh, left_on="catalog_gpu", right_index=True, how="left")
    if "in-house b128" in out:
        out["miss vs in-house b128 %"] = 100 * (out["pred median"] / out["in-house b128"] - 1)
    return out


def hopper_throughputs() -> pd.DataFrame:
    """Lambda's one-GPU images/s of the Hopper and Blackwell GPUs (median over hosts)."""
    rows = pd.concat(
        [load_published(), load_published(DATA / "published_check.csv")], ignore_index=True
    )
    rows = rows[rows["source"].str.startswith(LAMBDA + "@") & (rows["gpu_count"] == 1)]
    rows = rows[rows["catalog_gpu"].str.contains("|".join(HOPPER_ON))]
    t = rows.pivot_table(
        index="catalog_gpu", columns=["model", "precision"], values="images_per_s", aggfunc="median"
    )
    t.columns = [f"{m} {p}" for m, p in t.columns]
    for m in ("resnet50", "ssd"):
        t[f"{m} AMP/TF32"] = t[f"{m} AMP"] / t[f"{m} TF32"]
    return t.round(2)


#: Measured sets recorded for the AMP note: (label, column of :func:`side_by_side`).
SETS = (
    (
        "Lambda ResNet-50 (PyTorch, synthetic data, AMP batch twice the FP32 batch)",
        "Lambda ResNet-50",
    ),
    ("in-house ResNet-50 (eager PyTorch, batch 128, FP16 AMP over TF32)", "in-house b128"),
)


def checks(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``amp_checks.csv``: per GPU and measured set, measured and predicted gain."""
    out = []
    for _, r in table.iterrows():
        for label, col in SETS:
            meas = r.get(f"{col} median", r.get(col))
            if meas is None or not np.isfinite(meas):
                continue
            pred = float(r["pred median"])
            out.append(
                {
                    "gpu": r["catalog_gpu"],
                    "measured": label,
                    "measured_gain": round(meas, 3),
                    "predicted_gain": round(pred, 3),
                    "miss_pct": round(100 * (pred / meas - 1), 1),
                }
            )
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    ap.add_argument("--artifacts", default=None)
    ap.add_argument("--record", action="store_true", help=f"write {CHECKS_PATH.name}")
    args = ap.parse_args(argv)
    t0 = time.time()
    predictor = load_artifacts(args.artifacts)
    gpus = gpu_table(predictor.cross.specs_)
    lam = lambda_summary(lambda_gains())
    inh = inhouse_resnet50()
    names = sorted(set(lam["catalog_gpu"]) | set(inh.index))
    pred = predicted(predictor, Path(args.data), names)
    table = side_by_side(lam, pred, inh, gpus)
    state = predictor.cross.amp_state_
    shift = np.exp(state["source_offset"][LAMBDA] - user_offset(state))
    table.insert(
        table.columns.get_loc("pred max") + 1, "pred, Lambda's offset", table["pred median"] * shift
    )
    shown = table.drop(columns=[c for c in table if c.endswith(" median") and c != "pred median"])
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(
            f"AMP gain per GPU: measured vs the shipped model ({PROFILE[0]} profile, "
            f"{PROFILE[1]} px, batch {PROFILE[2]}; miss = predicted / measured - 1, %):"
        )
        print(shown.round(2).to_string(index=False))
        print("\nLambda's one-GPU images/s, Hopper and Blackwell (median over hosts):")
        print(hopper_throughputs().to_string())
    rec = checks(table)
    over = rec[rec["miss_pct"].abs() > MISS_NOTE_PCT]
    print(f"\nMisses over {MISS_NOTE_PCT:g} % (the AMP note names these GPUs):")
    print(over.to_string(index=False) if len(over) else "none")
    higher = rec.groupby("gpu")["miss_pct"].min()
    higher = higher[higher > 0]
    print(f"\nPredicted above every measurement of the GPU: {', '.join(higher.index)}")
    if args.record:
        rec.to_csv(CHECKS_PATH, index=False)
        print(f"wrote {CHECKS_PATH.relative_to(ROOT)} ({len(rec)} rows)")
    print(f"\nMade by `python bench/claims/amp_hopper_blackwell.py` in {time.time() - t0:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
