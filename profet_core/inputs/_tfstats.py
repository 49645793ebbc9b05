"""TensorFlow profiler ``tensorflow_stats`` tables -> one PROFET profile row.

The training data was built from this table: IDLE rows kept, times grouped by
``Host/device + "_" + Type``, summing *Total time (us)* (not self-time). Column names differ
between profiler versions (older TensorBoard exports say ``Type``, newer xprof ``Operation
Type``; the tool itself is ``tensorflow_stats`` or ``framework_op_stats``): every known variant is
accepted, an unknown layout is refused with the columns found.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._messages import quote
from .._schema import MAX_ROWS
from ..errors import ProfetValueError
from ._rules import check_op_names, check_times, text_to_float

#: Canonical column -> accepted spellings (compared case-insensitively, spaces folded).
COLUMN_VARIANTS = {
    "Host/device": ("Host/device", "Host/Device", "Host or device"),
    "Type": ("Type", "Operation Type", "Op Type", "Operation type"),
    "Total time (us)": ("Total time (us)", "Total Time (us)", "Total time (μs)", "Total time"),
}


def _fold(name: str) -> str:
    return " ".join(str(name).split()).lower()


def tf_stats_columns(columns) -> dict | None:
    """Map each canonical column to the table's own name, or None if this is no tf-stats table.

    Parameters
    ----------
    columns : iterable of str
        The table's column names.

    Returns
    -------
    dict or None
        ``{canonical: actual}`` for the three needed columns when all are present.
    """
    folded = {_fold(c): c for c in columns}
    found = {}
    for canon, variants in COLUMN_VARIANTS.items():
        hit = next((folded[_fold(v)] for v in variants if _fold(v) in folded), None)
        if hit is None:
            return None
        found[canon] = hit
    return found


def group_tf_stats(df: pd.DataFrame) -> pd.DataFrame:
    """Group a ``tensorflow_stats`` table into one profile row, the way the training data was.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per op instance, with the columns of :data:`COLUMN_VARIANTS` (any variant).

    Returns
    -------
    pandas.DataFrame
        Shape (1, n_ops): ``Host_<Type>``/``Device_<Type>`` -> total microseconds.

    Raises
    ------
    ProfetValueError
        An unknown column layout, a side other than host/device, an empty type, or a time
        that is not a finite number >= 0.
    """
    cols = tf_stats_columns(df.columns)
    if cols is None:
        raise ProfetValueError(
            "not a tensorflow_stats table: needs columns "
            f"{[v[0] + ' (or ' + ' / '.join(v[1:]) + ')' for v in COLUMN_VARIANTS.values()]}; "
            f"columns found: {[str(c)[:40] for c in list(df.columns)[:8]]}"
        )
    if df.empty:
        raise ProfetValueError("tensorflow_stats table has no rows")
    if len(df) > MAX_ROWS:
        raise ProfetValueError(
            f"tensorflow_stats table has {len(df):,} rows; the limit is {MAX_ROWS:,}"
        )
    raw_side = df[cols["Host/device"]]
    side = raw_side.astype("string").str.strip().str.capitalize().fillna("")
    bad = ~side.isin(["Host", "Device"]).to_numpy()
    if bad.any():
        i = int(bad.argmax())
        raise ProfetValueError(
            f"tensorflow_stats row {i}: {cols['Host/device']!r} is {quote(raw_side.iloc[i])}; "
            "allowed: Host, Device"
        )
    kind = df[cols["Type"]].astype("string").str.strip()
    empty = (kind.isna() | (kind == "")).to_numpy()
    if empty.any():
        raise ProfetValueError(
            f"tensorflow_stats row {int(empty.argmax())} has an empty op Type; every row needs one"
        )
    total = df[cols["Total time (us)"]]
    if pd.api.types.is_bool_dtype(total):
        raise ProfetValueError(f"column {cols['Total time (us)']!r} holds True/False; allowed: us")
    if pd.api.types.is_numeric_dtype(total):
        times = total.to_numpy(dtype=float, na_value=np.nan)
    else:
        times = text_to_float(total, cols["Total time (us)"], "tensorflow_stats table")
    names = (side + "_" + kind).astype(str)
    check_op_names(names.unique().tolist(), "tensorflow_stats table")
    check_times(times[:, None], [cols["Total time (us)"]], "tensorflow_stats table", "column")
    grouped = pd.Series(times).groupby(names.to_numpy(), sort=True).sum()
    check_times(grouped.to_numpy()[None, :], list(grouped.index), "tensorflow_stats total", "op")
    return pd.DataFrame([grouped.to_dict()])
