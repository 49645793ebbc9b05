"""Efficiency of the tensor-core generations (Ampere, Ada, Hopper...) from published speed-ups.

The data's four GPUs are FP32-only; on a TF32 GPU the spec model would scale convolutions by the
full tensor peak (about 10x an A100's FP32 over a V100). Published speed-up pairs whose baseline
GPU is in the data (:func:`profet_core.crossgpu.spec._published.published_pairs`) set how much of it
CNN training really gets: per published GPU ``k`` a log-time efficiency per class (compute,
memory), a roofline in the GPU's bytes per peak FLOP

    eta[k] = log(exp(a) + exp(b - z[k])) + v[k],   a ~ N(0, prior_sd_tensor),
    b ~ N(0, prior_sd_roof),   v[k] ~ N(0, prior_sd_efficiency)

on top of the data-trained model (its exponents, its data generations and residual learner stay
as they are). ``z[k]`` is log(memory bandwidth / the peak FP32 training uses) of the GPU, centred
on the catalog's tensor-core GPUs. A GPU with few bytes per FLOP (GDDR6 A10G, L40S) is held back
by its memory: its efficiency grows as ``b - z`` (time per FLOP ~ peak / bandwidth); one with
plenty of bandwidth per FLOP (GeForce RTX 3090) is compute-bound and gets at most the share
``exp(-a)`` of its peak: the term saturates where the linear slope it replaced
(``a + beta * z``, still read from older artifacts) kept promising more. ``a`` and ``b`` are
shared by every tensor-core GPU, so one nobody published yet starts from them. Tensor-core GPUs
are those whose FP32 training runs on TF32 tensor cores: the GeForce Ampere / Ada cards
(TF32 rate = FP32 rate) included. The terms are per GPU, not per generation: one generation's
GPUs differ too much (A10G's GDDR6 vs A100's HBM2) to share one; the structure is the one the
rule fixed in ``bench/studies/published_structures.py`` picks. Each (document, CNN, GPU) group weighs 1
in total (vendors' repeats of one table count once), with a looser noise than the data's:
frameworks, batches and XLA differ from PROFET's convention. Held-out rows (VGG16, Inception-v3)
are refused.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from ..._base import check_is_fitted
from ...errors import ProfetValueError
from ._basis import spec_positions
from ._pairs import FAM_COLS

#: Log-latency noise of one published pair (framework/convention gap; vs 0.1 for the data).
NOISE_SD = 0.2
#: Prior sd of the shared tensor-core efficiency ``mu`` (log units; weak).
PRIOR_SD_TENSOR = 1.0
#: Prior sd of ``beta``, the linear slope in log(bandwidth / peak) of older artifacts.
PRIOR_SD_BETA = 0.5
#: Prior sd of ``b``, the bandwidth-bound part of the roofline efficiency (log units; weak).
PRIOR_SD_ROOF = 1.0
#: Which bandwidth per peak FLOP the compute class's roofline term may read
#: (``CrossInstanceModel(compute_z=...)``, docs/family_roofline_rule.md): ``gpu`` its own (both
#: classes alike: the shipped choice), ``none`` none (convolutions and matrix products get no
#: credit for bandwidth; only the memory class moves with it), ``arch`` the mean over its
#: architecture's GPUs with published pairs.
COMPUTE_Z_MODES = ("gpu", "none", "arch")
#: Which GPUs get the shared tensor-core efficiency: every GPU with a TF32 rate (``tf32>0``);
#: artifacts made before the GeForce cards counted (``tf32>fp32``) keep their rule.
TENSOR_RULES = ("tf32>0", "tf32>fp32")


def tensor_flags(specs: pd.DataFrame, rule: str = TENSOR_RULES[0]) -> np.ndarray:
    """Whether each spec row's FP32 training runs on TF32 tensor cores, shape (n,)."""
    tf32 = specs["tensor_tflops_fp32_training"].to_numpy(dtype=float)
    floor = specs["fp32_tflops"].to_numpy(dtype=float) if rule == "tf32>fp32" else 0.0
    return tf32 > floor


