"""Mixed precision (AMP) gains and data-parallel N-GPU scaling judged on published measurements.

Leave-one-GPU-out and leave-one-source-out (source: the repository) MAPE of the AMP gain (FP32
time / AMP time, one GPU) against a constant AMP factor (the median gain of the training pairs; also of the training
pairs of the same source)
and the tensor-peak ratio (FP16 tensor TFLOPS / the rate FP32 training used); of the N-GPU
scaling (N-GPU images/s over N x one-GPU images/s) against linear scaling. 80% interval
coverage cross-fitted (each left-out GPU's rows judged with a split-conformal half-width set on
the other GPUs' out-of-fold errors; AMP's per source, Mondrian, where the source has 8 or more rows
there). Every VGG16 and Inception-v3 row is never fitted and is reported apart.
Also: what a measured AMP step on the anchor buys (a GPU of the same source and CNN as the
anchor), and how well the profile's optimizer time estimates the parameter count on the data's
CNNs (``--params-json``, default ``bench/claims/zoo_params.json``: ``{"Model|input_size": count}``,
made with ``profet_core.capture._zoo.build_zoo_model(name, size, classes_for(size))
.count_params()`` under tf-keras; the CNNs it lists). Prints the tables; ``--out`` also writes
them to a Markdown file.

    .venv/bin/python bench/claims/amp_multigpu.py [--data ../shared/data/profet] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _sections import emit, md_table

from profet_core import load_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.configurations._amp import amp_logo, amp_state_from
from profet_core.crossgpu.configurations._dataparallel import (
    dp_logo,
    fit_dataparallel,
    scaling_rows,
)
from profet_core.crossgpu.configurations._validate import ape as _ape
from profet_core.crossgpu.configurations._validate import held_out_errors as held_out_check
from profet_core.crossgpu.configurations._validate import summarize_logo as summarize
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._pairs import FAM_COLS
from profet_core.crossgpu.spec._published import load_published
from profet_core.inputs._gpu_specs import load_specs
from profet_core.prediction._options import OPT_BYTES_PER_PARAM


def anchor_amp_gain(oof: pd.DataFrame) -> pd.DataFrame:
    """AMP gain of a target GPU with and without the anchor's measured gain (same source, framework
    and CNN; both out of fold)."""
    rows = []
    fit = oof[~oof["held_out"]]
    for _, grp in fit.groupby(["repo", "framework", "model"]):
        for a in grp.itertuples():
            for t in grp.itertuples():
                if a.catalog_gpu == t.catalog_gpu:
                    continue
                rows.append(
                    {
                        "without": _ape(t.pred, t.gain),
                        "with": _ape(t.pred * a.gain / a.pred, t.gain),
                    }
                )
    r = pd.DataFrame(rows)
    return pd.DataFrame(
        {"pairs": [len(r)], "mape_without": [r["without"].mean()], "mape_with": [r["with"].mean()]}
    )


def params_check(medians: pd.DataFrame, specs: pd.DataFrame, params_json: str) -> pd.DataFrame:
    """Parameters from the optimizer time (2 steps) and the anchor's bandwidth vs the real count."""
    truth = json.load(open(params_json))
    bw = specs.set_index("instance")["mem_bandwidth_gbs"]
    m = medians.dropna(subset=list(FAM_COLS)).copy()
    m["true"] = [
        truth.get(f"{a}|{int(s)}", np.nan) for a, s in zip(m["model"], m["input_size"], strict=True)
    ]
    # profiles without optimizer time (its ops named otherwise) cannot size the gradients
    m = m.dropna(subset=["true"])[lambda d: d["fam_optimizer"] > 0]
    opt_s = m["fam_optimizer"] * 1e-6 / 2
    m["share"] = m["true"] * OPT_BYTES_PER_PARAM / (opt_s * m["instance"].map(bw) * 1e9)
    out = m.groupby("instance")["share"].median().rename("bandwidth_share").to_frame()
    share = float(m["share"].median())
    est = opt_s * m["instance"].map(bw) * 1e9 * share / OPT_BYTES_PER_PARAM
    m["ape"] = _ape(est, m["true"])
    out["mape_at_shared_share"] = m.groupby("instance")["ape"].mean()
    out["median_ape"] = m.groupby("instance")["ape"].median()
    own = m["instance"].map(out["bandwidth_share"])
    m["ape_own"] = _ape(est / share * own, m["true"])
    out["median_ape_own_share"] = m.groupby("instance")["ape_own"].median()
    out.loc["all"] = [share, m["ape"].mean(), m["ape"].median(), m["ape_own"].median()]
    return out.reset_index()


