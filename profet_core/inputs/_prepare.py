"""One preparation of the profiles a question is asked about, shared by every answer that reads
them (``Predictor.predict``, ``Predictor.breakdown`` and ``Predictor.scale_from_point``), so no
answer can skip a step another takes (the breakdown once skipped the step rescaling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._messages import quote, show_number
from .._schema import (
    DEFAULT_STEPS,
    LATENCY_COLUMN,
    MAX_LATENCY_S,
    MIN_LATENCY_S,
    STEPS_COLUMN,
    op_columns,
)
from ..errors import ProfetValueError
from ._args import float_or_nan, frame_arg, is_number, numbers_arg
from ._rules import check_steps, check_times


@dataclass(frozen=True)
class PreparedProfiles:
    """Checked profiles in PROFET's convention.

    Attributes
    ----------
    ops : pandas.DataFrame
        Shape (n, n_ops): ``Host_*``/``Device_*`` op times in microseconds over **2** training
        steps (a profile over N steps is rescaled by 2 / N), index 0..n-1.
    latency_s : ndarray of shape (n,) or None
        Measured anchor latency per row (seconds, NaN where unknown); None when no row has one.
    """

    ops: pd.DataFrame
    latency_s: np.ndarray | None


def prepare_profiles(profiles, anchor_latency_s=None, anchor=None) -> PreparedProfiles:
    """Check a table of profiles and bring it to PROFET's 2-step convention.

    Parameters
    ----------
    profiles : pandas.DataFrame
        As :func:`profet_core.parse_profile` returns it: op columns (us over ``steps`` steps),
        optionally ``steps``, ``batch_latency_s`` (s) and other columns (ignored here).
    anchor_latency_s : float or array of shape (n,), optional
        Overrides the ``batch_latency_s`` column.
    anchor : str, optional
        The instance the profiles are read as taken on: a row whose ``instance`` names another
        is refused (:func:`check_anchor`). None: any instance (the one-point scaler's profile).

    Returns
    -------
    PreparedProfiles

    Raises
    ------
    ProfetValueError
        No op columns, non-finite or negative times, a bad step count or latency, a row of
        another instance than ``anchor``.
    """
    _require_ops(profiles)
    frame_arg(profiles, "profiles")
    if anchor is not None:
        check_anchor(profiles, anchor)
    profiles, values = _numeric(profiles)
    names = op_columns(profiles.columns)
    if STEPS_COLUMN in profiles.columns:  # as normalise_steps rescales them, on the matrix
        steps = check_steps(profiles[STEPS_COLUMN].to_numpy(), "profiles")
        if not (steps == DEFAULT_STEPS).all():
            values = values * (DEFAULT_STEPS / steps.astype(float))[:, None]
    # The op table built once from the matrix: one float block, index 0..n-1.
    ops = pd.DataFrame(values, columns=pd.Index(names, dtype=profiles.columns.dtype))
    return PreparedProfiles(ops, _check_inputs(profiles, ops, anchor_latency_s))


def _numeric(profiles: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The op and latency columns as floats: a text, list or True/False cell is refused naming
    its column and row (it was a bare ValueError from numpy), and op times go through the
    readers' rule (:func:`check_times`: finite, >= 0, at most 1e12 us); and the op times as
    one float matrix (rows x op columns, in column order)."""
    names = [*op_columns(profiles.columns)]
    if LATENCY_COLUMN in profiles.columns:
        names.append(LATENCY_COLUMN)
    out = {}
    kinds = dict(zip(profiles.columns, profiles.dtypes, strict=True))
    for name in names:
        if kinds[name].kind in "iuf":
            continue
        col = profiles[name]
        values = col.to_numpy(dtype=object)
        ok = [is_number(v) or (v is None or v is pd.NA) for v in values]
        if not all(ok):
            i = ok.index(False)
            raise ProfetValueError(
                f"profiles: column {quote(name)} holds {quote(values[i])} at row {i}; allowed: "
                "numbers (op times in microseconds, the latency in seconds)"
            )
        out[name] = np.array([float_or_nan(v) if is_number(v) else np.nan for v in values])
    if out:
        profiles = profiles.assign(**out)
    ops = op_columns(profiles.columns)
    values = profiles[ops].to_numpy(dtype=float)
    check_times(values, ops, "profiles")
    return profiles, values


def check_anchor(profiles, anchor: str) -> None:
    """Refuse profiles whose ``instance`` says they were taken on another instance than ``anchor``.

    A profile of one GPU read as another's is predicted from the wrong op times (a g3s.xlarge
    profile read as p3.2xlarge's: 412 ms predicted on g3s.xlarge where 113 ms was measured).

    Parameters
    ----------
    profiles : pandas.DataFrame
        As ``parse_profile`` returns it; rows without an ``instance`` (or NaN there) pass.
    anchor : str
        The anchor instance asked for.

    Raises
    ------
    ProfetValueError
        Naming the first row that disagrees, its instance and the anchor, and the fixes.
    """
    if not isinstance(profiles, pd.DataFrame) or "instance" not in profiles.columns:
        return
    named = profiles["instance"]
    if named.dtype == "str":  # text as it is: compared as objects, without a copy as text
        values = named.to_numpy(dtype=object)
        bad = ~pd.isna(values) & (values != str(anchor))
    else:
        bad = (named.notna() & (named.astype(str) != str(anchor))).to_numpy()
    if not bad.any():
        return
    i = int(bad.argmax())
    other = quote(str(named.iloc[i]))
    where = "the profile" if len(profiles) == 1 else f"row {i} of the profile"
    raise ProfetValueError(
        f"{where} says it was taken on {other}, but the anchor is {quote(str(anchor))}: "
        f"predicting from it as a {anchor} profile would be wrong. On the command "
        f"line drop --anchor (the file's instance is then used) or give --anchor "
        f"{named.iloc[i]}; in the app pick {other} as the anchor instance"
        + ("" if len(profiles) == 1 else " (every row must name the anchor, or no instance)")
    )


def _require_ops(profiles) -> None:
    if not isinstance(profiles, pd.DataFrame) or profiles.empty or not op_columns(profiles.columns):
        raise ProfetValueError(
            "profiles must be a non-empty table of Host_<Op>/Device_<Op> columns"
        )


def _check_inputs(profiles, ops: pd.DataFrame, anchor_latency_s):
    """Per-row anchor latency (s; None if none given) of a prediction's input, whose op table
    (at 2 steps) is ``ops``."""
    n = len(profiles)
    lat = None
    if anchor_latency_s is not None:
        if np.asarray(anchor_latency_s).dtype == bool:
            raise ProfetValueError("anchor latency True/False is not a number of seconds")
        values = numbers_arg(anchor_latency_s, "anchor latency", "seconds", none_is_nan=True)
        try:
            lat = np.broadcast_to(values, (n,)).copy() if np.ndim(anchor_latency_s) else None
            lat = np.full(n, values[0]) if lat is None else lat
        except ValueError:
            raise ProfetValueError(
                f"anchor latency {str(anchor_latency_s)[:40]!r} must be one number of seconds "
                f"or one per profile row ({n})"
            ) from None
        if np.ndim(anchor_latency_s) == 0 and np.isnan(lat).any():
            # One latency for every row: NaN is a mistake, not "unknown" (that is None).
            raise ProfetValueError("anchor latency nan s is not allowed; it must be a number > 0")
    elif LATENCY_COLUMN in profiles.columns:
        lat = profiles[LATENCY_COLUMN].to_numpy(dtype=float)
    if lat is not None:
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(lat) & ~((lat >= MIN_LATENCY_S) & (lat <= MAX_LATENCY_S))
        if bad.any():
            raise ProfetValueError(
                f"anchor latency {show_number(lat[bad][0])} s is not allowed; one training step "
                f"takes {MIN_LATENCY_S:g} to {MAX_LATENCY_S:g} s"
            )
        if np.isnan(lat).all():
            lat = None
    values = ops.to_numpy()
    if not np.isfinite(values).all() or (values < 0).any():
        raise ProfetValueError("op times must be finite microseconds >= 0")
    return lat