def z_term(model, z) -> np.ndarray:
    """(n, 2) part of the shared efficiency that moves with ``z`` (centred log bytes per peak
    FLOP; shape (n,) for both classes alike, or (n, 2) per class: :func:`class_z`), 0 at the
    centre: ``log(exp(a) + exp(b - z)) - log(exp(a) + exp(b))`` (roofline, ``roof_`` = [a, b])
    or ``beta * z`` (older artifacts' linear slope)."""
    z = np.asarray(z, dtype=float)
    roof = getattr(model, "roof_", None)
    if roof is None:
        z1 = z if z.ndim == 1 else z[:, 1]
        return np.outer(z1, getattr(model, "tensor_beta_", np.zeros(2)))
    a, b = roof
    z2 = z[:, None] if z.ndim == 1 else z
    return np.logaddexp(a, b - z2) - np.logaddexp(a, b)


def class_z(model, rows, mode=None, z_arch=None) -> np.ndarray:
    """(n, 2) centred log bytes per peak FLOP of spec rows per class (compute, memory): the
    memory class reads the GPU's own; the compute class as ``mode`` (:data:`COMPUTE_Z_MODES`,
    default the model's ``compute_z_``) says: its own, 0 (no bandwidth credit) or its
    architecture's mean ``z_arch`` ({arch: z}; its own where its architecture has none)."""
    rows = np.asarray(rows)
    z = bandwidth_z(model, rows)
    mode = getattr(model, "compute_z_", "gpu") if mode is None else mode
    out = np.column_stack([z, z])
    if mode == "none":
        out[:, 0] = 0.0
    elif mode == "arch":
        z_arch = getattr(model, "z_arch_", {}) if z_arch is None else z_arch
        arch = model.spec_arch_[rows]
        out[:, 0] = [z_arch.get(a, zi) for a, zi in zip(arch, z, strict=True)]
    return out


def _log_bytes_per_flop(model, rows) -> np.ndarray:
    """log(memory bandwidth / the peak FP32 training uses) of spec rows ``rows``."""
    s = model.specs_
    tensor = model.spec_tensor_[rows]
    peak = np.where(
        tensor,
        s["tensor_tflops_fp32_training"].to_numpy(float)[rows],
        s["fp32_tflops"].to_numpy(float)[rows],
    )
    return np.log(s["mem_bandwidth_gbs"].to_numpy(float)[rows] / peak)


def bandwidth_z(model, rows) -> np.ndarray:
    """Centred log bytes per peak FLOP of spec rows (0 where the model has no centre: artifacts
    made before the bandwidth term)."""
    centre = getattr(model, "bw_centre_", None)
    if centre is None:
        return np.zeros(len(rows))
    return _log_bytes_per_flop(model, np.asarray(rows)) - centre


def _offsets(model, pairs: pd.DataFrame):
    """Design of the pairs on the data-trained model: families, spec gaps, residual, anchor eta."""
    fam, d_spec = model._design(pairs)
    res = np.zeros(len(pairs))
    if model.residual_model_ is not None:
        res = model.residual_model_.predict(model._res_features(fam, d_spec))
    return fam, d_spec, res, model._eta(pairs["anchor"])


