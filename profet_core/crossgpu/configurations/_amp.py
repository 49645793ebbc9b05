"""Mixed precision (AMP): how much faster a training step gets on a GPU, per op family.

``amp`` is what Keras ``mixed_float16`` / PyTorch autocast give: FP16 on Volta and Turing, BF16
or FP16 on Ampere and later. Both run on the same tensor cores at the same peak (the spec sheet's
``fp16_tensor_tflops`` is the FP16 and BF16 rate alike) and move the same bytes, so which one a
user picks changes nothing here (BF16 spares the loss scaling, a few small ops per step). Per
family of the FP32 step on the target (the anchor profile moved there by the spec model's
exponents):

- convolutions and matmuls speed up by ``max(1, r * exp(a + b * tf32))``: ``r`` the GPU's FP16
  tensor rate over the rate FP32 training used (TF32 tensor cores where there are any), ``a``
  how much of that FP16 peak CNN training reaches relative to FP32 CUDA cores, ``b`` the same
  against TF32 (learned);
- memory-bound families (depthwise, normalisation, pooling, activations, elementwise) by
  ``2 ** beta`` (bytes halved; ``beta`` learned in [0, 1]);
- the optimizer (FP32 master weights), transfers and idle/host time stay as they are.

Learned from published AMP vs FP32/TF32 pairs of one GPU (same repository, framework, GPU and
CNN, one GPU): each (repository, CNN, GPU) group weighs 1; each repository gets a log offset
(its framework, batches, XLA and pipeline differ: DeepLearningExamples' tuned AMP runs gain far
more than Lambda's PyTorch ones on the same A100), and predictions for a user's own training use their centre. Held-out rows (VGG16, Inception-v3)
are refused. A GPU without FP16 tensor cores (K80, M60, P100) gets its FP32 time and a note.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import ProfetValueError
from ..spec._gpuref import fp32_rate
from ..spec._pairs import FAM_COLS, MODEL_FAMILIES

TENSOR = np.array([f in ("conv", "matmul") for f in MODEL_FAMILIES])
#: The memory-bound families (bytes halved: ``2 ** beta``), the shipped choice of the AMP fit's
#: ``memory_families`` (recorded in its state; docs/amp_decision_rule.md kept depthwise in).
MEMORY_FAMILIES = ("depthwise", "norm", "pool", "activation", "elementwise")
MEMORY = np.isin(MODEL_FAMILIES, MEMORY_FAMILIES)
#: The data GPU whose profiles the AMP pairs' CNNs are moved from (the V100 of p3.2xlarge).
ANCHOR_GPU = "NVIDIA V100 SXM2 16GB"
#: Families whose time the spec model scales (transfers and idle time follow the host).
MOVES = np.array([f not in ("transfer", "idle") for f in MODEL_FAMILIES])
#: Parameters used where artifacts predate the AMP model (the fit of
#: ``learn_amp_dp`` on the shared data and the package's published.csv, held-out rows dropped;
#: ``python bench/claims/amp_multigpu.py --data ../shared/data/profet`` prints it).
#: Prior sd of a published source's log offset (its framework, batch, XLA and data pipeline
#: move every gain it reports; a user's own training gets offset 0, the sources' centre).
SOURCE_SD = 1.0
DEFAULT_STATE = {
    "a": 0.1380,
    "b": 0.3969,
    "beta": 0.5896,
    "alpha": 0.3495,
    "source_offset": {
        "LambdaColdStorage/lambda-tensorflow-benchmark": 0.3133,
        "NVIDIA/DeepLearningExamples": 0.5377,
        "lambdal/deeplearning-benchmark": 0.2020,
    },
    "pairs": {
        "NVIDIA A10": 2,
        "NVIDIA A100 PCIe 40GB": 6,
        "NVIDIA A100 PCIe 80GB": 2,
        "NVIDIA A100 SXM4 40GB": 3,
        "NVIDIA A100 SXM4 80GB": 9,
        "NVIDIA GeForce RTX 2080 Ti": 8,
        "NVIDIA GeForce RTX 3090": 6,
        "NVIDIA GeForce RTX 4090": 2,
        "NVIDIA H100 PCIe 80GB": 2,
        "NVIDIA H100 SXM5 80GB": 2,
        "NVIDIA Quadro RTX 8000": 10,
        "NVIDIA RTX 6000 Ada": 2,
        "NVIDIA RTX A6000": 10,
        "NVIDIA V100 SXM2 16GB": 12,
        "NVIDIA V100 SXM2 32GB": 8,
    },
    "half_width": 0.2835,
}


def gpu_key(name: str) -> str:
    """A published GPU name without its ``Nx`` count (``8x RTX A6000`` -> ``RTX A6000``)."""
    import re

    return re.sub(r"^(Lambda Cloud — |LambdaCloud )?\d+x ?", lambda m: m.group(1) or "", name)


def amp_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """AMP vs FP32/TF32 one-GPU pairs: same repository, framework, XLA setting, GPU and CNN.

    Returns
    -------
    pandas.DataFrame
        ``repo, framework, model, profile, catalog_gpu, gpu_published, source, baseline_source,
        gain`` (AMP / FP32 images/s), ``batch_size``, ``image_size``, ``held_out``.
    """
    from ..spec._published import held_out

    one = table[table["gpu_count"] == 1].copy()
    one["repo"] = one["source"].str.split("@").str[0]
    one["key"] = one["gpu_published"].map(gpu_key)
    one["profile"] = one["data_model"].where(one["data_model"] != "", one["profile_proxy"])
    # one source may publish a GPU under two conditions (Lambda's XLA and XLA-off runs)
    key = ["repo", "framework", "xla", "key", "model"]
    amp, fp = one[one["precision"] == "AMP"], one[one["precision"] != "AMP"]
    pairs = amp.merge(fp[[*key, "source", "images_per_s"]], on=key, suffixes=("", "_fp32"))
    pairs = pairs.drop_duplicates(key)
    out = pd.DataFrame(
        {
            "repo": pairs["repo"],
            "framework": pairs["framework"],
            "model": pairs["model"],
            "profile": pairs["profile"],
            "catalog_gpu": pairs["catalog_gpu"],
            "gpu_published": pairs["key"],
            "source": pairs["source"],
            "baseline_source": pairs["source_fp32"],
            "gain": pairs["images_per_s"] / pairs["images_per_s_fp32"],
            "batch_size": pairs["batch_size"],
            "image_size": pairs["image_size"],
        }
    ).reset_index(drop=True)
    out["held_out"] = held_out(out["model"]) | held_out(out["profile"])
    return out


def move_shares(theta, fam, anchor, target) -> np.ndarray:
    """Family times (n, 10) of an anchor profile moved to a target GPU by the spec model's
    exponents ``theta`` (10, 3), as shares of the target's device time.

    ``anchor``/``target``: rows of :func:`profet_core.crossgpu.spec._gpuref.gpu_table`.
    """

    def logs(g):
        rate = max(g["fp32_tflops"], g["tensor_tflops_fp32_training"] or 0.0)
        return np.log([rate, g["mem_bandwidth_gbs"], g["boost_clock_mhz"]])

    d = logs(anchor) - logs(target)
    t = np.asarray(fam, float) * np.exp((np.asarray(theta) @ d) * MOVES)
    return t / np.maximum(t.sum(axis=1, keepdims=True), 1e-12)


def _features(gpus: pd.DataFrame):
    """Per row of a GPU table: FP16 tensor rate over FP32 training's rate, and whether FP32
    training used TF32 tensor cores."""
    rate = fp32_rate(gpus)
    r = gpus["fp16_tensor_tflops"].fillna(0).to_numpy() / rate
    tf32 = (gpus["tensor_tflops_fp32_training"].fillna(0) > gpus["fp32_tflops"]).to_numpy()
    return r, tf32.astype(float)


def memory_mask(params: dict) -> np.ndarray:
    """Which :data:`MODEL_FAMILIES` get the bytes-halved gain: the state's ``memory_families``
    (:data:`MEMORY_FAMILIES` for states saved before it was recorded)."""
    names = params.get("memory_families")
    return MEMORY if names is None else np.isin(MODEL_FAMILIES, list(names))


def check_memory_families(names) -> tuple:
    """``names`` as a tuple of memory-bound families; refuses unknown, repeated or tensor ones."""
    names = tuple(names)
    allowed = [f for f, t in zip(MODEL_FAMILIES, TENSOR, strict=True) if not t]
    bad = [f for f in names if f not in allowed]
    if bad or len(set(names)) != len(names):
        raise ProfetValueError(
            f"memory_families must be distinct families of {allowed}; got {list(names)}"
        )
    return names


def step_ratio(params: dict, r, tf32, shares) -> np.ndarray:
    """AMP time / FP32 time of each row: ``r``, ``tf32`` shape (n,), ``shares`` (n, 10);
    ``params`` an AMP state (its ``memory_families``: :func:`memory_mask`)."""
    r, tf32 = np.asarray(r, float), np.asarray(tf32, float)
    g_c = np.where(
        r > 0,
        np.maximum(1.0, r ** params.get("alpha", 1.0) * np.exp(params["a"] + params["b"] * tf32)),
        1.0,
    )
    g_m = np.where(r > 0, 2.0 ** params["beta"], 1.0)
    s, mem = np.asarray(shares, float), memory_mask(params)
    return (
        s[:, TENSOR].sum(axis=1) / g_c
        + s[:, mem].sum(axis=1) / g_m
        + s[:, ~TENSOR & ~mem].sum(axis=1)
    )


def fit_amp(
    pairs: pd.DataFrame, gpus: pd.DataFrame, shares: np.ndarray, memory_families=MEMORY_FAMILIES
) -> dict:
    """Learn ``a``, ``b``, ``beta`` from :func:`amp_pairs` rows (none held out).

    Parameters
    ----------
    pairs : pandas.DataFrame
        :func:`amp_pairs` rows whose ``catalog_gpu`` is in ``gpus``.
    gpus : pandas.DataFrame
        :func:`profet_core.crossgpu.spec._gpuref.gpu_table`.
    shares : ndarray of shape (n, 10)
        Each pair's FP32 family shares on its GPU (:func:`move_shares`).
    memory_families : sequence of str
        The families that get the bytes-halved gain (default :data:`MEMORY_FAMILIES`).

    Returns
    -------
    dict
        ``a``, ``b``, ``beta``, ``pairs`` ({GPU: pairs}), ``half_width`` and
        ``source_half_width`` ({source: half-width}) (the defaults until cross-fitted:
        :func:`amp_half_widths` of :func:`amp_logo`), ``memory_families``.
    """
    from ..spec._published import refuse_held_out

    refuse_held_out(pairs)
    memory = list(check_memory_families(memory_families))
    if pairs.empty:
        raise ProfetValueError("no AMP pairs to fit")
    _, r, tf32, y, w, repos, ri = fit_inputs(pairs, gpus)
    from scipy.optimize import least_squares

    def resid(p):
        d = {"a": p[0], "b": p[1], "beta": p[2], "alpha": p[3], "memory_families": memory}
        ratio = step_ratio(d, r, tf32, shares)
        prior = np.concatenate([np.array([p[0], p[1]]) / 2.0, p[4:] / SOURCE_SD])
        return np.concatenate([(-np.log(ratio) + p[4:][ri] - y) * w, prior])

    lo, hi = [-5, -5, 0, 0] + [-2] * len(repos), [5, 5, 1, 1] + [2] * len(repos)
    sol = least_squares(resid, [-0.5, 0.3, 0.7, 0.8] + [0.0] * len(repos), bounds=(lo, hi))
    counts = pairs.groupby("catalog_gpu").size()
    return {
        "a": float(sol.x[0]),
        "b": float(sol.x[1]),
        "beta": float(sol.x[2]),
        "alpha": float(sol.x[3]),
        "source_offset": {k: float(v) for k, v in zip(repos, sol.x[4:], strict=True)},
        "pairs": {k: int(v) for k, v in counts.items()},
        "half_width": DEFAULT_STATE["half_width"],
        "source_half_width": {},
        "memory_families": memory,
    }


def fit_inputs(pairs: pd.DataFrame, gpus: pd.DataFrame) -> tuple:
    """What :func:`fit_amp` fits on: ``(g, r, tf32, y, w, repos, ri)``, the pairs' GPU rows,
    their tensor-rate ratio and TF32 flag (:func:`_features`), the log gains, the weights (each
    source, CNN and GPU group weighs 1 in all), the sources (sorted) and each pair's source
    position."""
    g = gpus.loc[pairs["catalog_gpu"]]
    r, tf32 = _features(g)
    y = np.log(pairs["gain"].to_numpy(float))
    grp = pairs.groupby(["repo", "model", "catalog_gpu"]).ngroup().to_numpy()
    w = np.sqrt(1.0 / np.bincount(grp)[grp])
    repos = sorted(set(pairs["repo"]))
    return g, r, tf32, y, w, repos, pd.Index(repos).get_indexer(pairs["repo"])


def user_offset(state: dict) -> float:
    """Log offset of a user's own training: the centre (mean) of the published sources'."""
    offsets = list(state.get("source_offset", {}).values())
    return float(np.mean(offsets)) if offsets else 0.0


def predict_gain(state: dict, gpus: pd.DataFrame, names, shares, repos=None) -> np.ndarray:
    """Predicted AMP gain (FP32 time / AMP time) of rows on GPUs ``names`` (1 without
    tensor cores); ``repos``: the published sources whose learned offsets apply (none, or a
    source the state has no offset for: their centre, :func:`user_offset`, the setting of a
    user's own training)."""
    r, tf32 = _features(gpus.loc[list(names)])
    centre = user_offset(state)
    off = np.full(len(r), centre)
    if repos is not None:  # a source the fit never saw is a user's own setup: the centre
        off = np.array([state.get("source_offset", {}).get(k, centre) for k in repos])
    return np.where(r > 0, np.exp(off), 1.0) / step_ratio(state, r, tf32, shares)


def amp_logo(
    pairs: pd.DataFrame,
    gpus: pd.DataFrame,
    shares: np.ndarray,
    by="catalog_gpu",
    memory_families=MEMORY_FAMILIES,
):
    """Leave-one-group-out AMP gains (``by``: ``catalog_gpu`` or ``repo``) with baselines, each
    fold fitted by :func:`fit_amp` with ``memory_families``.

    Returns the pairs with ``pred`` (the model refitted without the group), ``constant`` (the
    median gain of the other groups' pairs), ``constant_source`` (the same within the row's
    source, NaN where it has no other pair) and ``tensor_peak`` (the FP16/FP32 peak ratio).
    Held-out pairs are predicted by the fit on every non-held-out pair of other groups; a left-out
    GPU's pairs get their source's offset (a source left out: the sources' centre).
    """
    out = pairs.copy()
    out["pred"] = out["constant"] = out["constant_source"] = np.nan
    r, _ = _features(gpus.loc[pairs["catalog_gpu"]])
    out["tensor_peak"] = np.where(r > 0, r, 1.0)
    for key in sorted(set(pairs[by])):
        train = (pairs[by] != key) & ~pairs["held_out"]
        test = (pairs[by] == key).to_numpy()
        st = fit_amp(pairs[train], gpus, shares[train.to_numpy()], memory_families)
        out.loc[test, "pred"] = predict_gain(
            st, gpus, pairs.loc[test, "catalog_gpu"], shares[test], pairs.loc[test, "repo"]
        )
        out.loc[test, "constant"] = float(np.median(pairs.loc[train, "gain"]))
        for repo in set(pairs.loc[test, "repo"]):
            same = train & (pairs["repo"] == repo)
            value = np.median(pairs.loc[same, "gain"]) if same.any() else np.nan
            out.loc[test & (pairs["repo"] == repo).to_numpy(), "constant_source"] = value
    return out


#: Fewest out-of-fold rows of one source that set its own interval (else all sources' rows).
MIN_SOURCE_ROWS = 8


def conformal_half_width(err, level: float = 0.8) -> float:
    """Split-conformal log half-width: the ``ceil((n + 1) * level)``-th smallest of ``n``
    out-of-fold |log errors| (an interval that covers a new exchangeable row with probability
    at least ``level``; the plain ``level`` quantile of ``n`` rows covers less)."""
    e = np.sort(np.asarray(err, float))
    if e.size == 0:
        raise ProfetValueError("no out-of-fold errors to set an interval on")
    k = int(np.ceil((e.size + 1) * level))
    return float(e[min(k, e.size) - 1])


def amp_half_widths(oof: pd.DataFrame, level: float = 0.8) -> tuple[float, dict]:
    """80% log half-widths of the AMP gain from out-of-fold rows (:func:`amp_logo`, held-out
    rows not used): all sources together (a user's own training, which is none of them) and per
    published source with at least :data:`MIN_SOURCE_ROWS` rows (Mondrian conformal: each
    source's spread, e.g. tf_cnn_benchmarks' AlexNet rows, sets its own interval)."""
    fit = oof[~oof["held_out"]]
    err = np.abs(np.log(fit["pred"] / fit["gain"])).to_numpy(float)
    per = {
        str(k): conformal_half_width(err[(fit["repo"] == k).to_numpy()], level)
        for k, n in fit["repo"].value_counts().items()
        if n >= MIN_SOURCE_ROWS
    }
    return conformal_half_width(err, level), per


def crossfit_amp_coverage(oof: pd.DataFrame, by: str = "catalog_gpu", level: float = 0.8):
    """Whether (1.0/0.0) each non-held-out row's gain lies in the 80% interval set by
    :func:`amp_half_widths` on the other groups' rows (its source's where it has enough there,
    else all of them), so no group sets its own interval."""
    fit = oof[~oof["held_out"]]
    err = np.abs(np.log(fit["pred"] / fit["gain"])).to_numpy(float)
    inside = pd.Series(np.nan, index=fit.index)
    for key in set(fit[by]):
        test = (fit[by] == key).to_numpy()
        pooled, per = amp_half_widths(fit[~test], level)
        hw = fit.loc[test, "repo"].map(per).fillna(pooled).to_numpy(float)
        inside[test] = (err[test] <= hw).astype(float)
    return inside


def amp_state_from(
    table, gpus, medians, theta, anchor_gpu=ANCHOR_GPU, memory_families=MEMORY_FAMILIES
):
    """Fit the AMP model on a published table's pairs (:func:`amp_pairs`):
    :func:`amp_state_of_pairs`; returns (state, pairs, shares)."""
    return amp_state_of_pairs(amp_pairs(table), gpus, medians, theta, anchor_gpu, memory_families)


def amp_state_of_pairs(
    pairs, gpus, medians, theta, anchor_gpu=ANCHOR_GPU, memory_families=MEMORY_FAMILIES
):
    """Fit the AMP model (:func:`fit_amp`, held-out rows dropped before the fit) on
    :func:`amp_pairs`-shaped rows whose GPU is in ``gpus`` and whose CNN the data has, each
    CNN's profile taken from the data's ``p3.2xlarge`` medians and moved to the pair's GPU by
    the spec model's exponents ``theta``; returns (state, pairs, shares)."""
    from ..spec._published import _profile

    pairs = pairs[
        pairs["catalog_gpu"].isin(gpus.index) & pairs["profile"].isin(set(medians["model"]))
    ]
    pairs = pairs.reset_index(drop=True)
    anchor = gpus.loc[anchor_gpu]
    shares = np.zeros((len(pairs), len(FAM_COLS)))
    for i, p in enumerate(pairs.itertuples(index=False)):
        row = _profile(medians, "p3.2xlarge", p.profile, p.image_size, p.batch_size)
        fam = row[list(FAM_COLS)].to_numpy(float)[None, :]
        shares[i] = move_shares(theta, fam, anchor, gpus.loc[p.catalog_gpu])[0]
    fit = ~pairs["held_out"].to_numpy()
    state = fit_amp(pairs[fit], gpus, shares[fit], memory_families)
    return state, pairs, shares
