"""argparse pieces shared by every ``profet`` subcommand: value types checked at parse time
(so a bad flag is refused in the first second, not after minutes of work) and a parser whose
errors are the project's one line, ``profet: error: ...`` (exit 2)."""

from __future__ import annotations

import argparse
import math
import sys


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser (and its subparsers) that reports errors as one line, exit 2."""

    def error(self, message):
        message = " ".join(str(message).split())  # argparse's own messages may wrap
        sys.stderr.write(f"profet: error: {message} (see `{self.prog} --help`)\n")
        sys.exit(2)


def _number(text: str, kind):
    try:
        value = kind(text)
    except (ValueError, OverflowError):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise argparse.ArgumentTypeError(
            f"{shown!r} is not {'an integer' if kind is int else 'a number'}"
        ) from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; needs a finite number")
    return value


def _echo(text: str) -> str:
    """The number as the user typed it (10000.01 stays 10000.01), cut short."""
    text = text.strip()
    return text if len(text) <= 40 else text[:40] + "..."


def int_range(low: int, high: int):
    """An argparse type: an integer in ``[low, high]``."""

    def parse(text: str) -> int:
        value = _number(text, int)
        if not low <= value <= high:
            shown = str(value) if len(str(value)) <= 20 else f"{str(value)[:20]}..."
            raise argparse.ArgumentTypeError(
                f"{shown} is not allowed; needs an integer from {low} to {high:,}"
            )
        return value

    return parse


def float_range(low: float, high: float = math.inf, *, low_open: bool = False):
    """An argparse type: a finite number ``>= low`` (``> low`` with ``low_open``), ``<= high``."""

    def parse(text: str) -> float:
        value = _number(text, float)
        if value < low or (low_open and value == low) or value > high:
            bound = f"> {low:g}" if low_open else f">= {low:g}"
            upper = f" and <= {high:g}" if math.isfinite(high) else ""
            raise argparse.ArgumentTypeError(
                f"{_echo(text)} is not allowed; needs a finite number {bound}{upper}"
            )
        return value

    return parse


def number(text: str) -> float:
    """An argparse type: a number as ``float`` parses it, but one too large for a float (a
    400-digit number) is refused as out of range rather than read as inf; ``inf`` and ``nan``
    typed as such pass, for the core to refuse by name."""
    value = _float(text)
    if not math.isfinite(value) and not _special(text):
        raise argparse.ArgumentTypeError(
            f"{_echo(text)} is out of range (a number must be below 1.8e308)"
        )
    return value


def measured(text: str):
    """:func:`number`, but a whole number too large for a float stays an ``int``: the core's
    range check then refuses it by name, shown by its magnitude (latencies, parameter count)."""
    value = _float(text)
    if math.isfinite(value) or _special(text):
        return value
    try:
        return int(text.strip())
    except ValueError:
        return number(text)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_echo(text)!r} is not a number") from None


def _special(text: str) -> bool:
    return text.strip().lower().lstrip("+-") in _SPECIAL


_SPECIAL = ("inf", "infinity", "nan")


#: Op-clustering distance (a Levenshtein distance), DNN epochs and trees per tree ensemble:
#: checked at parse time.
THRESHOLD = float_range(0.0, 1000.0)
EPOCHS = int_range(1, 100_000)
TREES = int_range(1, 10_000)


def size_latency(text: str) -> tuple[float, float]:
    """An argparse type: ``SIZE=MS`` (``profet scale --point``)."""
    try:
        size, ms = text.split("=")
        return float(size), float(ms)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not SIZE=MS (e.g. 64=41.5)") from None