def fit_published(model, pairs: pd.DataFrame, by: str = "target_gpu"):
    """Copy of a fitted :class:`CrossInstanceModel` with tensor-core efficiencies learned.

    Parameters
    ----------
    model : CrossInstanceModel
        Fitted on the data (:meth:`fit_pairs`).
    pairs : pandas.DataFrame
        :func:`published_pairs` rows (``held_out`` all False) whose anchors are trained
        instances and whose targets' generations the data lacks.
    by : str
        Column of ``pairs`` that groups the per-GPU terms (``target_gpu``; ``generation`` gives
        the per-generation structure, kept for the comparison).

    Returns
    -------
    CrossInstanceModel
        With ``tensor_eta_`` (mu, shape (2,)), ``published_eta_`` ({catalog GPU: [compute,
        memory]}) and ``published_n_`` ({catalog GPU: pairs}); ``basis`` says
        ``published (n)`` for their instances.
    """
    check_is_fitted(model, "theta_")
    from ._published import refuse_held_out

    refuse_held_out(pairs)
    if model.compute_z not in COMPUTE_Z_MODES or model.share_arch not in (True, False):
        raise ProfetValueError(
            f"compute_z must be one of {list(COMPUTE_Z_MODES)} and share_arch True or False; "
            f"got compute_z={model.compute_z!r}, share_arch={model.share_arch!r}"
        )
    new = copy.deepcopy(model)
    new.tensor_eta_, new.published_eta_, new.published_n_ = None, {}, {}
    new.published_arch_ = {}
    new.tensor_beta_, new.bw_centre_, new.roof_ = np.zeros(2), None, None
    new.compute_z_, new.z_arch_ = model.compute_z, {}
    if pairs.empty:
        return new
    gens = model.spec_arch_[model.spec_index_.get_indexer(pairs["target"])]
    known = set(model.generations_)
    if known & set(gens):
        raise ProfetValueError(f"published targets of data generations {sorted(known & set(gens))}")
    keys = gens if by == "generation" else pairs[by].to_numpy(dtype=object)
    names = sorted(set(keys))
    gi = pd.Index(names).get_indexer(keys)
    new.bw_centre_ = float(np.mean(_log_bytes_per_flop(model, np.flatnonzero(model.spec_tensor_))))
    rows = model.spec_index_.get_indexer(pairs["target"])
    if new.compute_z_ == "arch":  # the mean z of each architecture's GPUs in these pairs
        first = dict(zip(pairs["target_gpu"], rows, strict=True))
        zg = bandwidth_z(new, list(first.values()))
        by: dict = {}
        for r, zi in zip(first.values(), zg, strict=True):
            by.setdefault(model.spec_arch_[r], []).append(zi)
        new.z_arch_ = {a: float(np.mean(v)) for a, v in by.items()}
    z = class_z(new, rows)
    fam, d_spec, res, eta_a = _offsets(model, pairs)
    y = -np.log(pairs["speedup"].to_numpy(dtype=float))
    grp = pairs.groupby(["document", "model", "target_gpu"]).ngroup().to_numpy()
    w = np.sqrt(1.0 / np.bincount(grp)[grp]) / NOISE_SD

    def resid(p):
        a, b, u = p[:2], p[2:4], p[4:].reshape(-1, 2)
        shared = np.logaddexp(a, b - z)
        r = (model._log_ratio(fam, d_spec, shared + u[gi] - eta_a) + res - y) * w
        prior = [a / PRIOR_SD_TENSOR, b / PRIOR_SD_ROOF, p[4:] / model.prior_sd_efficiency]
        return np.concatenate([r, *prior])

    from scipy.optimize import least_squares

    sol = least_squares(resid, np.zeros(4 + 2 * len(names)), method="trf")
    a, b, u = sol.x[:2], sol.x[2:4], sol.x[4:].reshape(-1, 2)
    new.roof_ = np.vstack([a, b])
    # the shared efficiency at the catalog's centre (z = 0); z_term moves it per GPU
    new.tensor_eta_ = mu = np.logaddexp(a, b)
    new.published_eta_ = {g: mu + u[i] for i, g in enumerate(names)}
    new.published_n_ = {g: int(np.sum(gi == i)) for i, g in enumerate(names)}
    new.published_arch_ = (
        arch_offsets(model, dict(zip(names, u, strict=True))) if by != "generation" else {}
    )
    return new


def arch_offsets(model, offsets: dict) -> dict:
    """{architecture: [compute, memory]}: the mean per-GPU offset ``v`` (each GPU with published
    pairs weighs 1) of each architecture (``arch`` of the spec sheet), what a GPU of it without
    pairs of its own takes on top of ``mu`` (the H200 was given none while the H100's
    pairs put the H100 at +0.2 log units); empty where the model's ``share_arch`` is off."""
    if not model.share_arch:
        return {}
    arch = dict(zip(model.specs_["gpu"][::-1], model.spec_arch_[::-1], strict=True))
    by: dict = {}
    for g, v in offsets.items():
        by.setdefault(arch.get(g), []).append(np.asarray(v, float))
    return {a: np.mean(vs, axis=0) for a, vs in by.items() if a is not None}


