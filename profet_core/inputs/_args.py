"""Type checks of the library's public arguments: a wrong type is refused with one
:class:`ProfetValueError` line naming the value and what is allowed, never a bare ``TypeError``,
``AttributeError`` or ``KeyError`` from deep inside, and never read as something else (a string
as a list of one-letter instance names)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .._messages import quote, show_number
from ..errors import ProfetValueError


def shown(value) -> str:
    """A wrong value for a message: a number as :func:`show_number` writes it (never 400
    digits), anything else quoted and cut short."""
    if isinstance(value, (int, float, np.integer, np.floating, bool, np.bool_)):
        return show_number(value)
    return quote(value)


def type_name(value) -> str:
    """``int``, ``NoneType``, ``list``...: the type of a wrong value, for a message."""
    return type(value).__name__


def path_arg(value, what: str) -> Path:
    """A path argument: ``str``, ``bytes`` or ``os.PathLike``; anything else is refused."""
    if isinstance(value, (str, bytes, os.PathLike)):
        try:
            text = os.fsdecode(value)
        except (TypeError, ValueError):  # a PathLike whose __fspath__ returns no path
            text = None
        if text is not None and "\x00" in text:
            raise ProfetValueError(f"{what} {quote(text)} holds a NUL character; not a path")
        if text is not None:
            return Path(text)
    raise ProfetValueError(
        f"{what} must be a path (str or os.PathLike); got {type_name(value)} {shown(value)}"
    )


def frame_arg(value, what: str) -> pd.DataFrame:
    """A table argument: a ``pandas.DataFrame`` with unique column names."""
    if not isinstance(value, pd.DataFrame):
        raise ProfetValueError(
            f"{what} must be a pandas DataFrame; got {type_name(value)} {shown(value)}"
        )
    dup = value.columns[value.columns.duplicated()]
    if len(dup):
        raise ProfetValueError(
            f"{what} has the column {shown(dup[0])} more than once; column names must be unique"
        )
    return value


def names_arg(value, what: str) -> list[str] | None:
    """A list of instance names: None (the default), one ``str`` (that one name) or an iterable
    of ``str``; an empty list is refused (it would ask for nothing)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bytes, dict, pd.DataFrame)) or not np.iterable(value):
        raise ProfetValueError(
            f"{what} must be an instance name or a list of them; got {type_name(value)} "
            f"{shown(value)}"
        )
    out = list(value)
    bad = [v for v in out if not isinstance(v, str)]
    if bad:
        raise ProfetValueError(f"{what}: {shown(bad[0])} is not an instance name (text)")
    if not out:
        raise ProfetValueError(f"{what} is empty; give at least one instance name (or None: all)")
    return out


def is_number(value) -> bool:
    """A real number (int or float, numpy's too), not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def float_or_nan(value) -> float:
    """``float(value)`` for a number (an int beyond float range: inf), else NaN."""
    if not is_number(value):
        return np.nan
    try:
        return float(value)
    except OverflowError:
        return np.inf if value > 0 else -np.inf


def numbers_arg(value, what: str, unit: str = "", none_is_nan: bool = False) -> np.ndarray:
    """A number or array-like of numbers as a float array (ints beyond float range: +-inf);
    text, bools and other objects are refused naming the first; None too unless
    ``none_is_nan`` (an unknown value in an array)."""
    if isinstance(value, (str, bytes, dict)):
        arr = np.array([value], dtype=object)
    else:
        arr = np.atleast_1d(np.asarray(value)).ravel()
    if arr.dtype.kind in "iuf":
        return arr.astype(float)
    arr = arr.astype(object)
    if none_is_nan:
        arr = np.array([np.nan if v is None else v for v in arr], dtype=object)
    bad = [v for v in arr if not is_number(v)]
    if bad:
        raise ProfetValueError(
            f"{what} {shown(bad[0])} is not a number{' of ' + unit if unit else ''}"
        )
    return np.array([float_or_nan(v) for v in arr], dtype=float)
