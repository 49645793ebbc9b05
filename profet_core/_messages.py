"""How a user's value appears in a message: quoted, cut short and never hundreds of digits long.

Every message that echoes user input goes through these, so a 10-million-character op name or a
400-digit number never becomes a 10-million-character message, and every layer shows values the
same way.
"""

from __future__ import annotations

import re

import numpy as np

from ._schema import QUOTE_CHARS

# A run of 20+ digits is no float's repr (17 significant digits at most): an integer a user typed,
# shown as its magnitude (a list holding 10**29 no longer echoes 30 digits).
_LONG_DIGITS = re.compile(r"\d{20,}")


def _magnitude(match: re.Match) -> str:
    digits = match.group()
    return f"{digits[0]}.{digits[1:3]}e+{len(digits) - 1} (a {len(digits):,}-digit number)"


def quote(value, limit: int = QUOTE_CHARS) -> str:
    """``repr`` of a user value, cut to about ``limit`` characters with an ellipsis. A long
    path keeps its start and its end, where the file name is."""
    if isinstance(value, str) and len(value) > limit:
        if "/" in value[-limit // 2 :]:
            keep = limit // 2
            text = repr(value[:keep]) + " ... " + repr(value[-keep:])
        else:
            text = repr(value[:limit]) + "..."
        return _LONG_DIGITS.sub(_magnitude, text) + f" ({len(value):,} characters)"
    text = _LONG_DIGITS.sub(_magnitude, repr(value))
    # a string within the limit is shown whole (its quotes and escapes are not its length)
    return text if len(text) <= limit or isinstance(value, str) else text[:limit] + "..."


def show_number(value) -> str:
    """A user's number for a message, as given (10000.01 stays 10000.01, never "10000"), and
    never hundreds of digits long: ``1e+400`` stays short."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (int, np.integer)) and abs(int(value)) < 10**15:
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if np.isfinite(value) and float(value).is_integer() and abs(value) < 10**15:
            return str(int(value))  # -5 typed, parsed as -5.0: shown as -5
        # the shortest text that reads back as the same float: at most ~24 characters
        return repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            return f"{float(value):.6g}"
        except OverflowError:  # an int beyond float range
            digits = len(str(abs(int(value))))
            return f"{'-' if value < 0 else ''}1e+{digits - 1} (a {digits:,}-digit number)"
    return quote(value)


def quote_list(values, n: int = 5) -> str:
    """At most ``n`` quoted values, then how many more."""
    values = list(values)
    shown = ", ".join(quote(v) for v in values[:n])
    return shown + (f" and {len(values) - n} more" if len(values) > n else "")


# The one rule for text that reaches a terminal or a CSV (a catalog's GPU, instance, region, cloud
# or accelerator name, a user's or a profile's text): the C0 controls but newline and tab, DEL
# and the C1 controls (ESC starts a terminal escape sequence; CSI, OSC and the rest make a
# catalog's or a user's text move the cursor, retitle the window or print a live link), and the
# bidirectional overrides and isolates (they reorder what a terminal shows).
_CONTROL_CHARS = r"\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
CONTROL = re.compile(f"[{_CONTROL_CHARS}]")
#: :data:`CONTROL` and the newline: for a name, which is one line.
CONTROL_IN_NAME = re.compile(f"[\\n{_CONTROL_CHARS}]")


def printable(text, one_line: bool = False) -> str:
    """``text`` without control characters (:data:`CONTROL`; with ``one_line``, newlines too),
    for what reaches a terminal (stdout, stderr) or a CSV cell: text from a catalog, a profile
    or a user is data, never a terminal escape sequence."""
    return (CONTROL_IN_NAME if one_line else CONTROL).sub("", str(text))


def has_control(text, one_line: bool = True) -> bool:
    """Whether ``text`` holds a character :func:`printable` removes (a name: newlines too)."""
    return bool((CONTROL_IN_NAME if one_line else CONTROL).search(str(text)))
