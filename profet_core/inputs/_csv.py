"""CSV in and out: the shape of a user's CSV is checked line by line, and text written to CSV
cannot become a spreadsheet formula.

pandas forgives what a user never meant: a row with one field more than the header silently
turns the first column into the index (or drops the last field), a row with one fewer is padded
with NaN, and ``a, b`` headers give a column named ``" b"`` that no lookup finds. Here every
record must have as many fields as the header, and header names carry no padding.

Spreadsheets run a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and tab or carriage
return) as a formula: OWASP's advice for CSV injection is to prefix such text with ``'``. Numbers
(``-1.5``) and a lone sign (``-``, ``+``: two-level designs' level labels) are left as they are.
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd

from .._messages import printable, quote, quote_list
from ..errors import ProfetValueError

_FORMULA = re.compile(r"[=+\-@\t\r]")
_HARMLESS = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]", re.ASCII)


def check_csv_text(text: str, where: str) -> list[str]:
    """Check a CSV's shape; return its header.

    Parameters
    ----------
    text : str
        The whole CSV.
    where : str
        What it is, for messages (e.g. ``"profile 'p.csv'"``).

    Returns
    -------
    list of str
        The header's field names.

    Raises
    ------
    ProfetValueError
        No header; a header name repeated or padded with spaces (a ``", "`` separator); a record
        (naming its line) with more or fewer fields than the header.
    """
    header, line = None, 0
    simple = '"' not in text and "\r" not in text.replace("\r\n", "")
    if simple:  # the common case: one record per line, counted without the csv module
        lines = text.splitlines()
        counts = np.fromiter((ln.count(",") for ln in lines), dtype=np.int64, count=len(lines))
        blank = np.fromiter((not ln.strip() for ln in lines), dtype=bool, count=len(lines))
        filled = np.flatnonzero(~blank)
        if not filled.size:
            raise ProfetValueError(f"{where} has no header row")
        first = int(filled[0])
        header = lines[first].split(",")
        bad = filled[counts[filled] != counts[first]]
        if bad.size:
            line = int(bad[0])
            _refuse_fields(where, line + 1, int(counts[line]) + 1, len(header))
    else:
        try:
            reader = csv.reader(io.StringIO(text))
            for row in reader:
                if not row or not any(f.strip() for f in row):
                    continue
                if header is None:
                    header = row
                elif len(row) != len(header):
                    _refuse_fields(where, reader.line_num, len(row), len(header))
        except csv.Error as exc:
            raise ProfetValueError(f"cannot read {where} as CSV: {quote(str(exc))}") from None
        if header is None:
            raise ProfetValueError(f"{where} has no header row")
    _check_names(header, where)
    return header


def read_csv_file(path, limit: int, what: str) -> pd.DataFrame:
    """Read a small CSV file a user names (a catalog, a spec sheet) with every check.

    Parameters
    ----------
    path : str or path-like
    limit : int
        Largest file read (bytes).
    what : str
        What the file is, for messages ("instance catalog").

    Returns
    -------
    pandas.DataFrame
        Empty cells as NaN; the text ``NA`` or ``null`` stays text.

    Raises
    ------
    ProfetFileNotFoundError, ProfetValueError
        Missing, special (folder, FIFO, device) or oversized file; not UTF-8; a line whose
        fields do not match the header; anything pandas cannot parse.
    """
    from ._safe_read import read_bounded

    # read_bounded says what a folder, FIFO or device is, and never blocks or reads /dev/zero
    data = read_bounded(path, limit, what)
    where = f"{what} {str(path)[:200]!r}"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ProfetValueError(f"{where} is not UTF-8 text") from None
    check_csv_text(text, where)
    try:
        return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    except Exception as exc:  # pandas raises many types for a malformed CSV
        raise ProfetValueError(f"cannot read {where}: {str(exc)[:200]}") from None


def _refuse_fields(where: str, line: int, n: int, expected: int) -> None:
    more = "more" if n > expected else "fewer"
    raise ProfetValueError(
        f"{where}, line {line}: {n} fields, {more} than the header's {expected}; every row needs "
        "one value per column (a shifted row, or a comma inside an unquoted value?)"
    )


def _check_names(header: list[str], where: str) -> None:
    padded = [h for h in header if h != h.strip()]
    if padded:
        raise ProfetValueError(
            f"{where}: column name {quote(padded[0])} has spaces around it; separate columns "
            "with ',' alone, not ', '"
        )
    counts = pd.Series(header, dtype=object).value_counts()
    dup = counts[counts > 1].index.tolist()
    if dup:
        raise ProfetValueError(
            f"{where} repeats the column name(s) {quote_list(dup)}; each column may appear once"
        )


def escape_text(value):
    """``value`` without control characters (the one rule of what reaches a terminal or a CSV,
    :func:`~profet_core._messages.printable`), with a ``'`` before it if it is text a
    spreadsheet would run as a formula."""
    if isinstance(value, str) and value:
        value = printable(value)
        if _FORMULA.match(value) and not _HARMLESS.fullmatch(value):
            return "'" + value
    return value


def escape_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` whose text cells, column names and index labels cannot run as formulas.

    Parameters
    ----------
    df : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        Same shape; numeric columns untouched, text escaped by :func:`escape_text`. ``df``
        itself (not a copy) when nothing needs escaping; the input is never changed.
    """
    from ._args import frame_arg

    frame_arg(df, "the table to escape")
    changed = {}
    for col in df.columns:
        s = df[col]
        if pd.api.types.is_numeric_dtype(s) or s.dtype.kind in "bmM":
            continue
        # each distinct value once: a 1.6-million-row prediction table repeats a few names
        mapping = {v: escape_text(v) for v in pd.unique(s) if isinstance(v, str)}
        if any(e != v for v, e in mapping.items()):
            changed[col] = s.map(lambda v, m=mapping: m.get(v, v) if isinstance(v, str) else v)
    columns = [escape_text(c) for c in df.columns]
    index = df.index
    if not pd.api.types.is_numeric_dtype(index):
        index = index.map(escape_text)
    if not changed and columns == list(df.columns) and index.equals(df.index):
        return df
    out = df.copy()
    for col, values in changed.items():
        out[col] = values
    out.columns, out.index = columns, index
    return out


def to_csv(df: pd.DataFrame, target, **kwargs):
    """``df.to_csv(target, **kwargs)`` with :func:`escape_formulas` applied first."""
    return escape_formulas(df).to_csv(target, **kwargs)