def goals(s_amp: pd.DataFrame, s_dp: pd.DataFrame) -> list[str]:
    """The issue's goals, met or missed, from the leave-one-GPU-out summaries."""
    gpus_amp, gpus_dp = s_amp[s_amp["catalog_gpu"] != "all"], s_dp[s_dp["catalog_gpu"] != "all"]
    a, d = s_amp.iloc[-1], s_dp.iloc[-1]
    ok = lambda c: "met" if c else "missed"  # noqa: E731
    return [
        f"- AMP gain MAPE <= 10% per GPU: {(gpus_amp['mape'] <= 10).sum()} of {len(gpus_amp)} "
        f"GPUs (mean {a['mape']:.1f}%): {ok((gpus_amp['mape'] <= 10).all())}",
        f"- AMP ahead of its baselines: {a['mape']:.1f}% vs constant {a['mape_constant']:.1f}%, "
        f"per-source constant {a['mape_constant_source']:.1f}%, tensor-peak "
        f"{a['mape_tensor_peak']:.1f}%: "
        f"{ok(a['mape'] < min(a['mape_constant'], a['mape_constant_source'], a['mape_tensor_peak']))}",
        f"- N-GPU scaling MAPE <= 8%: {d['mape']:.1f}% ({(gpus_dp['mape'] <= 8).sum()} of "
        f"{len(gpus_dp)} GPUs): {ok(d['mape'] <= 8)}; ahead of linear ({d['mape_linear']:.1f}%): "
        f"{ok(d['mape'] < d['mape_linear'])}",
        f"- 80% coverage within 75-85%: AMP {a['coverage_pct']:.0f}%, N-GPU "
        f"{d['coverage_pct']:.0f}%: {ok(75 <= a['coverage_pct'] <= 85 and 75 <= d['coverage_pct'] <= 85)}",
        "- FP32 speed-ups on every GPU: python bench/claims/published.py (docs/crossgpu.md).",
    ]


def alexnet_note(oof: pd.DataFrame) -> str:
    """The AMP MAPE of tf_cnn_benchmarks' AlexNet rows apart: fitted and counted like every row,
    but the data's AlexNet that profiles them is batch-normalised and theirs is not."""
    fit = oof[~oof["held_out"]]
    ape = pd.Series(_ape(fit["pred"], fit["gain"]), index=fit.index)
    alex = fit["model"].str.lower() == "alexnet"
    return (
        f"  - of which tf_cnn_benchmarks' AlexNet (no batch norm; the data's AlexNet stands in): "
        f"{int(alex.sum())} rows, MAPE {ape[alex].mean():.1f}%; every other row "
        f"{ape[~alex].mean():.1f}% (they stay fitted and counted)."
    )


def per_cnn(oof: pd.DataFrame) -> pd.DataFrame:
    """Leave-one-GPU-out AMP-gain MAPE (%) per source and CNN (fitted rows), with the data CNN
    whose profile stands in."""
    fit = oof[~oof["held_out"]].assign(ape=lambda d: _ape(d["pred"], d["gain"]))
    return (
        fit.groupby(["repo", "model", "profile"])
        .agg(rows=("ape", "size"), mape=("ape", "mean"))
        .reset_index()
    )


