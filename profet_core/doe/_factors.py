"""Two-level factors: their names and levels, parsing ``NAME=LOW,HIGH``, and coding -1/+1.

Only numpy and pandas: the CLI parses factors before it needs statsmodels or pyDOE3.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._messages import quote_list
from ..errors import ProfetValueError

#: Largest number of factors a design may have (26 letters exist, but the alias search and the
#: run sheet grow as 2**k).
MAX_FACTORS = 12
#: Largest number of rows a run sheet may have.
MAX_RUNS = 10_000
#: Columns of a run sheet that are bookkeeping, never factors.
RUN_COLUMNS = ("run", "std_order", "replicate")
#: Longest factor name or level label, in characters (they are printed in every table).
MAX_LABEL = 200

LETTERS = string.ascii_uppercase
# Kubernetes-style quantity suffixes, so that "750m" < "1500m" and "512Mi" < "1Gi" sort as numbers.
_SUFFIX_SCALE = {
    "": 1.0,
    "m": 1e-3,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
}
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%]*)\s*$")


def _check_text(what: str, text: str) -> None:
    """Refuse labels that cannot be printed or written to a CSV as UTF-8 text."""
    if len(text) > MAX_LABEL:
        raise ProfetValueError(
            f"{what} {text[:40]!r}... is {len(text)} characters long; at most {MAX_LABEL} allowed"
        )
    bad = next((ch for ch in text if not ch.isprintable()), None)
    if bad is not None:
        raise ProfetValueError(
            f"{what} {text!r} contains the character U+{ord(bad):04X}, which is not printable "
            "text; use letters, digits and punctuation"
        )


@dataclass(frozen=True)
class Factor:
    """A two-level factor.

    Parameters
    ----------
    name : str
        Column name of the factor in run sheets and results.
    low, high : str
        Labels of the low (coded -1) and high (coded +1) levels.
    """

    name: str
    low: str
    high: str

    def __post_init__(self) -> None:
        name, low, high = (str(v).strip() for v in (self.name, self.low, self.high))
        if not name:
            raise ProfetValueError("a factor needs a name; got an empty one")
        _check_text("factor name", name)
        if any(ch in name for ch in ":=*,"):
            # these characters separate factors in term names ("A:B = C:D") and in NAME=LOW,HIGH
            raise ProfetValueError(
                f"factor name {name!r} may not contain ':', '=', '*' or ','; rename it"
            )
        if not low or not high:
            raise ProfetValueError(
                f"factor {name!r} needs a low and a high level; got low={low!r}, high={high!r}"
            )
        _check_text(f"level of factor {name!r}", low)
        _check_text(f"level of factor {name!r}", high)
        if low == high:
            raise ProfetValueError(
                f"factor {name!r} has one level ({low!r}); a two-level design needs two different "
                "levels"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)


def parse_factor(spec: str) -> Factor:
    """Parse a factor written as ``NAME=LOW,HIGH``.

    Parameters
    ----------
    spec : str
        For example ``"cpu=750m,1500m"``.

    Returns
    -------
    Factor

    Raises
    ------
    ProfetValueError
        If the text is not ``NAME=LOW,HIGH`` or does not give exactly two levels.
    """
    name, sep, levels = str(spec).partition("=")
    if not sep or not name.strip():
        raise ProfetValueError(
            f"factor {str(spec)[:80]!r} must look like NAME=LOW,HIGH (e.g. cpu=750m,1500m)"
        )
    parts = [p.strip() for p in levels.split(",")]
    if len(parts) != 2 or not all(parts):
        got = [p for p in parts if p]
        raise ProfetValueError(
            f"factor {name.strip()[:80]!r} has {len(got)} level(s) ({quote_list(got, 6) or 'none'}); "
            "a two-level design needs exactly two, written NAME=LOW,HIGH"
        )
    return Factor(name.strip(), parts[0], parts[1])


# ---------------------------------------------------------------------------------- coding
def label(value: object) -> str:
    """Level label of a results cell: ``1.0`` -> ``"1"``, strings stripped."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def as_number(text: str) -> float | None:
    """Numeric value of a label such as ``"750m"`` or ``"1.5Gi"``, or None if it is not one."""
    m = _QUANTITY.match(text)
    if m is None or m.group(2) not in _SUFFIX_SCALE:
        return None
    return float(m.group(1)) * _SUFFIX_SCALE[m.group(2)]


