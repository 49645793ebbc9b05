"""Data-parallel training on N GPUs of one instance (synchronous, per-GPU batch unchanged).

One step on N GPUs takes the one-GPU step plus a synchronisation cost that grows with the
GPU count and the part of the gradient all-reduce that does not overlap the backward pass:

    T_N = T_1 * (1 + (k0 + k0_amp * f) * log2(N)) + k1 * A_N,   A_N = 2 (N - 1) / N * 4 P / B

(``k0`` over NVLink/NVSwitch, ``k0_pcie`` over PCIe; ``f`` = 1 for TensorFlow AMP without XLA,
whose published runs scale worse than FP32 on the same servers although the gradient bytes are
the same: docs/amp_decision_rule.md, round 7; a user's AMP answer is for that condition)

with ``P`` the parameter count (FP32 gradients: AMP keeps FP32 master gradients), ``B`` the
per-GPU interconnect bandwidth (``interconnect_gbs``; an NVLink bridge's where the published
row names one; GeForce cards without peer-to-peer share the host's links, ``B * 2 / N``) and
``k0, k0_pcie, k0_amp, k1 >= 0`` learned from published 1/2/4/8-GPU rows of one GPU, source,
framework, CNN and precision (``k1`` is the non-overlapped share of the ring all-reduce over the
bandwidth actually reached). Held-out rows (VGG16, Inception-v3) are refused.

The 80% interval of the step factor is split-conformal on leave-one-GPU-out errors, set apart
for GPUs without peer-to-peer (round 9) and per doubling of the GPU count (round 10): an answer
on N GPUs is widened by ``q log2 N`` with ``q`` its class's width.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import ProfetValueError
from ._amp import gpu_key

#: Parameter counts of the published CNNs (ImageNet heads, 1000 classes). Keras applications'
#: ``count_params`` for ResNet50/152, InceptionV3, VGG16; the architectures' papers / reference
#: implementations for the rest (SSD300: the MLPerf ResNet-34 backbone, approximate;
#: EfficientNet: torchvision).
PARAMS = {
    "resnet50": 25.6e6,
    "resnet-50 v1.5": 25.6e6,
    "resnet152": 60.4e6,
    "inception3": 23.9e6,
    "inception4": 42.7e6,
    "vgg16": 138.4e6,
    "alexnet": 61.1e6,
    "resnext101-32x4d": 44.2e6,
    "se-resnext101-32x4d": 49.0e6,
    "ssd": 22.9e6,
    # torchvision's counts for the same architectures (round 8, D2); the WideSE variants have
    # none on record, so they form no scaling rows
    "efficientnet-b0": 5.288548e6,
    "efficientnet-b4": 19.341616e6,
}
#: Used where artifacts predate the model (the same fit as the AMP default).
DEFAULT_STATE = {
    "k0": 0.0345,
    "k0_pcie": 0.0299,
    "k0_amp": 0.1464,
    "k1": 0.7931,
    "rows": {
        "NVIDIA A100 PCIe 40GB": 24,
        "NVIDIA A100 PCIe 80GB": 4,
        "NVIDIA A100 SXM4 40GB": 6,
        "NVIDIA A100 SXM4 80GB": 22,
        "NVIDIA GeForce RTX 2080 Ti": 48,
        "NVIDIA GeForce RTX 3090": 28,
        "NVIDIA GeForce RTX 4090": 4,
        "NVIDIA H100 PCIe 80GB": 12,
        "NVIDIA H100 SXM5 80GB": 12,
        "NVIDIA Quadro RTX 8000": 48,
        "NVIDIA RTX 6000 Ada": 12,
        "NVIDIA RTX A6000": 44,
        "NVIDIA V100 SXM2 16GB": 28,
        "NVIDIA V100 SXM2 32GB": 16,
    },
    # round 10: per doubling of the GPU count, per peer-to-peer class (pooled where one lacks)
    "half_width": 0.1369,
    "class_half_width": {"no_p2p": 0.3418, "p2p": 0.0368},
    "per_log2n": True,
}
#: Bytes of one gradient value in the all-reduce.
GRAD_BYTES = 4.0


def allreduce_s(params, n_gpus, gbs) -> np.ndarray:
    """Ring all-reduce time (s) of ``params`` FP32 gradients over ``n_gpus`` at ``gbs`` GB/s
    per GPU (a negative ``gbs``: staged through host memory, whose links the GPUs share, so
    each gets ``|gbs| * 2 / N``)."""
    n = np.asarray(n_gpus, float)
    g = np.asarray(gbs, float)
    g = np.where(g < 0, -g / np.maximum(1.0, n / 2.0), g)
    return 2.0 * (n - 1) / n * GRAD_BYTES * np.asarray(params, float) / (g * 1e9)


def link_gbs(gpus: pd.DataFrame, bridge=None) -> np.ndarray:
    """Per-GPU all-reduce bandwidth of GPU table rows (an NVLink bridge's where ``bridge`` and
    the card has one; negative: no peer-to-peer, staged through host memory at half the
    ``interconnect_gbs`` link speed)."""
    gbs = gpus["interconnect_gbs"].to_numpy(float)
    if bridge is not None:
        b = gpus["nvlink_bridge_gbs"].to_numpy(float)
        gbs = np.where(np.asarray(bridge) & (b > 0), b, gbs)
    # Without peer-to-peer each gradient byte crosses the PCIe link twice (GPU to host memory,
    # host memory to GPU): half the link's bandwidth, whatever sheet the link speed came from.
    return np.where(gpus["p2p"].to_numpy(float) == 0, -gbs / 2.0, gbs)


def scaling_rows(table: pd.DataFrame, gpus: pd.DataFrame, param_counts=None) -> pd.DataFrame:
    """N-GPU rows joined to their one-GPU row (same repository, framework, XLA setting, GPU, CNN
    and precision); ``param_counts`` ({lower-case CNN name: parameters}, default
    :data:`PARAMS`) gives each row's parameter count.

    Returns
    -------
    pandas.DataFrame
        ``repo, framework, model, precision, catalog_gpu, gpu_published, gpu_count, source,
        t1_s`` (one-GPU step time at the per-GPU batch), ``scaling`` (N-GPU images/s over N
        times the one-GPU images/s), ``params``, ``gbs``, ``held_out``.
    """
    from ..spec._published import held_out

    t = table.copy()
    t["repo"] = t["source"].str.split("@").str[0]
    t["key"] = t["gpu_published"].map(gpu_key)
    # one source may publish a GPU under two conditions (Lambda's XLA and XLA-off runs)
    key = ["repo", "framework", "xla", "key", "model", "precision"]
    one = t[t["gpu_count"] == 1][[*key, "images_per_s", "batch_size"]]
    many = t[t["gpu_count"] > 1].merge(one, on=key, suffixes=("", "_1"))
    many = many[many["catalog_gpu"].isin(gpus.index)]
    params = many["model"].str.lower().map(PARAMS if param_counts is None else param_counts)
    batch = many["batch_size_1"].fillna(many["batch_size"]).fillna(256.0)
    g = gpus.loc[many["catalog_gpu"]]
    bridge = many["gpu_published"].str.contains("NVLink").to_numpy()
    gbs = link_gbs(g, bridge)
    pcie = (g["interconnect"].to_numpy() == "pcie") & ~bridge
    out = pd.DataFrame(
        {
            "repo": many["repo"].to_numpy(),
            "framework": many["framework"].to_numpy(),
            "model": many["model"].to_numpy(),
            "precision": many["precision"].to_numpy(),
            "catalog_gpu": many["catalog_gpu"].to_numpy(),
            "gpu_published": many["key"].to_numpy(),
            "gpu_count": many["gpu_count"].to_numpy(float),
            "source": many["source"].to_numpy(),
            "t1_s": (batch / many["images_per_s_1"]).to_numpy(float),
            "scaling": (
                many["images_per_s"] / (many["gpu_count"] * many["images_per_s_1"])
            ).to_numpy(float),
            "params": params.to_numpy(float),
            "gbs": gbs.astype(float),
            "pcie": pcie,
            # no peer-to-peer (gradients staged through host memory): its own interval
            "no_p2p": gbs < 0,
            # TensorFlow AMP without XLA: its own synchronisation cost (round 7, N3)
            "amp_noxla": (
                (many["framework"] == "TensorFlow")
                & (many["xla"] == "off")
                & (many["precision"] == "AMP")
            ).to_numpy(),
        }
    )
    out["held_out"] = held_out(out["model"])
    return out.dropna(subset=["params", "gbs"]).reset_index(drop=True)


def step_factor(state: dict, t1_s, n_gpus, params, gbs, pcie=False, amp_noxla=False) -> np.ndarray:
    """T_N / T_1 for one-GPU step times ``t1_s`` (s); ``pcie``: GPUs talking over PCIe (their
    own synchronisation cost ``k0_pcie``); ``amp_noxla``: TensorFlow AMP without XLA (adds
    ``k0_amp``, 0 where the state has none)."""
    n = np.asarray(n_gpus, float)
    t1 = np.asarray(t1_s, float)
    a = allreduce_s(params, n, gbs)
    k0 = np.where(np.asarray(pcie, bool), state.get("k0_pcie", state["k0"]), state["k0"])
    k0 = k0 + state.get("k0_amp", 0.0) * np.asarray(amp_noxla, float)
    return 1.0 + k0 * np.log2(n) + state["k1"] * a / t1


def fit_dataparallel(rows: pd.DataFrame, amp_sync: bool = True) -> dict:
    """Learn ``k0``, ``k0_pcie``, ``k1`` (and ``k0_amp`` where ``amp_sync``) from
    :func:`scaling_rows` (none held out); each (repository, CNN, GPU, precision) group weighs 1."""
    from ..spec._published import refuse_held_out

    refuse_held_out(rows)
    if rows.empty:
        raise ProfetValueError("no multi-GPU rows to fit")
    y = np.log(rows["scaling"].to_numpy(float))
    grp = rows.groupby(["repo", "model", "catalog_gpu", "precision"]).ngroup().to_numpy()
    w = np.sqrt(1.0 / np.bincount(grp)[grp])
    cols = [rows[c].to_numpy(float) for c in ("t1_s", "gpu_count", "params", "gbs")]
    pcie = rows["pcie"].to_numpy(bool)
    flag = rows["amp_noxla"].to_numpy(bool)
    from scipy.optimize import least_squares

    def resid(p):
        st = {"k0": p[0], "k1": p[1], "k0_pcie": p[2], "k0_amp": p[3] if len(p) > 3 else 0.0}
        return (-np.log(step_factor(st, *cols, pcie, flag)) - y) * w

    x0, lo, hi = [0.02, 0.5, 0.02], [0, 0, 0], [1, 50, 1]
    if amp_sync and flag.any():
        x0, lo, hi = [*x0, 0.0], [*lo, 0], [*hi, 1]
    sol = least_squares(resid, x0, bounds=(lo, hi))
    # a fit without such rows has nothing to learn k0_amp from: it stays 0
    amp_k = float(sol.x[3]) if len(sol.x) > 3 else 0.0
    counts = rows.groupby("catalog_gpu").size()
    out = {
        "k0": float(sol.x[0]),
        "k0_pcie": float(sol.x[2]),
        "k1": float(sol.x[1]),
        "rows": {k: int(v) for k, v in counts.items()},
        # the default interval until cross-fitted (:func:`half_widths` of :func:`dp_logo`)
        **{k: DEFAULT_STATE[k] for k in ("half_width", "class_half_width", "per_log2n")},
    }
    if amp_sync:
        out["k0_amp"] = amp_k
    return out


#: Interval classes (Mondrian split-conformal, round 9): GPUs without peer-to-peer and the rest.
CLASSES = ("no_p2p", "p2p")
#: Ways to set the interval: one width for all rows (before round 9), one per class of
#: :data:`CLASSES` (round 9, I1), one per class and per doubling of the GPU count (round 10, I2).
INTERVALS = ("pooled", "class", "class_log2n")
#: The shipped way (round 10, adopted by its rule: docs/amp_decision_rule.md).
INTERVAL = "class_log2n"


def _scores(rows: pd.DataFrame, kind: str) -> np.ndarray:
    """Conformity scores: |log error|, per doubling of the GPU count for ``class_log2n``."""
    err = np.abs(np.log(rows["pred"] / rows["scaling"])).to_numpy(float)
    return err / np.log2(rows["gpu_count"].to_numpy(float)) if kind == "class_log2n" else err


def half_widths(oof: pd.DataFrame, level: float = 0.8, kind: str = INTERVAL) -> dict:
    """The N-GPU interval's state from out-of-fold rows (:func:`dp_logo`, held-out rows not
    used): ``half_width`` (80% split-conformal log half-width of all rows), ``class_half_width``
    (``kind`` other than ``pooled``: per class of :data:`CLASSES` with at least
    ``MIN_SOURCE_ROWS`` rows, so the few GPUs without peer-to-peer, whose published scaling the
    model misses most, set their own wider interval) and ``per_log2n`` (``class_log2n``: the
    widths are per doubling of the GPU count)."""
    from ._amp import MIN_SOURCE_ROWS, conformal_half_width

    if kind not in INTERVALS:
        raise ProfetValueError(f"interval {kind!r}: expected one of {', '.join(INTERVALS)}")
    fit = oof[~oof["held_out"]]
    err = _scores(fit, kind)
    no_p2p = fit["no_p2p"].to_numpy(bool)
    per = {}
    for name, rows in zip(CLASSES, (no_p2p, ~no_p2p), strict=True):
        if kind != "pooled" and rows.sum() >= MIN_SOURCE_ROWS:
            per[name] = conformal_half_width(err[rows], level)
    return {
        "half_width": conformal_half_width(err, level),
        "class_half_width": per,
        "per_log2n": kind == "class_log2n",
    }


def row_half_width(state: dict, no_p2p, n_gpus) -> np.ndarray:
    """Each row's 80% log half-width on ``n_gpus``: its class's where ``state`` has one
    (``class_half_width``), else the pooled ``half_width`` (artifacts before round 9); times
    log2 N where the state's widths are per doubling (``per_log2n``)."""
    per = state.get("class_half_width", {})
    cls = np.where(np.asarray(no_p2p, bool), CLASSES[0], CLASSES[1])
    hw = np.array([per.get(c, state["half_width"]) for c in cls], float)
    if state.get("per_log2n", False):
        hw = hw * np.log2(np.asarray(n_gpus, float))
    return hw


