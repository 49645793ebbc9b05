"""The shipped model's Hopper answers against the in-house H100 SXM5 and H200 rows.

Both GPUs ran the same script (``profet_core/data/build/torch_steps.py``, torch 2.11.0, cuDNN
9.19, eager PyTorch, NCHW) on the same CNNs: a check of direction and ratios, never a fit (the
model's basis is the data's TensorFlow profiles; nothing here is fitted or tuned). For every
in-house workload with a ``data_model`` on both GPUs (and Inception-v3 through its proxy
InceptionResNetV2, held out), the data's own profile of that CNN at the same batch (and the same
image size, else the largest the data has at that batch, at least 128 px: column ``px``) from
each of the four anchors is predicted with the public call ``Predictor.predict`` (one GPU, fp32
and amp, targets p5.48xlarge and gpu-h200-sxm-141gb), as ``bench/studies/family_roofline.py``
computes its H100 SXM5 / H200 ratio. Printed:

(a) predicted H100 SXM5 / H200 step ratio, FP32 (the model's FP32 is TF32 tensor cores on
    Ampere+/Hopper: compare with the measured TF32 ratio; strict FP32 shown too) and AMP (vs the
    measured FP16 and BF16 AMP ratios);
(b) predicted AMP gain (FP32 step / AMP step) per GPU vs the measured FP16 AMP / TF32 gain (and
    BF16 AMP / TF32, FP16 AMP / strict FP32);
(c) per GPU, Spearman rho across CNNs of predicted vs measured AMP gain and the mean absolute
    log error (per CNN: the median over its rows and anchors), over the fitted CNNs, for all rows
    and for rows whose largest ``spread_pct`` is at most ``--max-spread``; held-out CNNs
    (VGG16, Inception-v3) apart.

    python bench/claims/hopper_check.py [--data ../shared/data/profet] [--artifacts DIR]
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))  # inversions.py beside this script

from profet_core import load_artifacts  # noqa: E402
from profet_core.crossgpu.spec._inhouse import (  # noqa: E402
    H100_SXM,
    H200_SXM,
    amp_gains,
    gpu_ratios,
    load_inhouse,
)

ANCHORS = ("p2.xlarge", "g3s.xlarge", "g4dn.xlarge", "p3.2xlarge")
#: The spec lines of the two GPUs, as in bench/studies/family_roofline.py.
TARGETS = {H100_SXM: "p5.48xlarge", H200_SXM: "gpu-h200-sxm-141gb"}
SHORT = {H100_SXM: "H100", H200_SXM: "H200"}
#: Smallest profile image size that stands in for a 224/299 px measurement.
MIN_PX = 128
WL = ["cnn", "image_size", "batch_size"]


def workloads(ratios: pd.DataFrame) -> pd.DataFrame:
    """The workloads to predict: a ``data_model`` row, or a held-out proxied one (Inception-v3);
    proxied fitted CNNs (ResNet152, EfficientNet-B0) are left out: their profile is another CNN."""
    keep = ratios["held_out"] | ~ratios["model"].isin(["resnet152", "efficientnet_b0"])
    return ratios.loc[keep, ["model", *WL, "held_out"]].drop_duplicates(ignore_index=True)


def anchor_profiles(data: Path) -> pd.DataFrame:
    """One profile row per (anchor, CNN, image size, batch) of the data, with its median latency
    (``batch_latency_s``): ``bench/claims/inversions.median_profiles`` on the anchors."""
    from inversions import median_profiles

    prof = median_profiles(data)
    return prof[prof["instance"].isin(ANCHORS)]


def match(wl: pd.DataFrame, prof: pd.DataFrame) -> pd.DataFrame:
    """Per workload and anchor, the profile of the same CNN and batch at the same image size,
    else at the largest the data has there (>= :data:`MIN_PX`); ``px`` says which."""
    rows = []
    for w in wl.itertuples(index=False):
        cand = prof[(prof["model"] == w.cnn) & (prof["batch_size"] == w.batch_size)]
        cand = cand[cand["input_size"] >= MIN_PX]
        sizes = set(cand["input_size"])
        if not sizes:
            continue
        px = w.image_size if w.image_size in sizes else max(sizes)
        got = cand[cand["input_size"] == px].assign(wl=w.model, px=px)
        rows.append(got.assign(**{c: getattr(w, c) for c in ("image_size", "held_out")}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def predict(predictor, matched: pd.DataFrame) -> pd.DataFrame:
    """Predicted one-GPU step (ms) of both targets per matched profile, anchor and precision."""
    ops = [c for c in matched if c.startswith(("Host_", "Device_"))]
    parts = []
    for anchor, grp in matched.groupby("instance"):
        for precision in ("fp32", "amp"):
            res = predictor.predict(
                anchor,
                grp[ops].fillna(0.0).reset_index(drop=True),
                anchor_latency_s=grp["batch_latency_s"].to_numpy(),
                batch_size=grp["batch_size"].to_numpy(),
                input_size=grp["input_size"].to_numpy(),
                precision=precision,
                targets=list(TARGETS.values()),
            )
            t = res.table.pivot(index="row", columns="target", values="batch_latency_ms")
            out = grp[["wl", "model", "px", "image_size", "batch_size", "held_out"]].copy()
            out = out.reset_index(drop=True).assign(anchor=anchor, precision=precision)
            for gpu, inst in TARGETS.items():
                out[SHORT[gpu]] = t[inst].to_numpy()
            parts.append(out)
    return pd.concat(parts, ignore_index=True).rename(columns={"model": "cnn"})


def _rng(s: pd.Series) -> str:
    return f"{s.median():.3f} [{s.min():.3f}-{s.max():.3f}]"


def ratio_table(pred: pd.DataFrame, ratios: pd.DataFrame) -> pd.DataFrame:
    """(a): per workload, predicted H100/H200 step ratio (median [min-max] over anchors) vs the
    measured ratios."""
    p = pred.assign(r=pred["H100"] / pred["H200"])
    g = p.groupby(["wl", "cnn", "px", "image_size", "batch_size", "held_out", "precision"])["r"]
    pw = g.agg(_rng).unstack("precision").reset_index()
    m = ratios.pivot_table(index=["model", "batch_size"], columns="precision", values="ratio")
    s = ratios.groupby(["model", "batch_size"])["spread"].max().rename("spread %")
    m = m.join(s).reset_index().rename(columns={"model": "wl"})
    out = pw.merge(m, on=["wl", "batch_size"])
    out = out.rename(columns={"fp32": "pred FP32", "amp": "pred AMP", "AMP": "AMP FP16"})
    cols = ["wl", "cnn", "px", "batch_size", "held_out", "pred FP32", "TF32", "FP32"]
    return out[[*cols, "pred AMP", "AMP FP16", "AMP BF16", "spread %"]]


def gain_table(pred: pd.DataFrame, gains: pd.DataFrame) -> pd.DataFrame:
    """(b): per GPU and workload, predicted AMP gain (median over anchors, and its range) vs the
    measured gains."""
    w = pred.pivot_table(
        index=["wl", "cnn", "px", "batch_size", "held_out", "anchor"],
        columns="precision",
        values=["H100", "H200"],
    )
    rows = []
    for gpu, short in SHORT.items():
        g = (w[(short, "fp32")] / w[(short, "amp")]).rename("g").reset_index()
        agg = g.groupby(["wl", "cnn", "px", "batch_size", "held_out"])["g"]
        p = agg.agg(["median", "min", "max"]).add_prefix("pred ").reset_index()
        m = gains[gains["catalog_gpu"] == gpu].rename(columns={"model": "wl"})
        cols = ["wl", "batch_size", "fp16_tf32", "bf16_tf32", "fp16_fp32", "spread"]
        rows.append(p.merge(m[cols], on=["wl", "batch_size"]).assign(gpu=short))
    return pd.concat(rows, ignore_index=True)


def _stats(per: pd.DataFrame, pred: str, meas: str) -> dict:
    """Spearman rho (NaN under 3 CNNs) and mean absolute log error of ``pred`` vs ``meas``."""
    rho = per[pred].corr(per[meas], method="spearman") if len(per) > 2 else np.nan
    male = float(np.mean(np.abs(np.log(per[pred] / per[meas])))) if len(per) else np.nan
    return {"n CNNs": len(per), "spearman rho": rho, "MALE": male, "CNNs": ", ".join(per.index)}


def summary(gt: pd.DataFrame, gains: pd.DataFrame, max_spread: float) -> pd.DataFrame:
    """(c): per GPU, CNN set and row set, Spearman rho across CNNs of predicted vs measured FP16
    AMP / TF32 gain and the mean absolute log error over CNNs (per CNN: the median over its
    rows). Row sets: every same-batch row; those with ``spread`` <= ``max_spread``; and the
    batch-128 measurement (the least host-bound) against the CNN's predicted rows at any batch."""
    out = []
    for (gpu, held), grp in gt.groupby(["gpu", "held_out"]):
        same = grp.groupby("cnn")[["pred median", "fp16_tf32"]].median()
        tight = grp[grp["spread"] <= max_spread].groupby("cnn")[["pred median", "fp16_tf32"]]
        b128 = grp.groupby("cnn")["pred median"].median().to_frame()
        g = gains[(gains["catalog_gpu"] == {v: k for k, v in SHORT.items()}[gpu])]
        g = g[g["model"].isin(grp["wl"]) & (g["batch_size"] == 128)]
        m128 = g.groupby("cnn")["fp16_tf32"].median()
        sets = {
            "same batch, all rows": same,
            f"same batch, spread <= {max_spread:g} %": tight.median(),
            "measured at batch 128": b128.join(m128, how="inner"),
        }
        for label, per in sets.items():
            stats = _stats(per, "pred median", "fp16_tf32")
            out.append(
                {"gpu": gpu, "set": "held out" if held else "fitted", "rows": label, **stats}
            )
    return pd.DataFrame(out)


