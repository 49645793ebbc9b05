"""How numbers shown to people are written: latencies (ms), USD and hours, in the CLI's tables
and lines and (through the same function) the app's.

One rule, significant digits rather than fixed decimals: a fixed 3 decimals printed a
sub-millisecond interval end as ``0.000`` and a cost of 0.0089 USD per 1,000 steps as ``0.009``.
"""

from __future__ import annotations

import math

#: Significant digits shown: four keep every catalog price as quoted (1.006 USD/h, 32.77 USD/h),
#: and a latency's fourth digit is already inside its interval.
DIGITS = 4


def format_number(value, digits: int = DIGITS) -> str:
    """A number for people: ``digits`` significant digits, never fewer whole digits.

    Parameters
    ----------
    value : float
        Any number (latency in ms, USD, hours, a ratio).
    digits : int
        Significant digits (>= 1).

    Returns
    -------
    str
        ``"0.008931"``, ``"0.048"``, ``"60.78"``, ``"154.8"``, ``"2,154"`` (thousands separated,
        whole numbers never rounded to tens), ``"0"``; trailing zeros dropped; ``"–"`` for
        None, NaN and infinities.

    Examples
    --------
    >>> [format_number(v) for v in (0.0089312, 0.048, 60.778, 154.81, 2153.941, 0.0)]
    ['0.008931', '0.048', '60.78', '154.8', '2,154', '0']
    """
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return "–"
    if not math.isfinite(x):
        return "–"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def round_significant(values, digits: int = DIGITS, decimals: int = DIGITS):
    """Numbers rounded for a document (``--format csv``): ``digits`` significant digits, and at
    least ``decimals`` decimals, so that a small cost keeps its digits (0.001618 USD, not 0.0016)
    and no number loses one that 4 decimals kept.

    Parameters
    ----------
    values : array-like of float
    digits, decimals : int

    Returns
    -------
    numpy.ndarray of float
        NaN and infinities unchanged.

    Examples
    --------
    >>> round_significant([0.00161798, 154.81234, 0.0, 12345.678912]).tolist()
    [0.001618, 154.8123, 0.0, 12345.6789]
    """
    import numpy as np

    x = np.asarray(values, dtype=float)
    out = np.round(x, decimals)
    # Only numbers below 10**(digits - 1 - decimals) need more decimals than ``decimals``.
    small = np.flatnonzero((np.abs(x) < 10.0 ** (digits - 1 - decimals)) & (x != 0))
    if not len(small):
        return out
    xs = x[small]
    keep = np.minimum(digits - 1 - np.floor(np.log10(np.abs(xs))), 300)
    scale = 10.0**keep  # what numpy's round does: scale, round half to even, scale back
    out[small] = np.rint(xs * scale) / scale
    return out


def round_table(table):
    """A DataFrame with its float columns :func:`round_significant`: the numbers of every CSV
    document (``--format csv``, the app's downloads)."""
    import pandas as pd

    floats = [c for c in table.columns if pd.api.types.is_float_dtype(table[c].dtype)]
    if not floats:
        return table
    return table.assign(**{c: round_significant(table[c].to_numpy(float)) for c in floats})