def crossfit_coverage(oof: pd.DataFrame, by: str = "catalog_gpu", level=0.8, kind=INTERVAL):
    """Whether (1.0/0.0) each non-held-out row's scaling lies in the 80% interval set by
    :func:`half_widths` on the other groups' rows (its class's where it has enough there)."""
    fit = oof[~oof["held_out"]]
    err = np.abs(np.log(fit["pred"] / fit["scaling"])).to_numpy(float)
    inside = pd.Series(np.nan, index=fit.index)
    for key in set(fit[by]):
        test = (fit[by] == key).to_numpy()
        st = half_widths(fit[~test], level, kind)
        hw = row_half_width(st, fit["no_p2p"][test], fit["gpu_count"][test])
        inside[test] = (err[test] <= hw).astype(float)
    return inside


def dp_logo(rows: pd.DataFrame, by: str = "catalog_gpu", amp_sync: bool = True) -> pd.DataFrame:
    """Leave-one-group-out predicted ``scaling`` (``pred``) and the linear baseline (1)."""
    out = rows.copy()
    out["pred"] = np.nan
    out["linear"] = 1.0
    cols = ("t1_s", "gpu_count", "params", "gbs")
    for key in sorted(set(rows[by])):
        test = (rows[by] == key).to_numpy()
        st = fit_dataparallel(rows[(rows[by] != key) & ~rows["held_out"]], amp_sync)
        f = step_factor(
            st,
            *[rows.loc[test, c].to_numpy(float) for c in cols],
            rows.loc[test, "pcie"],
            rows.loc[test, "amp_noxla"],
        )
        out.loc[test, "pred"] = 1.0 / f
    return out