def ratio_summary(pred: pd.DataFrame, ratios: pd.DataFrame, max_spread: float) -> pd.DataFrame:
    """Over the workloads of (a), per CNN set: median predicted vs measured H100/H200 ratio
    (FP32 vs TF32, AMP vs FP16 AMP), their mean absolute log error and how many predicted
    ratios exceed the measured one; all rows and rows with ``spread`` <= ``max_spread``."""
    p = pred.assign(r=pred["H100"] / pred["H200"])
    p = p.groupby(["wl", "batch_size", "held_out", "precision"])["r"].median().unstack()
    m = ratios.rename(columns={"model": "wl"}).set_index(["wl", "batch_size", "precision"])
    out = []
    for mine, theirs in (("fp32", "TF32"), ("amp", "AMP")):
        j = p[[mine]].join(m.xs(theirs, level="precision")[["ratio", "spread"]]).reset_index()
        for held, grp in j.groupby("held_out"):
            for label, sel in (("all", grp), (f"spread <= {max_spread:g} %", grp)):
                sel = sel if label == "all" else sel[sel["spread"] <= max_spread]
                out.append(
                    {
                        "pred vs measured": f"{mine} vs {theirs}",
                        "set": "held out" if held else "fitted",
                        "rows": label,
                        "n": len(sel),
                        "pred median": sel[mine].median(),
                        "measured median": sel["ratio"].median(),
                        "MALE": float(np.mean(np.abs(np.log(sel[mine] / sel["ratio"])))),
                        "pred > measured": int((sel[mine] > sel["ratio"]).sum()),
                    }
                )
    return pd.DataFrame(out)


