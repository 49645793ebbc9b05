"""Candidate changes to the AMP-gain model, judged by a decision rule fixed before measuring them.

The AMP goal is a gain MAPE <= 10% on every GPU with published pairs. Each candidate below is
a physically motivated change that would apply to an unseen GPU and an unseen CNN; each is scored
leave-one-GPU-out and leave-one-source-out exactly as ``bench/claims/amp_multigpu.py`` scores the model
(``crossgpu.configurations._amp.amp_logo``; VGG16 and Inception-v3 rows never fitted, their error only reported).

The rule (``docs/amp_decision_rule.md``, committed before any candidate was run): the primary
score P is the mean over the left-out GPUs of each GPU's leave-one-GPU-out MAPE on fitted pairs; a
candidate is adopted only if it lowers P by >= 1.0 point, does not raise the leave-one-source-out
MAPE (row mean; 0.1-point tolerance) and keeps the cross-fitted 80% coverage within 75-85%.
Candidates that pass are stacked in the listed order. Prints the table; ``--out`` writes it.

    .venv/bin/python bench/studies/amp_candidates.py [--data ../shared/data/profet] [--out FILE]
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "claims"))  # bench/claims: _sections
from _sections import data_main, md_table, passes_rule

from profet_core import load_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.configurations import _amp
from profet_core.crossgpu.configurations._validate import held_out_errors, summarize_logo
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._pairs import FAM_COLS, MODEL_FAMILIES
from profet_core.crossgpu.spec._published import _profile, load_published, refuse_held_out
from profet_core.inputs._gpu_specs import load_specs

BASELINES = ["constant", "constant_source", "tensor_peak"]
ANCHOR = "NVIDIA V100 SXM2 16GB"
PER_STEP = np.isin(MODEL_FAMILIES, ["optimizer", "idle"])  # time per step, not per image


@contextmanager
def patched(**attrs):
    """Replace functions of ``crossgpu.configurations._amp`` for one candidate, restored afterwards."""
    old = {k: getattr(_amp, k) for k in attrs}
    try:
        for k, v in attrs.items():
            setattr(_amp, k, v)
        yield
    finally:
        for k, v in old.items():
            setattr(_amp, k, v)


def score(pairs, shares, gpus, source="repo", memory_families=_amp.MEMORY_FAMILIES):
    """(summary dict, per-GPU MAPE) of one model: leave-one-GPU-out and leave-one-source-out,
    each fold fitted with ``memory_families`` (``fit_amp``'s)."""
    by_gpu = _amp.amp_logo(pairs, gpus, shares, "catalog_gpu", memory_families)
    by_src = _amp.amp_logo(pairs, gpus, shares, source, memory_families)
    sg = summarize_logo(by_gpu, "catalog_gpu", "gain", BASELINES)
    ss = summarize_logo(by_src, source, "gain", BASELINES)
    per = sg[sg["catalog_gpu"] != "all"].set_index("catalog_gpu")["mape"]
    held = held_out_errors(by_gpu, "gain", BASELINES).set_index("model")["ape"]
    return {
        "P": per.mean(),
        "row_mape": sg.iloc[-1]["mape"],
        "loso": ss.iloc[-1]["mape"],
        "coverage": sg.iloc[-1]["coverage_pct"],
        "gpus_le_10": int((per <= 10).sum()),
        "vgg16_ape": held.get("vgg16", np.nan),
        "inception3_ape": held.get("inception3", np.nan),
    }, per


def _balance(g) -> np.ndarray:
    """log of the GPU's FP16 tensor FLOP per byte of bandwidth over 100 (C4)."""
    flops = g["fp16_tensor_tflops"].fillna(0).to_numpy() * 1e3
    return np.log(flops / g["mem_bandwidth_gbs"].to_numpy() + 1e-9) - np.log(100.0)


def _ratio(p, r, tf32, z, s):
    """``crossgpu.configurations._amp.step_ratio`` with a machine-balance term ``c * z`` (C4)."""
    expo = p["a"] + p["b"] * tf32 + p.get("c", 0.0) * z
    g_c = np.where(r > 0, np.maximum(1.0, r ** p["alpha"] * np.exp(expo)), 1.0)
    g_m = np.where(r > 0, 2.0 ** p["beta"], 1.0)
    t, m = _amp.TENSOR, _amp.MEMORY
    return s[:, t].sum(1) / g_c + s[:, m].sum(1) / g_m + s[:, ~t & ~m].sum(1)


def variant(balance=False, loss="linear", xla=None, row_xla=True):
    """``fit_amp``/``predict_gain`` replacements with the balance term (C4), a robust loss
    (R1) or an XLA offset (X1: ``xla``, each pair's flag 1/0 by the pairs' index; a pair's
    prediction gets its own flag where ``row_xla``, else XLA off); with none they are the
    package's own (checked in :func:`report`)."""
    from scipy.optimize import least_squares

    nc, nx = int(balance), int(xla is not None)

    def fit(pairs, gpus, shares, memory_families=_amp.MEMORY_FAMILIES):
        # the candidates keep the shipped memory-bound families (_ratio reads _amp.MEMORY)
        refuse_held_out(pairs)
        g, r, tf32, y, w, repos, ri = _amp.fit_inputs(pairs, gpus)
        z = _balance(g)
        x_on = xla.loc[pairs.index].to_numpy(float) if nx else np.zeros(len(y))
        k = 4 + nc + nx  # first source offset

        def resid(p):
            d = {"a": p[0], "b": p[1], "beta": p[2], "alpha": p[3], "c": p[4] if nc else 0.0}
            off, dx = p[k:], p[4 + nc] if nx else 0.0
            prior = np.concatenate([p[[0, 1, 4][: 2 + nc]] / 2.0, p[4 + nc : k] / _amp.SOURCE_SD,
                                    off / _amp.SOURCE_SD])  # fmt: skip
            fitted = -np.log(_ratio(d, r, tf32, z, shares)) + off[ri] + dx * x_on - y
            return np.concatenate([fitted * w, prior])

        lo = [-5, -5, 0, 0] + [-5] * nc + [-2] * nx + [-2] * len(repos)
        hi = [5, 5, 1, 1] + [5] * nc + [2] * nx + [2] * len(repos)
        x0 = [-0.5, 0.3, 0.7, 0.8] + [0.0] * (nc + nx) + [0.0] * len(repos)
        x = least_squares(resid, x0, bounds=(lo, hi), loss=loss, f_scale=0.1).x
        return {
            **dict(zip(["a", "b", "beta", "alpha"], x[:4], strict=True)),
            "c": float(x[4]) if nc else 0.0,
            "xla_offset": float(x[4 + nc]) if nx else 0.0,
            "source_offset": dict(zip(repos, x[k:], strict=True)),
        }

    def predict(state, gpus, names, shares, repos=None):
        g = gpus.loc[list(names)]
        r, tf32 = _amp._features(g)
        centre = _amp.user_offset(state)
        off = np.full(len(r), centre)
        if repos is not None:
            off = np.array([state["source_offset"].get(k, centre) for k in repos])
            if nx and row_xla:  # the row's own condition (amp_logo passes its pairs' index)
                off = off + state["xla_offset"] * xla.loc[repos.index].to_numpy(float)
        ratio = _ratio(state, r, tf32, _balance(g), np.asarray(shares, float))
        return np.where(r > 0, np.exp(off), 1.0) / ratio

    return fit, predict


def tf32_by_arch(gpus):
    """C1': FP32 training used TF32 tensor cores on every Ampere-or-later GPU (TF >= 2.4 turns
    TF32 on), also where its TF32 peak equals the CUDA-core FP32 peak (GeForce 3090/4090, Ada)."""
    real = _amp._features

    def features(g):
        r, _ = real(g)
        return r, g["arch"].isin(["Ampere", "Ada", "Hopper", "Blackwell"]).to_numpy(float)

    return features


def fp32_batches(table, pairs) -> np.ndarray:
    """The batch of each pair's FP32/TF32 row (NaN where the source gives none)."""
    one = table[table["gpu_count"] == 1].copy()
    one["repo"] = one["source"].str.split("@").str[0]
    one["gpu_published"] = one["gpu_published"].map(_amp.gpu_key)
    key = ["repo", "framework", "gpu_published", "model"]
    fp = one[one["precision"] != "AMP"].drop_duplicates(key)
    fp = fp[[*key, "batch_size"]].rename(columns={"batch_size": "bf"})
    return pairs[key].merge(fp, on=key, how="left")["bf"].to_numpy(float)


def batch_shares(table, pairs, medians, theta, gpus) -> np.ndarray:
    """C2: the FP32 step is the data's profile at the largest batch <= the FP32 row's batch with
    its per-image families scaled to that batch (optimizer and idle time are per step); the AMP
    step spreads its per-step time over the AMP batch (shares of the FP32 time per image)."""
    bf, ba = fp32_batches(table, pairs), pairs["batch_size"].to_numpy(float)
    out = np.zeros((len(pairs), len(FAM_COLS)))
    for i, p in enumerate(pairs.itertuples(index=False)):
        row = _profile(medians, "p3.2xlarge", p.profile, p.image_size, bf[i])
        fam = row[list(FAM_COLS)].to_numpy(float)
        both = np.isfinite(bf[i]) and np.isfinite(ba[i])
        if both:
            fam = np.where(PER_STEP, fam, fam * bf[i] / row["batch_size"])
        s = _amp.move_shares(theta, fam[None, :], gpus.loc[ANCHOR], gpus.loc[p.catalog_gpu])[0]
        out[i] = np.where(PER_STEP, s * bf[i] / ba[i], s) if both else s
    return out


def alexnet_without_bn(pairs, shares) -> np.ndarray:
    """C3: tf_cnn_benchmarks' AlexNet has no batch norm: the data's (batch-normalised) AlexNet
    profile without its normalisation time."""
    out = shares.copy()
    alex = (pairs["model"].str.lower() == "alexnet").to_numpy()
    out[alex, MODEL_FAMILIES.index("norm")] = 0.0
    out[alex] /= out[alex].sum(axis=1, keepdims=True)
    return out


def xla_flags(table, pairs) -> pd.Series:
    """X1: each pair's XLA flag (1 on; 0 off or unknown, the reference) from its AMP row (the
    audit found both rows of every pair share it), by the pairs' index."""
    one = table[(table["gpu_count"] == 1) & (table["precision"] == "AMP")]
    flag = one[["source", "model", "xla"]].drop_duplicates(["source", "model"])
    got = pairs[["source", "model"]].merge(flag, on=["source", "model"], how="left")["xla"]
    return pd.Series((got == "on").to_numpy(float), index=pairs.index)


def round3(table, pairs, shares):
    """Round 3 (declared after the audit, before measuring): X1, the XLA offset."""
    flags = xla_flags(table, pairs)
    fit_x, pred_x = variant(xla=flags)
    _, pred_off = variant(xla=flags, row_xla=False)
    return [
        ("X1 XLA flag as one log-offset (round 3)", pairs, shares, "repo",
         {"fit_amp": fit_x, "predict_gain": pred_x}),
        ("X1, every row predicted for XLA off (information only, not eligible)", pairs, shares,
         "repo", {"fit_amp": fit_x, "predict_gain": pred_off}),
    ]  # fmt: skip


def candidates(table, pairs, shares, medians, theta, gpus):
    """(name, pairs, shares, source column, patches) per candidate, in the rule's order."""
    by_fw = pairs.assign(source_repo=pairs["repo"], repo=pairs["repo"] + " | " + pairs["framework"])
    c2 = batch_shares(table, pairs, medians, theta, gpus)
    fit4, pred4 = variant(balance=True)
    fit_r, pred_r = variant(loss="soft_l1")
    return [
        ("C1' TF32 flag from the architecture", pairs, shares, "repo",
         {"_features": tf32_by_arch(gpus)}),
        ("C2 per-row FP32/AMP batch (per-step time amortised)", pairs, c2, "repo", {}),
        ("C3 AlexNet profile without batch norm", pairs, alexnet_without_bn(pairs, shares),
         "repo", {}),
        ("C4 FP16 machine balance (FLOP/byte) in the tensor gain", pairs, shares, "repo",
         {"fit_amp": fit4, "predict_gain": pred4}),
        ("C5 offset per source and framework", by_fw, shares, "source_repo", {}),
        ("R1 soft-L1 loss (round 2, declared after round 1)", pairs, shares, "repo",
         {"fit_amp": fit_r, "predict_gain": pred_r}),
        ("C2 + R1 (post hoc: information only, not eligible)", pairs, c2, "repo",
         {"fit_amp": fit_r, "predict_gain": pred_r}),
        *round3(table, pairs, shares),
    ]  # fmt: skip


def round3_outcome(out: pd.DataFrame, per: dict, offset: float) -> str:
    """X1's verdict in words, from the measured numbers (X1 against the current model; declared
    in round 3, judged again in round 4 on the table with Lambda's XLA-off runs)."""
    cur, x1 = out.iloc[0], out[out["candidate"].str.startswith("X1 XLA")].iloc[0]
    over = per["X1"][per["X1"] > 10].sort_values(ascending=False)
    return (
        f"X1 (the XLA offset; declared in round 3, judged in rounds 3 and 4; here on the current"
        f" table): P {x1['P']:.2f} against {cur['P']:.2f}"
        f" ({x1['P'] - cur['P']:+.2f} pp; the rule asks for -1.0), leave-one-source-out"
        f" {x1['loso']:.1f} against {cur['loso']:.1f}, coverage {x1['coverage']:.1f}%"
        f" (75-85 asked): {'passes the rule' if x1['passes_rule'] == 'yes' else 'fails the rule'}"
        " on this table (adopted only by a declared round: docs/amp_decision_rule.md). The fitted"
        f" offset (all fitted pairs) is {offset:+.3f} in log gain (XLA on: {np.expm1(offset):+.1%}"
        f" gain). GPUs over 10% with X1: {len(over)} of {len(per['X1'])} ("
        + ", ".join(f"{g.removeprefix('NVIDIA ')} {v:.1f}" for g, v in over.items())
        + f"); held-out APE (reported only): VGG16 {x1['vgg16_ape']:.1f}, Inception-v3"
        f" {x1['inception3_ape']:.1f}."
    )


def report(data: str) -> str:
    t0 = time.time()
    medians = median_table(load_dataset(data))
    specs = load_specs()
    theta = CrossInstanceModel().fit_pairs(all_pairs(medians), specs).theta_
    table, gpus = load_published(), gpu_table(specs)
    _, pairs, shares = _amp.amp_state_from(table, gpus, medians, theta)
    base, per0 = score(pairs, shares, gpus)
    fit0, pred0 = variant()
    with patched(fit_amp=fit0, predict_gain=pred0):
        same, _ = score(pairs, shares, gpus)
    assert abs(same["P"] - base["P"]) < 0.05, "the candidates' fit is not the package's"
    rows, per = [{"candidate": "current model", **base, "passes_rule": "-"}], {"current": per0}
    for name, p, s, src, patches in candidates(table, pairs, shares, medians, theta, gpus):
        with patched(**patches):
            key = name.split()[0].rstrip(",") + ("+R1" if "+ R1" in name else "")
            key += " (XLA off)" if "for XLA off" in name else ""
            row, per[key] = score(p, s, gpus, src)
        ok = passes_rule(row, base) and "not eligible" not in name
        rows.append({"candidate": name, **row, "passes_rule": "yes" if ok else "no"})
    out = pd.DataFrame(rows)
    fit = ~pairs["held_out"].to_numpy()
    fit_x, _ = variant(xla=xla_flags(table, pairs))
    offset = fit_x(pairs[fit], gpus, shares[fit])["xla_offset"]
    return "\n".join(
        [
            "## AMP gain: candidate model changes against a rule fixed beforehand",
            "",
            __doc__.split("\n\n")[2].replace("\n", " "),
            "",
            "P: mean over left-out GPUs of leave-one-GPU-out MAPE (%); row_mape: over rows; loso:"
            " leave-one-source-out MAPE (%); coverage: cross-fitted 80% interval (%); held-out"
            " APE reported, never a criterion; passes_rule: the rule's verdict on the table as it"
            " is now (a candidate is adopted only by the round that declared it).",
            "",
            md_table(out, ".1f"),
            "",
            "Leave-one-GPU-out MAPE (%) per GPU:",
            "",
            md_table(
                pd.DataFrame(per).reset_index().rename(columns={"index": "catalog_gpu"}), ".1f"
            ),
            "",
            round3_outcome(out, per, offset),
            "",
            f"Made by `python bench/studies/amp_candidates.py` in {time.time() - t0:.0f} s.",
        ]
    )


def main(argv=None) -> None:
    data_main(report, __doc__, argv)


if __name__ == "__main__":
    main()
