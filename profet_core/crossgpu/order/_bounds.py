"""Roofline bounds between two GPUs' steps: the spec order's general form.

A training step is a sum of op times, each limited by one resource of the GPU it runs on: the
rate convolutions and matrix products run on (``matmul``: the FP32 CUDA-core rate, or the TF32
tensor rate where FP32 training runs on it; with AMP also the FP16 tensor rate), the FP32
CUDA-core rate of the other arithmetic (``vector``), the memory bandwidth and, with several
GPUs per step, the link the gradients cross. If every resource of GPU A is at least ``r`` times
B's (``r``: the least ratio), no op of the step takes longer on A than on B over ``r``, so
neither does the step: ``t_A <= t_B / r``. Host-bound time does not scale with the GPU, so the
bound that holds whatever share of the step it is, is ``t_A <= t_B * max(1, 1 / r)``: where
A is at least B in every resource (``r >= 1``), A is not slower than B; where it is not, A is
slower by at most its largest shortfall (the L4 has 94% of the T4's bandwidth and 3.7x its FP32
rate: at most 1/0.94 of the T4's step). The same bound read from B's side says how much faster A
can be: at most the largest resource ratio (an H200 has the H100's rates and 1.43x its
bandwidth: its step is at least the H100's over 1.43).

:func:`bound_matrix` gives every pair's factor ``H[a, b]`` (``t_a <= H[a, b] * t_b``); the spec
order holds answers to :func:`order_bounds` (10% more where neither GPU dominates the other)
with :func:`order_matrix`. Measurements against the pure bounds (``python
bench/claims/validation.py``): the published one-GPU tables at one batch size stay within them
(1 of 102 ordered pairs past, by 0.2%); at each GPU's own batch 13 of 390 are past, 2 by more
than 10% (the power-capped A10 at 1.22x against the RTX A6000); the data's own K80 and T4 run
far below their rated resources (770 of 3,110 ordered pairs past by more than 10%, the K80 up to
4.7x against the V100), which is why a measured step raises other answers only through a GPU it
dominates (:func:`raise_matrix`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The resources, as they are named in the notes.
RESOURCE_NAMES = {
    "matmul": "convolution/matrix rate",
    "vector": "FP32 rate",
    "bandwidth": "memory bandwidth",
    "link": "GPU link",
}


def resources(specs: pd.DataFrame, precision: str = "fp32", multi_gpu: bool = False):
    """(n, k) resource rates of spec lines and their names.

    Parameters
    ----------
    specs : pandas.DataFrame
        ``fp32_tflops``, ``tensor_tflops_fp32_training``, ``fp16_tensor_tflops`` (TFLOPS; 0
        where the GPU lacks them), ``mem_bandwidth_gbs`` and, for ``multi_gpu``,
        ``interconnect_gbs`` (GB/s).
    precision : {"fp32", "amp"}
    multi_gpu : bool
        Steps of several GPUs: the link is a resource too.

    Returns
    -------
    rates : numpy.ndarray
        (n, k) floats; NaN where a spec is unknown.
    names : list of str
        The k keys of :data:`RESOURCE_NAMES`.
    """
    col = {c: specs[c].to_numpy(dtype=float) for c in _COLUMNS[: 5 if multi_gpu else 4]}
    mm = np.fmax(col["fp32_tflops"], col["tensor_tflops_fp32_training"])
    if precision == "amp":  # no FP16 tensor cores: AMP runs at the FP32 step (the AMP model's rule)
        mm = np.fmax(mm, col["fp16_tensor_tflops"])
    rates = [mm, col["fp32_tflops"], col["mem_bandwidth_gbs"]]
    names = ["matmul", "vector", "bandwidth"]
    if multi_gpu:
        rates.append(col["interconnect_gbs"])
        names.append("link")
    return np.column_stack(rates), names


_COLUMNS = (
    "fp32_tflops",
    "tensor_tflops_fp32_training",
    "fp16_tensor_tflops",
    "mem_bandwidth_gbs",
    "interconnect_gbs",
)


def bound_matrix(specs: pd.DataFrame, precision: str = "fp32", multi_gpu: bool = False):
    """``H`` (n, n): a step on line a is at most ``H[a, b]`` times line b's (inf: no bound).

    ``H[a, b] = max(1, max_k rate_b,k / rate_a,k)``; the diagonal is 1. With ``multi_gpu``
    only lines of the same GPU count are compared (a step of more GPUs all-reduces over more).
    The bounds are closed under chaining (``H[a, c] <= H[a, b] * H[b, c]``).
    """
    rates, _ = resources(specs, precision, multi_gpu)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = rates[None, :, :] / rates[:, None, :]  # [a, b, k] = rate_b / rate_a
    bad = ~np.isfinite(ratio) | (ratio <= 0)
    worst = np.where(bad, np.inf, ratio).max(axis=2)
    h = np.maximum(worst, 1.0)
    if multi_gpu:
        n = specs["gpu_count"].to_numpy(dtype=float)
        h[n[:, None] != n[None, :]] = np.inf
    np.fill_diagonal(h, 1.0)
    return h


def limiting(specs: pd.DataFrame, a: int, b: int, precision: str, multi_gpu: bool) -> tuple:
    """The resource that sets ``H[a, b]``: (name, rate_a / rate_b) where a falls furthest
    short of b (or, where a is at least b in every one, the closest)."""
    rates, names = resources(specs, precision, multi_gpu)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = rates[a] / rates[b]
    k = int(np.nanargmin(np.where(np.isfinite(r), r, np.nan)))
    return RESOURCE_NAMES[names[k]], float(r[k])


#: Slack on a bound where one GPU does not dominate the other (``H`` above 1/0.95): published
#: tables put power-capped GPUs past the pure bound (the A10 at 1.22x it against the RTX A6000,
#: lambdal's PyTorch tables at each GPU's own batch). Dominating pairs (the issue's rule) keep
#: none: never slower.
TOLERANCE = 1.10
#: Largest ``H`` of a dominating pair: at least every rate and 95% of the bandwidth.
DOMINANCE = 1 / 0.95 + 1e-12


def order_bounds(specs: pd.DataFrame, precision: str = "fp32", multi_gpu: bool = False):
    """The bounds the spec order holds answers to: :func:`bound_matrix`, times
    :data:`TOLERANCE` where neither GPU dominates the other, closed under chaining (min-plus
    closure, so one pass of :func:`order_matrix` suffices)."""
    h = bound_matrix(specs, precision, multi_gpu)
    h = np.where(h <= DOMINANCE, h, h * TOLERANCE)
    return closure(h)


def closure(h: np.ndarray) -> np.ndarray:
    """Min-plus (Floyd-Warshall) closure of multiplicative bounds: ``H[a, c] <= H[a, b] *
    H[b, c]``."""
    log = np.log(h)
    for k in range(len(h)):
        log = np.minimum(log, log[:, k, None] + log[None, k, :])
    return np.exp(log)


def raise_matrix(h: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """The bounds a step may be raised by: ``h``, but from a *measured* GPU f only through a
    GPU m it dominates (at least m's rates and 95% of its bandwidth: ``h[f, m]`` at most
    1/0.95), ``up[f, x] = min_m h[f, m] * h[m, x]`` (so the answers stay within ``h`` of each
    other). The data's own steps show why: the K80 and the T4 run slower than their rated
    resources allow against the V100 (the K80 by up to 4.7x the bound on the data's shared
    workloads), so a measured step of theirs says little about how fast a GPU with more of some
    resource can be."""
    up = h.copy()
    for f in np.flatnonzero(measured):
        via = np.flatnonzero(h[f] <= DOMINANCE)
        via = via[via != f]
        up[f] = (h[f, via][:, None] * h[via]).min(axis=0) if len(via) else np.inf
        up[f, f] = 1.0
    return up


def order_matrix(q: np.ndarray, fix: np.ndarray, h: np.ndarray, up=None, dom=None) -> np.ndarray:
    """Steps ``q`` (rows x targets, NaN where a row lacks a target) moved into the bounds ``h``
    (targets x targets, :func:`bound_matrix`, closed): each free step capped at
    ``min_b h[a, b] * q_b`` over every target b, then raised to ``max_f q_f / up[f, a]`` over
    the fixed (``fix``) ones (``up``: :func:`raise_matrix`, default ``h``). One pass of each
    suffices for closed bounds; fixed steps never move, so where two of them are themselves out
    of bounds (the data measures some host-bound CNNs slower on the V100 than on the T4) the
    fixed one wins: a fixed GPU that a dominates (``dom[a, f]``, the issue's rule) caps a and
    one dominating a raises it; what a chain raises gives way."""
    up = h if up is None else up
    dom = h <= DOMINANCE if dom is None else dom
    inf = np.where(np.isnan(q), np.inf, q)
    meas = np.where(fix & ~np.isnan(q), q, -np.inf)
    lim = q.copy()
    has_fix = fix.any(axis=0)
    for a in range(q.shape[1]):
        cap = np.min(inf * h[a][None, :], axis=1)
        down = np.minimum(q[:, a], cap)
        if has_fix.any():  # fmax: a fixed step with no bound on a (inf) gives NaN, skipped
            f = has_fix
            with np.errstate(divide="ignore", invalid="ignore"):
                raised = np.fmax.reduce(meas[:, f] / up[f, a][None, :], axis=1)
                # where fixed steps disagree, the rule first (see above)
                own = np.where(dom[a, f], h[a, f], np.inf)
                capped = np.min(np.where(np.isinf(meas[:, f]), np.inf, meas[:, f]) * own, axis=1)
                direct = np.where(dom[f, a], up[f, a], np.inf)
                twin = np.fmax.reduce(meas[:, f] / direct[None, :], axis=1)
            down = np.fmax(np.fmin(np.fmax(down, raised), capped), twin)
        lim[:, a] = down
    return np.where(fix | np.isnan(q), q, lim)