def _md(frame: pd.DataFrame, digits: int) -> str:
    """A Markdown table: text left, numbers right (``digits`` decimals, thousands split), - NaN."""

    def cell(v):
        if isinstance(v, float | np.floating):
            return "-" if np.isnan(v) else f"{v:,.{digits}f}"
        return str(v)

    head = "| " + " | ".join(frame.columns) + " |"
    right = [frame[c].dtype.kind in "fiu" or c.endswith("%") for c in frame]
    align = "|" + "|".join("---:" if r else "---" for r in right) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join([head, align, *body])


def measured(rows: pd.DataFrame) -> str:
    """The measured tables of profet_core/data/build/README.md (Markdown): the H100 SXM5's
    images/s, the H200 / H100 speed ratio, and both GPUs' AMP gains."""
    prec = {"FP32": "FP32", "TF32": "TF32", "AMP": "AMP (FP16)", "AMP BF16": "AMP BF16"}
    ratios, gains = gpu_ratios(rows), amp_gains(rows)
    name = ratios["model"] + np.where(ratios["held_out"], " (held out)", "")
    ratios = ratios.assign(model=name)
    idx = ["model", "image_size", "batch_size"]
    h = rows[(rows["catalog_gpu"] == H100_SXM) & (rows["gpu_count"] == 1)].copy()
    h["model"] = h["model"] + np.where(
        h["notes"].fillna("").str.startswith("held out"), " (held out)", ""
    )
    ips = h.pivot_table(index=idx, columns="precision", values="images_per_s")[list(prec)]
    ips["max spread %"] = h.groupby(idx)["spread_pct"].max()
    r = ratios.pivot_table(index=idx, columns="precision", values="ratio")[list(prec)]
    r["max spread %"] = ratios.groupby(idx)["spread"].max()
    keys = ratios[["image_size", "batch_size"]].assign(model=ratios["model"].str.split(" ").str[0])
    both = gains.merge(keys.drop_duplicates(), on=idx)
    both = both.assign(model=both["model"] + np.where(both["held_out"], " (held out)", ""))
    both = both.assign(gpu=both["catalog_gpu"].map(SHORT))
    cols = {"fp16_tf32": "FP16/TF32", "bf16_tf32": "BF16/TF32", "fp16_fp32": "FP16/FP32"}
    cols["bf16_fp32"] = "BF16/FP32"
    g = both.set_index([*idx, "gpu"])[list(cols)].unstack("gpu")
    g.columns = [f"{cols[a]} {b}" for a, b in g.columns]
    g = g[[f"{cols[a]} {b}" for a in cols for b in ("H100", "H200")]]
    g["max spread %"] = both.groupby(idx)["spread"].max()
    out = []
    for title, t, d in (
        ("H100 SXM5 images/s (median step)", ips.rename(columns=prec), 0),
        ("H200 / H100 SXM5 speed ratio (H100 step / H200 step)", r.rename(columns=prec), 3),
        ("AMP gains (step of the slower precision / AMP step)", g, 2),
    ):
        t = t.reset_index().rename(columns={"image_size": "px", "batch_size": "batch"})
        t["max spread %"] = t["max spread %"].map("{:.1f}".format)
        out.append(f"{title}:\n\n{_md(t, d)}")
    return "\n\n".join(out)


