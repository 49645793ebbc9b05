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
