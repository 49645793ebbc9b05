"""The two-point scaler's answers behind ``Predictor.scale``: checked inputs, warnings about
measured points, and what its answer rests on."""

from __future__ import annotations

import numpy as np

from .._format import format_number
from .._messages import quote, show_number
from .._schema import MAX_LATENCY_S, MIN_LATENCY_S
from ..errors import ProfetValueError
from ..inputs._args import float_or_nan, is_number
from ..inputs._rules import whole_sizes


def _positive_ms(name: str, v) -> float:
    ok = is_number(v)
    if not (
        ok and np.isfinite(float_or_nan(v)) and MIN_LATENCY_S * 1e3 <= v <= MAX_LATENCY_S * 1e3
    ):
        raise ProfetValueError(
            f"{name} is {show_number(v) if ok else quote(v)}; it must be a number of "
            f"milliseconds {MIN_LATENCY_S * 1e3:g}..{MAX_LATENCY_S * 1e3:g}"
        )
    return float(v)


def scale_latency(scaler, by: str, points, size):
    """Checked inputs -> ``CurveScaler.predict`` / ``predict_points`` (see ``Predictor.scale``).

    ``points`` is ``{size: latency_ms}`` with two or more sizes; the smallest and the largest
    are the curve's ends, any between them bend it.
    """
    lo, hi = scaler.size_range_
    if not isinstance(points, dict) or len(points) < 2:
        raise ProfetValueError(
            f"scaling needs latencies at two or more {by} sizes as {{size: ms}}; got "
            f"{quote(points)}"
        )
    checked = {}
    for k, v in points.items():
        ok = isinstance(k, (int, float, np.integer, np.floating)) and not isinstance(k, bool)
        if not (ok and np.isfinite(float_or_nan(k)) and lo <= k <= hi):
            shown = show_number(k) if ok else quote(k)
            raise ProfetValueError(
                f"measured {by} size {shown} is outside the trained {by} range {lo:g}..{hi:g}"
            )
        whole_sizes([k], f"measured {by} size", lo, hi)
        checked[float(k)] = _positive_ms(f"latency at {by} size {float(k):g}", v)
    if len(checked) < len(points):
        raise ProfetValueError(f"{by} sizes {sorted(points)} repeat a size; give each size once")
    try:
        size_arr = np.asarray(size, dtype=float)
    except (TypeError, ValueError):
        raise ProfetValueError(f"size {str(size)[:40]!r} must be a number") from None
    if not np.all(np.isfinite(size_arr)) or np.any(size_arr < lo) or np.any(size_arr > hi):
        shown = show_number(size_arr.ravel()[0]) if size_arr.size == 1 else size_arr.tolist()[:5]
        raise ProfetValueError(f"size {shown} is outside the trained {by} range {lo:g}..{hi:g}")
    whole_sizes(size_arr, f"{by} size", lo, hi)
    sizes = sorted(checked)
    if len(sizes) == 2:
        return scaler.predict(checked[sizes[0]], checked[sizes[1]], size_arr, *sizes)
    return scaler.predict_points(sizes, [checked[k] for k in sizes], size_arr)


#: A latency grows at most about as the work does (a step is fixed costs plus work): over the
#: shared data's 9,567 runs, the latency ratio between two batch (or input) sizes of one CNN on
#: one instance reached at most 2.22 times the work ratio (batch ratio, or pixel ratio). Beyond
#: this many times, the two measurements are not of the same kind (a unit, a model, a step).
SUPERLINEAR = 2.5


def scale_warnings(by: str, points: dict) -> list[str]:
    """What looks wrong in measured ``{size: latency_ms}`` points: a latency that falls as the
    batch or the image grows (more work per step never takes less time), or one that grows far
    more than the work (:data:`SUPERLINEAR`)."""
    unit = "images" if by == "batch" else "px"
    sizes = sorted(points)
    out = []
    for small, large in zip(sizes[:-1], sizes[1:], strict=True):
        if points[large] < points[small]:
            out.append(
                f"the latency at {by} size {large:g} {unit} ({points[large]:g} ms) is below the "
                f"one at {small:g} {unit} ({points[small]:g} ms): a training step with more work "
                "takes longer, so check the two measurements (same model, one step each)"
            )
    lo, hi = sizes[0], sizes[-1]
    work = (hi / lo) ** (1 if by == "batch" else 2)
    grew = points[hi] / points[lo] if points[lo] > 0 else float("inf")
    if grew > SUPERLINEAR * work:
        out.append(
            f"the latency at {by} size {hi:g} {unit} ({show_number(points[hi])} ms) is "
            f"{format_number(grew)}x the one at {lo:g} {unit} ({show_number(points[lo])} ms) "
            f"for {format_number(work)}x the work: the training CNNs' latencies grew at most "
            "2.2x as much as their work, so check the two measurements (same model, one step "
            "each, both in ms)"
        )
    return out


def two_point_accuracy(scalers, target, by: str, instances) -> str:
    """Why a two-point answer has no interval, and how far off it was on left-out CNNs.

    Parameters
    ----------
    scalers : pandas.DataFrame or None
        The validation report's ``scalers`` table (``instance, by, variant, mape_pct``).
    target : str or None
        The instance asked about; one without its own row (or None) gets the measured range.
    by : {"batch", "input"}
    instances : list of str
        The measured instances.

    Returns
    -------
    str
        ``"no interval: ..."``, with the left-out error (%) where the report has it.
    """
    head = "no interval: the two-point scaler is not calibrated"
    if scalers is None or scalers.empty:
        return head
    sel = scalers[(scalers["by"] == by) & (scalers["variant"] == "default")]
    own = sel[sel["instance"] == target]["mape_pct"]
    between = "sizes between the two ends"
    if len(own):
        return f"{head}; on CNNs left out of training it missed {between} by {own.iloc[0]:.1f}%"
    mape = sel[sel["instance"].isin(instances)]["mape_pct"]
    if not len(mape):
        return head
    return (
        f"{head}; on CNNs left out of training it missed {between} by "
        f"{mape.min():.1f}-{mape.max():.1f}% on the measured instances"
    )