def reference_ratios(predictor, data: Path) -> str:
    """The same predicted H100 SXM5 / H200 ratio over docs/family_roofline_rule.md's tables:
    ``bench/claims/inversions.data_profiles`` (2 workloads per CNN, smallest to largest batch,
    any image size) x 4 anchors x fp32/amp, one GPU: min / median / max, and per CNN."""
    from inversions import data_profiles

    prof = {a: p for a, p in data_profiles(data, 2).items() if a in ANCHORS}
    parts = []
    for anchor, p in prof.items():
        m = p.assign(instance=anchor, wl=p["model"], px=p["input_size"], held_out=False)
        parts.append(predict(predictor, m.assign(image_size=p["input_size"])))
    d = pd.concat(parts, ignore_index=True)
    r = d["H100"] / d["H200"]
    per = r.groupby(d["cnn"]).median().round(3)
    head = f"{len(r)} tables: {r.min():.3f} / {r.median():.3f} / {r.max():.3f}"
    return head + "; median per CNN: " + ", ".join(f"{k} {v:.3f}" for k, v in per.items())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data",
        default=str(ROOT.parent / "shared" / "data" / "profet"),
        help="the PROFET data folder (profiles.parquet, latencies.parquet)",
    )
    ap.add_argument("--artifacts", default=None, help="artifacts folder (default: shipped)")
    ap.add_argument("--max-spread", type=float, default=10.0, help="spread_pct bound, %%")
    ap.add_argument(
        "--measured",
        action="store_true",
        help="print only the measured tables of profet_core/data/build/README.md (no data needed)",
    )
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.measured:
        print(measured(load_inhouse()))
        return 0
    if not (Path(args.data) / "profiles.parquet").exists():
        print(f"no data at {args.data} (profiles.parquet): nothing to check", file=sys.stderr)
        return 2
    rows = load_inhouse()
    ratios, gains = gpu_ratios(rows), amp_gains(rows)
    matched = match(workloads(ratios), anchor_profiles(Path(args.data)))
    predictor = load_artifacts(args.artifacts)
    pred = predict(predictor, matched)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", 80)
    print(__doc__.split("\n\n")[1].split("(a)")[0].strip(), "\n")
    print("(a) H100 SXM5 / H200 step-time ratio (= H200 / H100 images/s): predicted median")
    print("[min-max] over the 4 anchors; measured TF32 (the model's FP32), strict FP32, AMP;")
    print("spread %: the largest spread_pct of the workload's rows on both GPUs:")
    print(ratio_table(pred, ratios).to_string(index=False, float_format="%.3f"))
    print("\nOver the workloads above (median over anchors each; spread: the compared rows'):")
    print(ratio_summary(pred, ratios, args.max_spread).to_string(index=False, float_format="%.3f"))
    gt = gain_table(pred, gains)
    print("\n(b) AMP gain (FP32 step / AMP step): predicted over the 4 anchors; measured")
    print("fp16_tf32 (TF32 step / FP16 AMP step), bf16_tf32, fp16_fp32 (over strict FP32);")
    print("spread: the largest spread_pct of the GPU's rows of that workload:")
    print(gt.to_string(index=False, float_format="%.3f"))
    print("\n(c) predicted vs measured fp16_tf32 gain across CNNs (median per CNN):")
    print(summary(gt, gains, args.max_spread).to_string(index=False, float_format="%.3f"))
    print("\nFor reference, the predicted H100 SXM5 / H200 ratio over family_roofline_rule.md's")
    print(
        "tables (2 data workloads per CNN, any size, x 4 anchors x fp32/amp), min / median / max:"
    )
    print(textwrap.fill(reference_ratios(predictor, Path(args.data)), 100))
    print(f"\nMade by `python bench/claims/hopper_check.py` in {time.time() - t0:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