def _code_with_hint(name: str, labels: pd.Series, hint: Factor) -> np.ndarray:
    lo, hi = hint.low, hint.high
    lo_num, hi_num = as_number(lo), as_number(hi)
    coded = np.zeros(len(labels), dtype=int)
    for idx, lab in enumerate(labels):
        num = as_number(lab)
        if lab == lo or (num is not None and num == lo_num):
            coded[idx] = -1
        elif lab == hi or (num is not None and num == hi_num):
            coded[idx] = 1
        elif num in (-1.0, 1.0):
            coded[idx] = int(num)
        else:
            raise ProfetValueError(
                f"factor {name!r} has value {lab[:80]!r}, which is neither its low level {lo!r} "
                f"nor its high level {hi!r}"
            )
    if len(set(coded)) != 2:
        raise ProfetValueError(
            f"factor {name!r} takes only one level ({labels.iloc[0][:80]!r}) in the results; a "
            "two-level factor needs runs at both levels"
        )
    return coded


def _infer_levels(name: str, distinct: list[str]) -> tuple[str, str, str | None]:
    """(low, high, note) of a factor's two labels when the user did not say which is which."""
    lowered = {d.lower() for d in distinct}
    nums = [as_number(d) for d in distinct]
    if lowered == {"-", "+"}:
        return "-", "+", None
    if lowered in ({"low", "high"}, {"lo", "hi"}):
        low = next(d for d in distinct if d.lower() in ("low", "lo"))
        return low, next(d for d in distinct if d != low), None
    if None not in nums and nums[0] != nums[1]:
        lo, hi = (distinct[0], distinct[1]) if nums[0] < nums[1] else (distinct[1], distinct[0])
        return lo, hi, None
    low, high = sorted(distinct)
    note = (
        f"levels of {name!r} are not numbers, so they were ordered alphabetically: "
        f"low (-1) = {low!r}, high (+1) = {high!r}; pass the levels to choose"
    )
    return low, high, note


def code_factor(
    name: str, values: pd.Series, hint: Factor | None
) -> tuple[np.ndarray, Factor, str | None]:
    """Code a results column -1/+1 and tell which label is low.

    Parameters
    ----------
    name : str
        Column name (the factor's name).
    values : pandas.Series
        The column, one cell per run.
    hint : Factor or None
        The user's low and high labels, if given.

    Returns
    -------
    coded : numpy.ndarray of int, shape (n_runs,)
        -1 or +1 per run.
    factor : Factor
        The factor with its low and high labels.
    note : str or None
        How the level order was chosen, when it was guessed alphabetically.
    """
    if values.isna().any():
        rows = ", ".join(str(i) for i in values.index[values.isna()][:5])
        raise ProfetValueError(f"factor {name!r} has missing values (rows {rows})")
    labels = values.map(label)
    if hint is not None:
        return _code_with_hint(name, labels, hint), hint, None
    distinct = list(dict.fromkeys(labels))
    if len(distinct) != 2:
        shown = ", ".join(repr(d[:40]) for d in distinct[:6]) + (
            ", ..." if len(distinct) > 6 else ""
        )
        raise ProfetValueError(
            f"factor {name!r} has {len(distinct)} level(s) ({shown}); a two-level design needs "
            "exactly two per factor"
        )
    low, high, note = _infer_levels(name, distinct)
    return np.where(labels == high, 1, -1), Factor(name, low, high), note
