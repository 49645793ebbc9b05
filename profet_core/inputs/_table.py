"""Profile tables (CSV or Parquet): one profile per row, or a TensorBoard tensorflow_stats export.

Types are checked before values are converted: a CSV header is read by itself first (duplicate
names, which pandas would silently rename ``X.1``, and too many columns are refused before
pandas builds anything), and a Parquet file's schema and row count come from its metadata, so
datetime, duration, boolean or text op columns and oversized tables are refused by name
without decoding them. Cells are then checked by :mod:`._profile_rules`, the same rules as
JSON's. An empty cell (CSV) or null (Parquet) means the op is absent (0); the text ``NaN``,
``null``, ``inf`` or ``True`` is refused.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from .._messages import quote, quote_list
from .._schema import LATENCY_COLUMN, MAX_CELLS, MAX_COLUMNS, MAX_ROWS, STEPS_COLUMN, op_columns
from ..errors import ProfetValueError
from ._csv import check_csv_text
from ._rules import check_op_names, check_times, text_to_float
from ._tfstats import group_tf_stats, tf_stats_columns

_EXTRA = (LATENCY_COLUMN, STEPS_COLUMN)


def _check_header(names: list, where: str) -> None:
    if len(names) > MAX_COLUMNS:
        raise ProfetValueError(f"{where} has {len(names):,} columns; the limit is {MAX_COLUMNS:,}")
    counts = pd.Series(names, dtype=object).astype(str).value_counts()
    dup = counts[counts > 1].index.tolist()
    if dup:
        raise ProfetValueError(
            f"{where} repeats the column name(s) {quote_list(dup)}; each column may appear once"
        )


def _max_rows(n_columns: int) -> int:
    return min(MAX_ROWS, MAX_CELLS // max(n_columns, 1))


def _refuse_rows(n: int, n_columns: int, where: str) -> None:
    limit = _max_rows(n_columns)
    if n > limit:
        raise ProfetValueError(
            f"{where} has more than {limit:,} rows; the limit is {MAX_ROWS:,} rows and "
            f"{MAX_CELLS:,} values"
        )


def _numeric(df: pd.DataFrame, names: list[str], where: str) -> pd.DataFrame:
    """CSV columns -> float (NaN where empty); booleans and non-number text refused."""
    out = {}
    for name in names:
        col = df[name]
        if pd.api.types.is_bool_dtype(col):
            raise ProfetValueError(
                f"{where}: column {quote(name)} holds True/False; allowed: numbers"
            )
        if pd.api.types.is_numeric_dtype(col):
            out[name] = col.to_numpy(dtype=float, na_value=np.nan)
        else:
            out[name] = text_to_float(col, name, where)
    return pd.DataFrame(out, index=range(len(df)))


def from_csv(text: str, where: str) -> pd.DataFrame:
    """A CSV table -> op columns (float, NaN where absent) plus ``steps``/``batch_latency_s``."""
    header = check_csv_text(text, where)
    _check_header(header, where)
    tf_cols = tf_stats_columns(header)
    ops = op_columns(header)
    if tf_cols is None:
        _require_ops(ops, header)
        check_op_names(ops, where)
    wanted = list(tf_cols.values()) if tf_cols else ops + [c for c in _EXTRA if c in header]
    limit = _max_rows(len(wanted))
    try:
        df = pd.read_csv(
            io.StringIO(text),
            usecols=wanted,
            keep_default_na=False,
            na_values=[""],
            index_col=False,
            nrows=limit + 1,
            dtype=str if tf_cols else None,
        )
    except Exception as exc:  # pandas raises many types for malformed CSV
        raise ProfetValueError(f"cannot read {where} as CSV: {quote(str(exc))}") from None
    _refuse_rows(len(df), len(wanted), where)
    if tf_cols:
        return group_tf_stats(df)
    return _numeric(df, [c for c in wanted], where)


def _require_ops(ops: list, columns: list) -> None:
    if not ops:
        raise ProfetValueError(
            "table has no Host_<Op>/Device_<Op> columns and is not a TensorBoard tensorflow_stats "
            "export (needs Host/device, Type, Total time (us)); columns found: "
            f"{quote_list(columns, 8)}"
        )


def _arrow_kind(typ) -> str:
    import pyarrow.types as pat

    if pat.is_null(typ):
        return "null"
    if pat.is_integer(typ):
        return "int"
    if pat.is_floating(typ):
        return "float"
    if pat.is_string(typ) or pat.is_large_string(typ):
        return "text"
    return "other"


def from_parquet(data: bytes, where: str) -> pd.DataFrame:
    """A Parquet table -> op columns (float, NaN where null) plus ``steps``/``batch_latency_s``."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        # No pre-buffering and no thread pool: both start Arrow C++ threads that can abort the
        # process at exit ("terminate called without an active exception", apache/arrow#34314);
        # the bytes are already in memory, so neither speeds anything up.
        pf = pq.ParquetFile(io.BytesIO(data), pre_buffer=False)
        schema, n_rows = pf.schema_arrow, pf.metadata.num_rows
    except Exception as exc:  # pyarrow raises many types for malformed files
        raise ProfetValueError(f"cannot read {where} as Parquet: {quote(str(exc))}") from None
    names = list(schema.names)
    _check_header(names, where)
    tf_cols = tf_stats_columns(names)
    ops = op_columns(names)
    if tf_cols is None:
        _require_ops(ops, names)
        check_op_names(ops, where)
    wanted = list(tf_cols.values()) if tf_cols else ops + [c for c in _EXTRA if c in names]
    _refuse_rows(n_rows, len(wanted), where)
    numeric = [tf_cols["Total time (us)"]] if tf_cols else wanted
    for name in numeric:
        typ = schema.field(name).type
        if _arrow_kind(typ) not in ("null", "int", "float"):
            raise ProfetValueError(
                f"{where}: column {quote(name)} has type {quote(str(typ))}; allowed: integer or "
                "float numbers (not datetime, duration, boolean or text)"
            )
    try:
        table = pf.read(columns=wanted, use_threads=False)
    except Exception as exc:
        raise ProfetValueError(f"cannot read {where} as Parquet: {quote(str(exc))}") from None
    for name in numeric:
        col = table.column(name)
        if _arrow_kind(col.type) == "float":
            nan = pc.fill_null(pc.is_nan(col), False).to_numpy(zero_copy_only=False)
            if nan.any():
                raise ProfetValueError(
                    f"{where}: column {quote(name)} holds NaN at row {int(nan.argmax())}; "
                    "allowed: numbers (null where absent)"
                )
    if tf_cols:
        for name in (tf_cols["Host/device"], tf_cols["Type"]):
            if _arrow_kind(schema.field(name).type) not in ("text", "null"):
                raise ProfetValueError(f"{where}: column {quote(name)} must hold text")
        return group_tf_stats(table.to_pandas())
    return pd.DataFrame(
        {n: table.column(n).to_numpy(zero_copy_only=False).astype(float) for n in wanted},
        index=range(n_rows),
    )


def finish(df: pd.DataFrame, where: str) -> tuple[pd.DataFrame, np.ndarray | None, object]:
    """Split a raw table into checked op times (absent -> 0), latencies and raw steps."""
    ops = op_columns(df.columns)
    if df.empty:
        raise ProfetValueError(f"{where} has no rows")
    times = df[ops].to_numpy(dtype=float)
    absent = np.isnan(times)
    if absent.all(axis=1).any():  # like JSON's empty object: a row must give some op time
        raise ProfetValueError(
            f"{where}: row {int(absent.all(axis=1).argmax())} has no op time (every op cell is "
            "empty); each row needs at least one"
        )
    times = np.where(absent, 0.0, times)
    check_times(times, ops, where)
    lat = df[LATENCY_COLUMN].to_numpy(dtype=float) if LATENCY_COLUMN in df.columns else None
    steps = df[STEPS_COLUMN].to_numpy(dtype=float) if STEPS_COLUMN in df.columns else None
    return pd.DataFrame(times, columns=ops), lat, steps
