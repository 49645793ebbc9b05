"""One rule set for every profile reader (JSON, CSV, Parquet, tensorflow_stats).

Every reader turns its input into op names and a float matrix of times and hands both to the
checks here, so a value refused in one format is refused in all, with the same message. The
checks are vectorised: a file of many thousands of names or cells fails in milliseconds, and
every user string quoted in a message is truncated (:func:`quote`), so a 10-million-character
name never becomes a 10-million-character message.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .._messages import quote, show_number
from .._schema import (
    DEFAULT_STEPS,
    LATENCY_COLUMN,
    LATENCY_UNITS,
    MAX_BATCH_SIZE,
    MAX_LATENCY_S,
    MAX_OP_NAME_CHARS,
    MAX_OP_TIME_US,
    MAX_OPS,
    MAX_STEPS,
    MIN_LATENCY_S,
    OP_PREFIXES,
)
from ..errors import ProfetValueError

#: A number in a text cell: ASCII decimal only (Python's float() would also take "1_000",
#: "nan", "inf", "True"-like tokens are refused by this too, and non-ASCII digits).
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER, re.ASCII)


def latency_seconds(value, unit: str = "s", name: str = "anchor latency") -> float | None:
    """A latency typed in ``unit`` -> seconds, refused in the unit it was typed in.

    Parameters
    ----------
    value : float or None
        One training step's latency; None means not given.
    unit : {"s", "ms", "µs"}
    name : str
        What it is, for the message.

    Returns
    -------
    float or None
        Seconds, within [:data:`MIN_LATENCY_S`, :data:`MAX_LATENCY_S`].
    """
    if value is None:
        return None
    per = LATENCY_UNITS[unit]
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    try:
        seconds = float(value) * per if ok else np.nan
    except OverflowError:  # an int of hundreds of digits
        seconds = np.inf
    if not MIN_LATENCY_S <= seconds <= MAX_LATENCY_S:
        raise ProfetValueError(
            f"{name} {show_number(value)} {unit} is not allowed; one training step takes "
            f"{MIN_LATENCY_S / per:g} to {MAX_LATENCY_S / per:g} {unit}"
        )
    return seconds


def whole_sizes(values, name: str, lo: float = 1, hi: float = MAX_BATCH_SIZE) -> np.ndarray:
    """Sizes (images or px) that must be whole numbers in ``lo..hi``: 32.5 is refused, never
    truncated. Returns them as a float array."""
    arr = np.atleast_1d(np.asarray(values, dtype=object)).ravel()
    bad = [
        v
        for v in arr
        if isinstance(v, (bool, np.bool_))
        or not isinstance(v, (int, float, np.integer, np.floating))
        or not np.isfinite(float(v))
        or not float(v).is_integer()
        or not lo <= float(v) <= hi
    ]
    if bad:
        raise ProfetValueError(
            f"{name} {show_number(bad[0])} is not allowed; sizes are whole numbers {lo:g}..{hi:g}"
        )
    return arr.astype(float)


#: An instance name: letters, digits and ``. _ + -`` (AWS "p3.2xlarge", GCP "a2-highgpu-1g"),
#: at most 64 characters. ``>`` (the pair keys' separator ``->``), ``/``, ``,``, spaces, quotes
#: and control characters are reserved: "a->b" + "c" and "a" + "b->c" would share a key.
INSTANCE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}", re.ASCII)


def check_instance_names(names, where: str = "instance") -> None:
    """Refuse instance names outside :data:`INSTANCE_RE` (reserved characters, too long)."""
    for name in dict.fromkeys(names):
        if not isinstance(name, str) or not INSTANCE_RE.fullmatch(name):
            raise ProfetValueError(
                f"{where} name {quote(name)} is not allowed; instance names are 1-64 letters, "
                "digits and . _ + - (starting with a letter or digit; '->' separates the two "
                "instances of a pair)"
            )


def check_op_names(names, where: str = "profile") -> None:
    """Refuse op names that are not ``Host_<Op>``/``Device_<Op>``, too long, too many or not text.

    Parameters
    ----------
    names : sequence
        Distinct op names of one input (any objects; non-strings are refused).
    where : str
        What holds them, for the message (e.g. ``"profile 'p.json'"``).

    Raises
    ------
    ProfetValueError
        More than :data:`MAX_OPS` names; a name that is not a string, is longer than
        :data:`MAX_OP_NAME_CHARS`, lacks the prefix, or is not valid Unicode (lone surrogate).
    """
    names = list(names)
    if len(names) > MAX_OPS:
        raise ProfetValueError(f"{where} has {len(names):,} op names; the limit is {MAX_OPS:,}")
    s = pd.Series(names, dtype=object)
    not_str = ~s.map(type).isin([str]).to_numpy()
    if not_str.any():
        bad = names[int(not_str.argmax())]
        raise ProfetValueError(f"{where}: op name {quote(bad)} is not text")
    if not names:
        return
    # one encode of all names (bounded by MAX_OPS) finds any lone surrogate; first, as pandas
    # string operations would raise on one
    try:
        "\n".join(names).encode("utf-8")
    except UnicodeEncodeError:
        bad = next(n for n in names if not _encodable(n))
        raise ProfetValueError(
            f"{where}: op name {quote(bad)} holds a lone surrogate (invalid Unicode)"
        ) from None
    s = s.astype(str)
    long = (s.str.len() > MAX_OP_NAME_CHARS).to_numpy()
    if long.any():
        raise ProfetValueError(
            f"{where}: op name {quote(names[int(long.argmax())])} is longer than "
            f"{MAX_OP_NAME_CHARS} characters"
        )
    ok = (s.str.startswith(OP_PREFIXES) & ~s.isin(OP_PREFIXES)).to_numpy()
    if not ok.all():
        raise ProfetValueError(
            f"{where}: op name {quote(names[int((~ok).argmax())])} is not of the form "
            "Host_<Op> or Device_<Op>"
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_times(times: np.ndarray, names, where: str = "profile", what: str = "op") -> None:
    """Refuse op times that are NaN, infinite, negative or above :data:`MAX_OP_TIME_US`.

    Parameters
    ----------
    times : ndarray of shape (n_rows, n_ops), float
        Times in microseconds.
    names : sequence of str, length n_ops
        Column names, for the message.
    where, what : str
        For the message.
    """
    times = np.asarray(times, dtype=float)
    bad = ~(np.isfinite(times) & (times >= 0) & (times <= MAX_OP_TIME_US))
    if not bad.any():
        return
    row, col = np.argwhere(bad)[0]
    value = times[row, col]
    if np.isnan(value):
        why = "is not a number (NaN)"
    elif value < 0:
        why = f"is {value:g} us, negative"
    elif value == np.inf:
        why = "is too large (beyond float range)"
    else:
        why = f"is {value:.3g} us"
    raise ProfetValueError(
        f"{where}: {what} {quote(names[col])} at row {row} {why}; op times must be finite, >= 0 "
        f"and <= {MAX_OP_TIME_US:.0e} us (11.6 days)"
    )


def check_steps(values, where: str = "profile") -> np.ndarray:
    """Validate step counts: integers 1..:data:`MAX_STEPS`; returns them as int64."""
    raw = np.asarray(values).ravel()
    if raw.dtype.kind in "iuf" and raw.size:  # the common case, checked without a Python loop
        with np.errstate(invalid="ignore"):
            ok = (raw >= 1) & (raw <= MAX_STEPS) & (raw == np.floor(raw))
        if ok.all():
            return raw.astype(np.int64)
    arr = np.asarray(values, dtype=object).ravel()
    for i, v in enumerate(arr):
        is_int = isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
        if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer():
            is_int = True
        if not is_int or not 1 <= v <= MAX_STEPS:
            raise ProfetValueError(
                f"{where}: steps {show_number(v)} at row {i} is not allowed; steps must be an "
                f"integer 1..{MAX_STEPS} (the number of training steps the profile covers; "
                f"PROFET's convention is {DEFAULT_STEPS})"
            )
    return arr.astype(np.int64)


def check_latency(values, where: str = "profile") -> np.ndarray:
    """Validate anchor latencies (seconds): NaN means unknown, else finite and > 0."""
    lat = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(lat) & ~((lat >= MIN_LATENCY_S) & (lat <= MAX_LATENCY_S))
    if bad.any():
        i = int(bad.argmax())
        raise ProfetValueError(
            f"{where}: {LATENCY_COLUMN} {show_number(lat[i])} at row {i} is not allowed; it must "
            f"be seconds {MIN_LATENCY_S:g}..{MAX_LATENCY_S:g} (or empty where unknown)"
        )
    return lat


def text_to_float(column: pd.Series, name: str, where: str = "profile") -> np.ndarray:
    """Convert a column of text cells to float; empty cells become NaN (absent).

    Only ASCII decimal numbers are accepted: ``nan``, ``null``, ``inf``, ``True``, ``1_000``
    and the like are refused, naming the column, the row and the cell.
    """
    text = column.astype("string").str.strip()
    empty = text.isna() | (text == "")
    ok = text.str.fullmatch(_NUMBER_RE).fillna(False).astype(bool) | empty
    if not ok.all():
        i = int((~ok).to_numpy().argmax())
        raise ProfetValueError(
            f"{where}: column {quote(name)} holds {quote(str(text.iloc[i]))} at row {i}; "
            "allowed: numbers (empty where absent; not NaN, null, inf or True/False)"
        )
    out = np.full(len(text), np.nan)
    filled = ~empty.to_numpy()
    # float() of an ASCII decimal never raises; beyond float range it gives inf, refused later.
    out[filled] = [float(v) for v in text[filled]]
    return out
