"""N-GPU scaling: candidate model changes judged by a rule fixed before they were run.

The rule (``docs/amp_decision_rule.md``, rounds 6 and 7, each committed before it was run): the
primary score is the mean over the left-out GPUs of each GPU's leave-one-GPU-out scaling MAPE on
fitted rows (each GPU weighs 1); a candidate is adopted only if it lowers it by >= 1.0 point, does
not raise the leave-one-source-out MAPE (row mean; 0.1-point tolerance) and keeps the
leave-one-GPU-out cross-fitted 80% coverage within 75-85%; each is judged against the round-6
model. Candidates: N2 (round 6), a GPU without peer-to-peer keeps its own PCIe link at half speed
(gradients staged through host memory) instead of sharing the host's links among the N GPUs; N3
(round 7, adopted and now shipped), a synchronisation term ``k0_amp`` on log2(N) for TensorFlow
AMP runs without XLA. Rounds 9 and 10 judge the interval alone (I1: per peer-to-peer class; I2:
also per doubling of the GPU count, now shipped; rules in its section). Held-out rows (VGG16, Inception-v3) are never fitted; their APE is
reported, never a criterion. Prints the table; ``--out`` writes it.

    .venv/bin/python bench/studies/dp_candidates.py [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "claims"))  # bench/claims: _sections
from _sections import emit, md_table, passes_rule

from profet_core.crossgpu.configurations import _dataparallel as dp
from profet_core.crossgpu.configurations._validate import ape, summarize_logo
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._published import load_published
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


def score(rows: pd.DataFrame, amp_sync: bool = False) -> tuple[dict, pd.Series, pd.DataFrame]:
    """The rule's numbers of the current ``allreduce_s`` (with N3's term where ``amp_sync``),
    the per-GPU MAPE (%) and the leave-one-GPU-out rows."""
    by_gpu = dp.dp_logo(rows, "catalog_gpu", amp_sync)
    by_src = dp.dp_logo(rows, "repo", amp_sync)
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
    fit = dp.fit_dataparallel(rows[~rows["held_out"]], amp_sync)
    out["k1"], out["k0_amp"] = fit["k1"], fit.get("k0_amp", 0.0)
    return out, per, by_gpu


def flagged(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """N3's rows (TensorFlow AMP without XLA, fitted): mean published scaling, leave-one-GPU-out
    predictions before and after N3, and the FP32 rows of the same source, GPU and XLA-off
    setting (published), per source and GPU."""
    key = ["repo", "catalog_gpu"]
    amp = after["amp_noxla"] & ~after["held_out"]
    out = (
        after[amp]
        .assign(round6=before.loc[amp, "pred"])
        .groupby(key)
        .agg(
            rows=("scaling", "size"),
            published=("scaling", "mean"),
            N3=("pred", "mean"),
            round6=("round6", "mean"),
        )
    )
    fp32 = after[~after["held_out"] & after["precision"].eq("FP32") & after["xla_off"]]
    out["fp32_published"] = fp32.groupby(key)["scaling"].mean().reindex(out.index)
    return out.reset_index()


#: The intervals compared: (name, kind of ``dp.half_widths``).
INTERVALS = (
    ("pooled (before round 9)", "pooled"),
    ("I1 per peer-to-peer class (round 9)", "class"),
    ("I2 I1 per doubling of the GPU count (round 10; shipped)", "class_log2n"),
)


def _interval_row(name: str, kind: str, oof: pd.DataFrame) -> tuple[dict, pd.Series]:
    """One interval's coverage (%): over all fitted rows, per peer-to-peer class and per
    (class, GPU count) cell (leave-one-GPU-out, cross-fitted), of the held-out rows (widths set
    on every fitted row), and its widths; and the per-row inside flags."""
    fit, held = oof[~oof["held_out"]], oof[oof["held_out"]]
    cls = pd.Series(np.where(fit["no_p2p"], "no_p2p", "p2p"), index=fit.index)
    inside = dp.crossfit_coverage(oof, "catalog_gpu", kind=kind) * 100
    st = dp.half_widths(oof, kind=kind)
    hw = dp.row_half_width(st, held["no_p2p"], held["gpu_count"])
    err = np.abs(np.log(held["pred"] / held["scaling"]))
    cells = inside.groupby([cls, fit["gpu_count"].astype(int)]).mean()
    row = {
        "interval": name,
        "coverage": inside.mean(),
        "coverage_no_p2p": inside[cls == "no_p2p"].mean(),
        "coverage_p2p": inside[cls == "p2p"].mean(),
        **{f"{c}_{n}": v for (c, n), v in cells.items()},
        "worst_cell_gap": float((cells - 80).abs().max()),
        "held_out_coverage": float((err <= hw).mean() * 100),
        "width_no_p2p": st["class_half_width"].get("no_p2p", np.nan),
        "width_p2p": st["class_half_width"].get("p2p", np.nan),
        "width_pooled": st["half_width"],
        "per_log2n": "yes" if st["per_log2n"] else "no",
    }
    return row, inside


def interval_check(oof: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rounds 9 and 10: the shipped model's N-GPU interval set the ways of :data:`INTERVALS`,
    each judged by its round's rule (I1 against pooled: coverage within 75-85% and the rows
    without peer-to-peer closer to 80; I2 against I1: coverage within 75-85% and the worst
    (class, GPU count) cell closer to 80); and the coverage per GPU."""
    fit = oof[~oof["held_out"]]
    rows, per_gpu = [], {}
    for name, kind in INTERVALS:
        row, inside = _interval_row(name, kind, oof)
        rows.append(row)
        per_gpu[name] = inside.groupby(fit["catalog_gpu"]).mean()
    out = pd.DataFrame(rows)
    pooled, i1, i2 = out.iloc[0], out.iloc[1], out.iloc[2]
    ok = lambda c: "yes" if c else "no"  # noqa: E731
    out["passes_rule"] = [
        "-",
        ok(
            75 <= i1["coverage"] <= 85
            and abs(i1["coverage_no_p2p"] - 80) < abs(pooled["coverage_no_p2p"] - 80)
        ),
        ok(75 <= i2["coverage"] <= 85 and i2["worst_cell_gap"] < i1["worst_cell_gap"]),
    ]
    return out, pd.DataFrame(per_gpu).reset_index(names="catalog_gpu")


