"""The cross-instance model on several targets at once: one walk of the residual trees over
every target's rows (a profile priced on every spec line), and the prediction
blocks (ms, interval, basis) the engine puts in its table. The numbers are those of one
target at a time."""

from __future__ import annotations

import numpy as np

from ..._base import check_is_fitted
from ._basis import fitted_memo, spec_positions

#: What a cross-instance block says it rests on (the engine's ``ensemble`` column).
ENSEMBLE = "cross-instance spec model (op families scaled by spec ratios)"


def predict_targets(model, anchor: str, targets, fam, anchor_latency_s, classes, scales):
    """:meth:`CrossInstanceModel.predict_targets`: ``[(latency_s, members)]`` per target;
    ``classes`` and ``scales``: each family's class (0 compute, 1 memory) and scale."""
    check_is_fitted(model, "theta_")
    fam = np.asarray(fam, dtype=float)
    n, targets = len(fam), list(targets)
    lat = (
        np.full(n, np.nan)
        if anchor_latency_s is None
        else np.broadcast_to(np.asarray(anchor_latency_s, dtype=float), (n,))
    )
    base = np.where(np.isnan(lat), fam.sum(axis=1) * model.latency_per_us_, lat)
    d_specs, d_etas, fp32, a_fp32 = _pair_arrays(model, anchor, targets)
    res = _residuals(model, fam, d_specs)
    tot = np.maximum(fam.sum(axis=1), 1e-9)
    s_c = fam[:, classes == 0].sum(axis=1) / tot
    s_m = fam[:, (classes == 1) & (scales > 0)].sum(axis=1) / tot
    out = []
    for j in range(len(targets)):
        d_spec = d_specs[j : j + 1]
        # Every row has the same spec and efficiency gaps: their exponents are computed once
        # (one row, broadcast) instead of once per profile row.
        phys = base * np.exp(model._log_ratio(fam, d_spec, d_etas[j : j + 1]))
        cross = phys if res is None else phys * np.exp(res[j])
        peak, bw = np.exp(d_spec[:, 0]), np.exp(d_spec[:, 1])  # anchor / target
        members = {
            "physical": phys,
            "cross": cross,
            "fp32-ratio": base * a_fp32 / float(fp32[j]),
            "bandwidth-ratio": base * bw,
            "roofline": base * (s_c * peak + s_m * bw + (1 - s_c - s_m)),
        }
        out.append((cross, members))
    return out


def _pair_arrays(model, anchor: str, targets: list) -> tuple:
    """Spec gaps (k, specs) and efficiency gaps (k, 2) of anchor and each target, the targets'
    FP32 TFLOPS and the anchor's: fitted state only, so kept per fitted model, anchor and
    targets (read-only arrays)."""
    memo = fitted_memo(model, "pair_arrays", size=32)
    key = (anchor, tuple(targets))
    got = memo.get(key)
    if got is None:
        d_specs = model._spec_rows([anchor]) - model._spec_rows(targets)
        d_etas = model._eta(targets) - model._eta([anchor])
        fp32 = model.specs_["fp32_tflops"].to_numpy(dtype=float)[spec_positions(model, targets)]
        got = (d_specs, d_etas, fp32, model._spec_value(anchor, "fp32_tflops"))
        for a in got[:3]:
            a.flags.writeable = False
        memo[key] = got
    return got


def _residuals(model, fam, d_specs) -> list | None:
    """The residual learner's log correction per target (None without one): the targets'
    rows in one walk of the trees, in blocks the per-target walk would take alike."""
    n, k = len(fam), len(d_specs)
    if model.residual_model_ is None or not n:
        return None
    from ...models._trees import _COMPILED_MIN_ROWS

    # Below the compiled walk's row count a block is summed as each target's rows would be.
    per = max(1, (_COMPILED_MIN_ROWS - 1) // n) if n < _COMPILED_MIN_ROWS else 1
    out = []
    for s in range(0, k, per):
        block = d_specs[s : s + per]
        x = np.concatenate([model._res_features(fam, np.repeat(d[None], n, 0)) for d in block])
        out.extend(np.split(model.residual_model_.predict(x), len(block)))
    return out


def target_blocks(cross, anchor: str, targets, fam, lat) -> dict:
    """``{target: block}`` for pairs no model was trained on: latency, interval and basis (ms)
    from the anchor's device time per model family ``fam`` (shape (n, families))."""
    blocks = {}
    many = cross.predict_targets(anchor, targets, fam, lat)
    bases = cross.pair_bases(anchor, targets)
    for target, (latency_s, _), basis in zip(targets, many, bases, strict=True):
        p = 1000 * latency_s
        lo = hi = np.full(len(p), np.nan)
        if basis.split(" (")[0] in cross.interval_log_:
            lo, hi = cross.interval(p, basis)
        blocks[target] = {
            "p": p,
            "lo": lo,
            "hi": hi,
            "novelty": np.full(len(p), np.nan),
            "members": {},
            "ensemble": ENSEMBLE,
            "basis": basis,
            "ignored": (),
        }
    return blocks