def tensor_share(model) -> pd.DataFrame:
    """Per published GPU: compute/memory efficiency (log time, its bandwidth term included) and
    the share of the spec-sheet peak (FP32-training TFLOPS, bandwidth) it implies,
    ``exp(-eta)``; ``unseen (mu)``: a GPU at the catalog's centre bandwidth per peak FLOP."""
    check_is_fitted(model, "theta_")
    first = pd.Series(np.arange(len(model.specs_)), index=model.specs_["gpu"])
    first = first[~first.index.duplicated()]
    rows = []
    for g, e in getattr(model, "published_eta_", {}).items():
        z = class_z(model, [first[g]]) if g in first.index else np.zeros((1, 2))
        e = np.asarray(e) + z_term(model, z)[0]
        rows.append(
            {"gpu": g, "pairs": model.published_n_[g], "eta_compute": e[0], "eta_memory": e[1]}
        )
    if getattr(model, "tensor_eta_", None) is not None:
        mu = model.tensor_eta_
        rows.append({"gpu": "unseen (mu)", "pairs": 0, "eta_compute": mu[0], "eta_memory": mu[1]})
    out = pd.DataFrame(rows, columns=["gpu", "pairs", "eta_compute", "eta_memory"])
    out["compute_share_of_peak"] = np.exp(-out["eta_compute"])
    out["memory_share_of_bandwidth"] = np.exp(-out["eta_memory"])
    return out


def predict_speedups(model, pairs: pd.DataFrame) -> pd.DataFrame:
    """Predicted speed-ups (anchor latency / target latency) per member, one row per pair."""
    out = pd.DataFrame(index=pairs.index, dtype=float)
    for (a, t), grp in pairs.groupby(["anchor", "target"]):
        fam = grp[list(FAM_COLS)].to_numpy(dtype=float)
        lat = grp["anchor_latency_s"].to_numpy(dtype=float)
        _, members = model.predict_families(a, t, fam, lat)
        for name, v in members.items():
            out.loc[grp.index, name] = lat / v
    return out


def published_eta(model, names, gens, gi, rows=None) -> np.ndarray:
    """(n, 2) tensor-core efficiency of instances outside the data's generations (``gi < 0``):
    their GPU's from published pairs (or their generation's, where the terms were fitted per
    generation: ``fit_published(by="generation")``, which bench/studies/published_structures.py compares),
    else the shared ``mu`` (the roofline at the centre) where FP32 training runs on its TF32
    cores, else 0; plus :func:`z_term` (its bandwidth per peak FLOP) where either applies.
    ``rows``: the names' rows in the spec sheet, when the caller has them."""
    out = np.zeros((len(gi), 2))
    mu = getattr(model, "tensor_eta_", None)
    if mu is None:
        return out
    if not (np.asarray(gi) < 0).any():
        return out
    if rows is None:
        rows = model.spec_index_.get_indexer(pd.Index(names))
    tensor, gpus = model.spec_tensor_[rows], model.specs_["gpu"].to_numpy(dtype=object)[rows]
    slope = z_term(model, class_z(model, rows))
    shared = getattr(model, "published_arch_", {})
    for i, g in enumerate(gens):
        if gi[i] < 0:
            own = model.published_eta_.get(gpus[i], model.published_eta_.get(g))
            if own is None and g in shared:  # its architecture's published GPUs' mean offset
                own = mu + shared[g]
            if own is not None or tensor[i]:
                out[i] = (own if own is not None else mu) + slope[i]
    return out