def report(data: str, params_json: str | None) -> str:
    t0 = time.time()
    medians = median_table(load_dataset(data))
    specs = load_specs()
    theta = CrossInstanceModel().fit_pairs(all_pairs(medians), specs).theta_
    table = load_published()
    gpus = gpu_table(specs)
    t = table.assign(repo=table["source"].str.split("@").str[0])
    used = t.groupby(["repo", "precision", "gpu_count"]).size().rename("rows").reset_index()
    state, pairs, shares = amp_state_from(table, gpus, medians, theta)
    amp_gpu = amp_logo(pairs, gpus, shares, "catalog_gpu")
    amp_src = amp_logo(pairs, gpus, shares, "repo")
    rows = scaling_rows(table, gpus)
    dp = fit_dataparallel(rows[~rows["held_out"]])
    dp_gpu, dp_src = dp_logo(rows, "catalog_gpu"), dp_logo(rows, "repo")
    b_amp, b_dp = ["constant", "constant_source", "tensor_peak"], ["linear"]
    s_amp = summarize(amp_gpu, "catalog_gpu", "gain", b_amp)
    s_dp = summarize(dp_gpu, "catalog_gpu", "scaling", b_dp)
    parts = [
        "## Mixed precision and data-parallel GPUs against published measurements",
        "",
        "Published rows per repository, precision and GPU count (`profet_core/data/published.csv`):",
        "",
        md_table(used, ".3g"),
        "",
        f"AMP pairs (one GPU, same repository/framework/GPU/CNN): {len(pairs)} "
        f"({int(pairs['held_out'].sum())} held out); N-GPU rows joined to their one-GPU row: "
        f"{len(rows)} ({int(rows['held_out'].sum())} held out).",
        "",
        "### AMP gain, leave-one-GPU-out (MAPE %)",
        "",
        md_table(s_amp, ".3g"),
        "",
        "### AMP gain, leave-one-source-out (MAPE %)",
        "",
        md_table(summarize(amp_src, "repo", "gain", b_amp), ".3g"),
        "",
        "Per source and CNN (leave-one-GPU-out, fitted rows; `profile`: the data CNN that stands"
        " in):",
        "",
        md_table(per_cnn(amp_gpu), ".3g"),
        "",
        "Held out (never fitted; predicted by the leave-one-GPU-out fits):",
        "",
        md_table(held_out_check(amp_gpu, "gain", b_amp), ".3g"),
        "",
        "A measured AMP step on the anchor (another GPU of the same source and CNN), out of fold:",
        "",
        md_table(anchor_amp_gain(amp_gpu), ".3g"),
        "",
        f"Learned on every fitted pair: {json.dumps({k: round(v, 3) for k, v in state.items() if isinstance(v, float)})}",
    ]
    parts += [
        "",
        "### N-GPU scaling, leave-one-GPU-out (MAPE %)",
        "",
        md_table(s_dp, ".3g"),
        "",
        "### N-GPU scaling, leave-one-source-out (MAPE %)",
        "",
        md_table(summarize(dp_src, "repo", "scaling", b_dp), ".3g"),
        "",
        "Per GPU count (leave-one-GPU-out):",
        "",
        md_table(
            summarize(
                dp_gpu.assign(n=dp_gpu["gpu_count"].astype(int).astype(str)), "n", "scaling", b_dp
            ),
            ".3g",
        ),
        "",
        "Held out (never fitted):",
        "",
        md_table(held_out_check(dp_gpu, "scaling", b_dp), ".3g"),
        "",
        f"Learned on every fitted row: k0 {dp['k0']:.4f}, k0_pcie {dp['k0_pcie']:.4f}, "
        f"k0_amp {dp.get('k0_amp', 0.0):.4f} (TensorFlow AMP without XLA), k1 {dp['k1']:.3f}",
    ]
    if params_json:
        parts += [
            "",
            "### Parameter count from the profile's optimizer time (the data's CNNs)",
            "",
            md_table(params_check(medians, specs, params_json), ".3g"),
        ]
    listed = goals(s_amp, s_dp)
    listed.insert(1, alexnet_note(amp_gpu))
    parts += ["", "Goals (leave-one-GPU-out):", "", *listed]
    parts += ["", f"Made by `python bench/claims/amp_multigpu.py` in {time.time() - t0:.0f} s."]
    return "\n".join(parts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/profet")
    ap.add_argument(
        "--params-json",
        default=str(Path(__file__).with_name("zoo_params.json")),
        help="true parameter counts {'Model|input_size': n} ('' to skip)",
    )
    ap.add_argument("--out", help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    emit(report(args.data, args.params_json), args.out)


if __name__ == "__main__":
    main()
