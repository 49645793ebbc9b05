"""``Predictor.scale_from_point``: checked inputs -> a latency curve with its interval."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._messages import quote, show_number
from .._schema import MAX_BATCH_SIZE, MAX_INPUT_SIZE, MAX_LATENCY_S, MIN_LATENCY_S
from ..errors import ProfetValueError
from ..inputs._args import float_or_nan, is_number
from ..inputs._rules import whole_sizes

_UNIT = {"batch": "images", "input": "px"}


@dataclass(frozen=True)
class PointScale:
    """Latencies on one instance at other sizes, from one latency there.

    Attributes
    ----------
    target, by : str
        Instance, and ``"batch"`` or ``"input"``.
    size_from, latency_from_ms, other_size : float
        The given point (size, ms) and the size held fixed (px for batch, images for input).
    sizes, latency_ms, low_ms, high_ms : ndarray of shape (n,)
        Sizes asked for, predicted latency (ms) and its interval (ms; NaN where uncalibrated).
    basis : str
        ``"profile"`` (anchor profile and latency) or ``"latency only"``.
    interval_level : float
    notes : tuple of str
        What the answer rests on, to show with the numbers as notes (a target never measured
        at several sizes: the measured instances' median curve; no anchor profile: the shape
        from the latency and sizes alone).
    warnings : tuple of str
        What may make the answer wrong (the size held fixed outside the trained range).
    """

    target: str
    by: str
    size_from: float
    latency_from_ms: float
    other_size: float
    sizes: np.ndarray
    latency_ms: np.ndarray
    low_ms: np.ndarray
    high_ms: np.ndarray
    basis: str
    interval_level: float
    notes: tuple = field(default=())
    warnings: tuple = field(default=())

    def table(self) -> pd.DataFrame:
        """``size, latency_ms, low_ms, high_ms``: one row per size asked for."""
        return pd.DataFrame(
            {
                "size": self.sizes,
                "latency_ms": self.latency_ms,
                "low_ms": self.low_ms,
                "high_ms": self.high_ms,
            }
        )


def _number(name: str, v, lo: float, hi: float, unit: str) -> float:
    ok = is_number(v)
    if not (ok and np.isfinite(float_or_nan(v)) and lo <= v <= hi):
        raise ProfetValueError(
            f"{name} is {show_number(v) if ok else quote(v)}; it must be a number of {unit} "
            f"{lo:g}..{hi:g}"
        )
    return float(v)


def _profile_free(profile) -> np.ndarray:
    from ..features._profile_features import ProfileFeatures
    from ..inputs._prepare import prepare_profiles

    if not isinstance(profile, pd.DataFrame) or len(profile) != 1:
        n = len(profile) if isinstance(profile, pd.DataFrame) else type(profile).__name__
        raise ProfetValueError(f"the anchor profile must be one row (got {n}); pick one row")
    ops = prepare_profiles(profile).ops
    busy = ops[[c for c in ops.columns if c.startswith("Device_")]].to_numpy().sum()
    if not busy > 0:
        raise ProfetValueError("the anchor profile has no device time: it cannot shape a curve")
    return ProfileFeatures.from_ops(ops).free


def _checked_sizes(size, lo: float, hi: float, by: str) -> np.ndarray:
    try:
        arr = np.atleast_1d(np.asarray(size, dtype=float))
    except (TypeError, ValueError):
        raise ProfetValueError(f"size {str(size)[:40]!r} must be a number") from None
    if arr.ndim != 1 or not np.all(np.isfinite(arr)) or np.any(arr < lo) or np.any(arr > hi):
        shown = show_number(arr[0]) if arr.size == 1 else [show_number(v) for v in arr[:5]]
        raise ProfetValueError(f"{by} size {shown} is outside the trained range {lo:g}..{hi:g}")
    return whole_sizes(arr, f"{by} size", lo, hi)


def scale_one_point(predictor, target, by, latency_ms, size_from, size, other_size, profile):
    """The work behind ``Predictor.scale_from_point`` (see there)."""
    predictor.check_instance(target, "target")
    use_profile = profile is not None
    model = predictor.one_point_scaler(by, use_profile)
    lo, hi = model.size_range_
    lat = _number("latency_ms", latency_ms, MIN_LATENCY_S * 1e3, MAX_LATENCY_S * 1e3, "ms")
    s0 = float(_checked_sizes(size_from, lo, hi, by)[0])
    sizes = _checked_sizes(size, lo, hi, by)
    other_unit = "px" if by == "batch" else "images"
    top = MAX_INPUT_SIZE if by == "batch" else MAX_BATCH_SIZE
    other = _number("other_size", other_size, 1, top, other_unit)
    other = float(whole_sizes([other], "other_size", 1, top)[0])
    free = _profile_free(profile) if use_profile else None
    log_ratio = model.predict_log_ratio(target, s0, sizes, other, lat * 1e-3, free)
    q_lo, q_hi = model.interval(target, s0, sizes)
    notes, warnings = _notes(predictor, model, target, by, other, other_unit)
    return PointScale(
        target=target,
        by=by,
        size_from=s0,
        latency_from_ms=lat,
        other_size=other,
        sizes=sizes,
        latency_ms=lat * np.exp(log_ratio),
        low_ms=lat * np.exp(log_ratio + q_lo),
        high_ms=lat * np.exp(log_ratio + q_hi),
        basis="profile" if use_profile else "latency only",
        interval_level=0.8,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )


def _notes(predictor, model, target, by, other, other_unit) -> tuple[list, list]:
    """``(notes, warnings)``: what the answer rests on, and what may make it wrong."""
    notes, warnings = [], []
    o_lo, o_hi = model.other_range_
    other_name = "input size" if by == "batch" else "batch size"
    if not o_lo <= other <= o_hi:
        warnings.append(
            f"the {other_name} {other:g} {other_unit} is outside the trained {o_lo:g}..{o_hi:g}: "
            "the curve's shape is taken from the nearest trained size"
        )
    if target not in model.targets_:
        notes.append(
            f"{target} was never measured at several sizes: its curve is the median of the "
            f"measured instances' ({', '.join(model.targets_)}) and its interval the widest"
        )
    if not model.use_profile:
        notes.append(_no_profile_note(predictor, by))
    return notes, warnings


def _no_profile_note(predictor, by: str) -> str:
    text = (
        "no anchor profile: the curve's shape comes from the latency and the sizes alone; a "
        "profile (from the Anchor page, or --profile) makes it more accurate"
    )
    table = predictor.validation.get("onepoint")
    if table is None or table.empty:
        return text
    sel = table[table["by"] == by].groupby("variant")["mape_pct"].mean()
    if {"profile", "latency only"} <= set(sel.index):
        text += (
            f" (on CNNs left out of training: {sel['latency only']:.1f}% mean error without, "
            f"{sel['profile']:.1f}% with)"
        )
    return text