def no_p2p_scaling(rows: pd.DataFrame) -> pd.DataFrame:
    """Published scaling (N-GPU images/s over N x one-GPU) of the GPUs without peer-to-peer,
    per GPU, source and GPU count (fitted rows): what the wide interval stands for."""
    part = rows[rows["no_p2p"] & ~rows["held_out"]].astype({"gpu_count": int})
    return (
        part.groupby(["catalog_gpu", "repo", "gpu_count"])["scaling"]
        .agg(rows="size", low="min", high="max")
        .reset_index()
    )


def _rule(cand: dict, base: dict) -> str:
    return "yes" if passes_rule(cand, base) else "no"


def report() -> str:
    t0 = time.time()
    table = load_published()
    rows = dp.scaling_rows(table, gpu_table(load_specs()))
    table_xla = table.drop_duplicates("source").set_index("source")["xla"]
    rows["xla_off"] = rows["source"].map(table_xla).eq("off").to_numpy()
    base, per0, oof0 = score(rows)
    with allreduce(own_link_allreduce_s):
        n2, per2, _ = score(rows)
    n3, per3, oof3 = score(rows, amp_sync=True)
    table = pd.DataFrame(
        [
            {
                "candidate": "round-6 model (host links shared by the N GPUs)",
                **base,
                "passes_rule": "-",
            },
            {
                "candidate": "N2 own link at half speed (round 6)",
                **n2,
                "passes_rule": _rule(n2, base),
            },
            {
                "candidate": "N3 TF AMP without XLA sync term (round 7; shipped)",
                **n3,
                "passes_rule": _rule(n3, base),
            },
        ]
    )
    per = pd.DataFrame({"round 6": per0, "N2": per2, "N3 (shipped)": per3}).reset_index(
        names="catalog_gpu"
    )
    intervals, cover = interval_check(oof3)
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
            "Rows N3 flags (TensorFlow AMP without XLA; fitted), mean scaling per source and GPU:"
            " published, leave-one-GPU-out predicted with N3 and by the round-6 model, and the"
            " same source's FP32 rows of that GPU without XLA (published):",
            "",
            md_table(flagged(oof0, oof3), ".2f"),
            "",
            "### The interval (rounds 9 and 10; the point predictions are N3's, shipped)",
            "",
            "I1 (round 9; Mondrian split-conformal by peer-to-peer) is adopted only if the"
            " cross-fitted leave-one-GPU-out coverage over all fitted rows stays within 75-85% and"
            " the rows without peer-to-peer come closer to 80% than with the pooled width. I2"
            " (round 10; I1 with scores and widths per doubling of the GPU count) only if, against"
            " I1, the coverage stays within 75-85% and the worst (class, GPU count) cell comes"
            " closer to 80 (`worst_cell_gap`). Coverage in % (`no_p2p_8`: rows without"
            " peer-to-peer on 8 GPUs), widths as 80% log half-widths set on every fitted row's"
            " leave-one-GPU-out error (per doubling where `per_log2n`; a class with under 8 rows"
            " takes the pooled width); held_out_coverage reported, never a criterion.",
            "",
            md_table(intervals, ".3f"),
            "",
            "Cross-fitted coverage (%) per GPU:",
            "",
            md_table(cover, ".1f"),
            "",
            "Published scaling of the GPUs without peer-to-peer (fitted rows):",
            "",
            md_table(no_p2p_scaling(rows), ".2f"),
            "",
            f"Made by `python bench/studies/dp_candidates.py` in {time.time() - t0:.0f} s.",
        ]
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    emit(report(), args.out)


if __name__ == "__main__":
    main()
