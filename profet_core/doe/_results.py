"""Reading a results table safely, and the one rule for the numbers in it.

Only pandas and the standard library, so that the CLI can refuse a bad path quickly.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._messages import quote
from ..errors import ProfetValueError
from ..inputs._safe_read import read_bounded
from ._factors import RUN_COLUMNS

#: Largest results file read, in bytes (10,000 runs of a few dozen columns fit many times over).
MAX_RESULTS_BYTES = 20 * 2**20
#: Largest magnitude a number in a results table may have. Beyond it (and at inf) the sums of
#: squares lose every significant digit or overflow, so such a value is a typo, not a measurement.
MAX_ABS = 1e15
#: Smallest non-zero magnitude: below it (denormals such as 1e-320) squares underflow to 0.
MIN_ABS = 1e-150


def read_results(source: str | Path | bytes) -> pd.DataFrame:
    """Read a results CSV.

    Parameters
    ----------
    source : str, pathlib.Path or bytes
        Path of the CSV file, or its content (e.g. the bytes of an upload); at most 20 MB.

    Returns
    -------
    pandas.DataFrame
        The table as read. Every cell that is a number is finite with magnitude at most 1e15
        (empty cells stay NaN).

    Raises
    ------
    ProfetFileNotFoundError
        If a path is given and nothing exists there.
    ProfetValueError
        If the path is not a readable regular file (a directory, FIFO, device, ...), the content
        is larger than 20 MB or not a readable, non-empty CSV, or a number in it is not finite
        or beyond 1e15 in magnitude.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        what, data = "the uploaded file", bytes(source)
    else:
        what = f"results file {quote(os.fsdecode(os.fspath(source)))}"
        # read_bounded refuses folders, FIFOs and devices by name and reads at most the limit
        data = read_bounded(source, MAX_RESULTS_BYTES, "results file")
    if len(data) > MAX_RESULTS_BYTES:
        raise ProfetValueError(
            f"{what} is larger than {MAX_RESULTS_BYTES // 2**20} MB; a results table is smaller"
        )
    _check_shape(data, what)
    try:
        df = pd.read_csv(io.BytesIO(data))
    except pd.errors.EmptyDataError:
        raise ProfetValueError(
            f"{what} is empty; it needs a header row and one row per run"
        ) from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OverflowError) as exc:
        reason = " ".join(str(exc).split())[:200]  # one line, whatever the parser quoted
        raise ProfetValueError(f"cannot read {what} as CSV: {reason}") from None
    if df.empty:
        raise ProfetValueError(f"{what} has a header but no rows")
    for pos, col in enumerate(df.columns):
        values = numeric_values(df[col])
        if values is not None and len(_bad_rows(values)):
            # quote the cell as written: pandas has already turned a 400-digit number into inf
            text = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False).iloc[:, pos]
            check_magnitude(values, text, f"column {quote(str(col))} of {what}")
    return df


def _check_shape(data: bytes, what: str) -> None:
    """Every row as many fields as the header, no repeated or padded names (see ``_csv``)."""
    from ..inputs._csv import check_csv_text

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ProfetValueError(f"{what} is not UTF-8 text") from None
    if text.strip():  # an empty file keeps its own message
        check_csv_text(text, what)


# ------------------------------------------------------------------------------------- numbers
def cell_float(value: object) -> float | None:
    """A cell as a float (NaN when empty), or None when it is not a number."""
    if value is None or value is pd.NA:
        return math.nan
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | np.integer):
        # float() of a 400-digit int raises OverflowError; its sign is all that matters here
        return float(value) if abs(value) < 1e300 else (math.inf if value > 0 else -math.inf)
    if isinstance(value, float | np.floating):
        return float(value)
    text = str(value).strip()
    if not text:
        return math.nan
    try:
        return float(text)  # "1e400" and a 400-digit string give inf, not an error
    except ValueError:
        return None


def numeric_values(column: pd.Series) -> np.ndarray | None:
    """The column as floats if every cell is a number or empty, else None (a label column).

    Parameters
    ----------
    column : pandas.Series
        One results column.

    Returns
    -------
    numpy.ndarray of float, shape (n_rows,), or None
        Empty cells are NaN; numbers beyond float range are +-inf.
    """
    if pd.api.types.is_bool_dtype(column):
        return None
    if pd.api.types.is_numeric_dtype(column):
        return column.to_numpy(dtype=float, na_value=np.nan)
    values = [cell_float(v) for v in column.tolist()]
    if any(v is None for v in values):
        return None
    return np.asarray(values, dtype=float)


def _bad_rows(values: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # NaN (an empty cell) compares False: allowed
        size = np.abs(values)
        tiny = (size > 0) & (size < MIN_ABS)
        return np.flatnonzero(np.isinf(values) | (size > MAX_ABS) | tiny)


def check_magnitude(values: np.ndarray, raw: pd.Series, what: str) -> None:
    """Refuse infinite numbers and numbers beyond :data:`MAX_ABS` (NaN means empty and passes).

    Parameters
    ----------
    values : numpy.ndarray of float, shape (n_rows,)
        The column as numbers (from :func:`numeric_values`).
    raw : pandas.Series
        The same column as read, to quote the offending cell.
    what : str
        Name of the column in the message, e.g. ``"response 'y'"``.

    Raises
    ------
    ProfetValueError
        Naming the column, the row (1 = first data row) and the value.
    """
    bad = _bad_rows(values)
    if len(bad) == 0:
        return
    cell = str(raw.iloc[bad[0]]).strip()
    shown = cell if len(cell) <= 30 else f"{cell[:20]}... ({len(cell)} characters)"
    v = values[bad[0]]
    reason = (
        "is not a finite number"
        if np.isinf(v)
        else ("is beyond 1e15" if abs(v) > MAX_ABS else "is below 1e-150")
    )
    raise ProfetValueError(
        f"{what}, row {bad[0] + 1}: the value {shown} {reason}; results must be finite numbers "
        f"0 or with magnitude 1e-150..1e15 ({len(bad)} such value(s) in this column)"
    )


def default_factors(results: pd.DataFrame, response: str | Sequence[str]) -> tuple[str, ...]:
    """Columns taken as factors when none are named.

    Every column except the response(s), the run-sheet bookkeeping columns (``run``,
    ``std_order``, ``replicate``) and numeric columns with more than two distinct values (other
    responses).

    Parameters
    ----------
    results : pandas.DataFrame
        The results table.
    response : str or sequence of str
        Response column(s) to leave out.

    Returns
    -------
    tuple of str
    """
    responses = {response} if isinstance(response, str) else set(response)
    out = []
    for col in results.columns:
        if col in responses or col in RUN_COLUMNS:
            continue
        s = results[col]
        if pd.api.types.is_numeric_dtype(s) and s.dropna().nunique() > 2:
            continue
        out.append(str(col))
    return tuple(out)
