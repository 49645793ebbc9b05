"""Tensor-core GPUs judged on published speed-ups: leave-one-GPU-out over published pairs.

The published table (``profet_core/data/published.csv``) gives speed-up pairs of a data GPU (V100)
and a catalog GPU the data lacks (A10, RTX 6000 Ada, A100, H100, RTX A6000, GeForce RTX 3090 / 4090). For
each of those GPUs the tensor-core efficiencies are refitted without any of its pairs and predict
them; MAPE of the speed-up per GPU and per source document for the model, the model before the
change (data only), and the FP32-ratio, bandwidth-ratio and roofline baselines. Per basis the 80%
interval and its cross-fitted coverage: ``published`` from one (document, CNN, GPU) group left out
at a time (the GPU keeps its other pairs), ``specs only`` from one whole generation left out
(nothing published of it: only the shared roofline in bytes per peak FLOP, ``a`` and ``b``); each
row's interval is set on other folds' and other GPUs' rows. Every VGG16 and Inception-v3 row is
never fitted and is reported apart. Also the specs-only check: each tensor-core generation left out
entirely (only the shared terms), its A100/H100 predictions against every published CNN. Prints it
(with --out FILE, replaces the published section of FILE, e.g. docs/crossgpu.md; about 30 s).

    .venv/bin/python bench/claims/published.py [--data ../shared/data/profet] [--out FILE]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from _sections import markers, write_section

from profet_core import load_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.spec._efficiency import fit_published, predict_speedups, tensor_share
from profet_core.crossgpu.spec._holdout import basis_frames, published_logo, summarize_published
from profet_core.crossgpu.spec._published import load_published, published_pairs
from profet_core.inputs._gpu_specs import load_specs

START, END = markers("published")


def _md(df: pd.DataFrame) -> str:
    df = df.round(3)
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    return "\n".join([head, rule, *("| " + " | ".join(map(str, r)) + " |" for r in df.values)])


def specs_only_check(base, pairs: pd.DataFrame) -> pd.DataFrame:
    """A100/H100 with their whole generation left out (only the shared terms): predicted /
    published."""
    gen = dict(zip(base.specs_["gpu"], base.specs_["arch"], strict=False))
    rows = []
    # every published A100 and H100 variant (each is its own catalog GPU)
    for gpu in sorted(g for g in set(pairs["target_gpu"]) if "A100" in g or "H100" in g):
        g = gen[gpu]
        same = pairs["target_gpu"].map(gen) == g
        fold = fit_published(base, pairs[~same & ~pairs["held_out"]])
        test = pairs[pairs["target_gpu"] == gpu]
        after, before = predict_speedups(fold, test), predict_speedups(base, test)
        for model, part in test.groupby("model"):
            rows.append(
                {
                    "gpu": gpu,
                    "cnn": model + (" (held out)" if part["held_out"].any() else ""),
                    "published": part["speedup"].mean(),
                    "ratio_after": (after.loc[part.index, "cross"] / part["speedup"]).max(),
                    "ratio_before": (before.loc[part.index, "cross"] / part["speedup"]).max(),
                }
            )
    return pd.DataFrame(rows)


def intervals(summary: pd.DataFrame) -> list[str]:
    """The 80% interval per basis as factors."""
    rows = summary[summary["scope"] == "basis"]
    return [
        f"- `{r.group}` interval: x{np.exp(-r.half_width_log):.2f} .. x{np.exp(r.half_width_log):.2f}"
        f" (log half-width {r.half_width_log:.3f})"
        for r in rows.itertuples()
    ]


def goals(summary: pd.DataFrame, check: pd.DataFrame) -> list[str]:
    """The issue's goals, met or missed, in words with the numbers."""
    gpus = summary[(summary["scope"] == "gpu") & (summary["pairs"] >= 3)]
    out = []
    for _, r in gpus.iterrows():
        bw = r["mape_bandwidth-ratio"]
        ok = r["mape_cross"] <= 15 and r["mape_cross"] <= bw / 2
        out.append(
            f"- {r['group']} ({r['pairs']} pairs): MAPE {r['mape_cross']:.1f} % vs "
            f"bandwidth-ratio {bw:.1f} % (goal <= 15 % and <= half): {'met' if ok else 'missed'}"
        )
    for r in summary[summary["scope"] == "basis"].itertuples():
        ok = 70 <= r.coverage_pct <= 90
        out.append(
            f"- coverage, basis {r.group}: {r.coverage_pct:.1f} % (goal 70-90 %): "
            f"{'met' if ok else 'missed'}"
        )
    every = summary[summary["scope"] == "gpu"]
    over = every[every["mape_cross"] > 10]
    listed = ", ".join(f"{r.group} {r.mape_cross:.1f} %" for r in over.itertuples())
    out.append(
        f"- every GPU <= 10 %: {len(every) - len(over)} of {len(every)}"
        + (f"; over: {listed}" if listed else "")
        + f": {'missed' if len(over) else 'met'}"
    )
    worst = check["ratio_after"].max()
    out.append(
        f"- specs-only A100/H100 (generation left out): worst predicted / published speed-up "
        f"{worst:.2f} (goal <= 1.5): {'met' if worst <= 1.5 else 'missed'}; before the change "
        f"{check['ratio_before'].max():.2f}"
    )
    return out


def report(data: str) -> str:
    t0 = time.time()
    medians = median_table(load_dataset(data))
    specs = load_specs()
    base = CrossInstanceModel().fit_pairs(all_pairs(medians), specs)
    pairs = published_pairs(load_published(), specs, medians)
    oof = published_logo(base, pairs)
    summary = summarize_published(oof, basis_frames(base, pairs))
    full = fit_published(base, pairs[~pairs["held_out"]])
    check = specs_only_check(base, pairs)
    counts = pairs.groupby(["target_gpu", "held_out"]).size().rename("pairs").reset_index()
    lines = [
        START,
        "## Tensor-core GPUs against published speed-ups (leave-one-GPU-out)",
        "",
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        "Published pairs per catalog GPU (held_out: VGG16 / Inception-v3, never fitted):",
        "",
        _md(counts),
        "",
        "Speed-up MAPE in % (mean over pairs; `before`: the model without published pairs, "
        "the shipped model before published pairs were fitted; `basis` rows: their own folds, `half_width_log` the "
        "80 % interval's log half-width, `coverage_pct` its cross-fitted coverage):",
        "",
        _md(summary),
        "",
        "Learned on every fitted pair (`share`: exp(-eta), the share of the spec-sheet peak "
        "(FP32-training TFLOPS, TF32 where there are tensor cores) and of the bandwidth the "
        "model's exponents get; the data's own generations are 1 by construction):",
        "",
        _md(tensor_share(full)),
        "",
        *intervals(summary),
        "",
        "Specs-only check (the whole generation left out; predicted / published speed-up, worst "
        "pair per CNN):",
        "",
        _md(check),
        "",
        "Goals:",
        "",
        *goals(summary, check),
        "",
        f"Made by `python bench/claims/published.py` in {time.time() - t0:.0f} s.",
        END,
    ]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/profet")
    ap.add_argument(
        "--out",
        help="write the section into this Markdown file (e.g. docs/crossgpu.md, a tracked doc: "
        "only to regenerate it); default: print only",
    )
    args = ap.parse_args(argv)
    text = report(args.data)
    print(text)
    if args.out:
        write_section(args.out, "published", text)


if __name__ == "__main__":
    main()