def arch_note(model, targets) -> str | None:
    """The note of an answer whose ``specs only`` targets took their architecture's efficiency:
    which architectures, from which published GPUs and how many pairs; None where
    no target did."""
    shared = getattr(model, "published_arch_", {})
    if not shared:
        return None
    rows = spec_positions(model, targets)
    gpus = model.specs_["gpu"].to_numpy(dtype=object)
    arch = dict(zip(gpus[::-1], model.spec_arch_[::-1], strict=True))
    used = sorted(
        {
            model.spec_arch_[r]
            for r in rows
            if model.spec_arch_[r] in shared and gpus[r] not in model.published_eta_
        }
    )
    parts = []
    for a in used:
        own = sorted(g for g in model.published_eta_ if arch.get(g) == a)
        n = sum(model.published_n_[g] for g in own)
        parts.append(f"{a} from {', '.join(own)} ({n} pairs)")
    if not parts:
        return None
    return (
        "GPUs with no published measurement of their own take their architecture's mean "
        "tensor-core efficiency from the published GPUs of that architecture: " + "; ".join(parts)
    )


def published_state(model) -> dict:
    """JSON-able ``tensor_eta_``, ``roof_``, ``tensor_rule_``, ``published_eta_`` and
    ``published_n_``."""
    mu = getattr(model, "tensor_eta_", None)
    centre = getattr(model, "bw_centre_", None)
    roof = getattr(model, "roof_", None)
    # the compute class's bandwidth mode only where it is not the GPU's own z (the state
    # of the shipped choice stays as it was)
    mode = getattr(model, "compute_z_", "gpu")
    extra = (
        {}
        if mode == "gpu"
        else {
            "compute_z": mode,
            "z_arch": {a: float(v) for a, v in getattr(model, "z_arch_", {}).items()},
        }
    )
    return {
        "tensor_eta": None if mu is None else [float(v) for v in mu],
        "tensor_beta": [float(v) for v in getattr(model, "tensor_beta_", np.zeros(2))],
        "roof": None if roof is None else [[float(v) for v in r] for r in roof],
        "tensor_rule": getattr(model, "tensor_rule_", TENSOR_RULES[0]),
        "bw_centre": None if centre is None else float(centre),
        "eta": {g: [float(v) for v in e] for g, e in getattr(model, "published_eta_", {}).items()},
        "pairs": {g: int(n) for g, n in getattr(model, "published_n_", {}).items()},
        "arch": {
            a: [float(v) for v in e] for a, e in getattr(model, "published_arch_", {}).items()
        },
        **extra,
    }


def set_published_state(model, state: dict | None) -> None:
    """Inverse of :func:`published_state` (``None``: artifacts made before it existed)."""
    state = state or {}
    mu = state.get("tensor_eta")
    model.tensor_eta_ = None if mu is None else np.asarray(mu, dtype=float)
    # artifacts made before the bandwidth term: no slope, the efficiencies as they were fitted
    model.tensor_beta_ = np.asarray(state.get("tensor_beta", [0.0, 0.0]), dtype=float)
    roof = state.get("roof")
    model.roof_ = None if roof is None else np.asarray(roof, dtype=float).reshape(2, 2)
    # artifacts made before the GeForce Ampere / Ada cards counted as tensor-core GPUs
    model.tensor_rule_ = state.get("tensor_rule", TENSOR_RULES[1] if state else TENSOR_RULES[0])
    model.spec_tensor_ = tensor_flags(model.specs_, model.tensor_rule_)
    centre = state.get("bw_centre")
    model.bw_centre_ = None if centre is None else float(centre)
    model.published_eta_ = {g: np.asarray(e, float) for g, e in state.get("eta", {}).items()}
    model.published_n_ = {g: int(n) for g, n in state.get("pairs", {}).items()}
    # artifacts made before the architecture offsets: a GPU without pairs gets mu alone
    model.published_arch_ = {a: np.asarray(e, float) for a, e in state.get("arch", {}).items()}
    # artifacts made before the compute class's bandwidth term was chosen: the GPU's own z
    model.compute_z_ = state.get("compute_z", "gpu")
    model.z_arch_ = {a: float(v) for a, v in state.get("z_arch", {}).items()}
