"""A ``torch.profiler`` ``key_averages()`` export -> PROFET's profile table (one row).

``prof.key_averages().table()`` is text for people; torch writes no machine-readable form of
it, so PROFET reads this one (CSV, or JSON under the key ``"key_averages"``), one row per
``FunctionEventAvg``::

    import csv
    rows = [{"name": e.key, "device_type": str(e.device_type), "count": e.count,
             "self_device_time_total": e.self_device_time_total} for e in prof.key_averages()]
    with open("key_averages.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader(); w.writerows(rows)
    # or: json.dump({"key_averages": rows, "steps": 3, "batch_latency_s": 0.05}, f)

Columns: ``name``, ``device_type`` (``DeviceType.CPU`` for ops; ``DeviceType.CUDA`` rows are the
kernels themselves, left out: their time is already on the op rows), ``count`` and
``self_device_time_total`` (``self_cuda_time_total`` before torch 2.4), microseconds over all
profiled steps; ``steps`` optional (a CSV column or the JSON key; else the count of the
``ProfilerStep*`` row; else PROFET's 2, said in ``attrs["steps_assumed_rows"]``).

What an export cannot say, a trace does: a kernel's time is on the innermost op that launched it
(``aten::cudnn_convolution``, ``aten::convolution_backward``), not the first-level op or
autograd node; the warm-up step is not dropped; there is no ``Device_IDLE``, no depthwise and no
AMP. Notes say so (``attrs["profile_notes"]``).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from .._messages import quote, quote_list
from .._schema import LATENCY_COLUMN, MAX_ROWS, STEPS_COLUMN
from ..errors import ProfetValueError
from ._csv import check_csv_text
from ._rules import check_latency, check_op_names, check_steps, check_times, text_to_float

__all__ = ["KEY_AVERAGES_KEY", "from_key_averages", "is_key_averages_csv"]

KEY_AVERAGES_KEY = "key_averages"
_TIME = ("self_device_time_total", "self_cuda_time_total")
_NEEDED = ("name", "device_type", "count")
NOTE = (
    "key_averages export: each kernel's time is on the innermost op that launched it (self "
    "time), not the first-level op or autograd node; no warm-up step dropped, no Device_IDLE, "
    "depthwise convolutions and AMP not told (a trace tells them)"
)


def is_key_averages_csv(text: str) -> bool:
    """Whether a CSV's header names a key_averages export's time column."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return any(t in [h.strip() for h in first.split(",")] for t in _TIME)


def _frame_from_json(doc: dict, where: str) -> tuple[pd.DataFrame, dict]:
    rows = doc.get(KEY_AVERAGES_KEY)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ProfetValueError(f"{where}: {KEY_AVERAGES_KEY!r} must be a list of objects")
    unknown = [k for k in doc if k not in (KEY_AVERAGES_KEY, STEPS_COLUMN, LATENCY_COLUMN)]
    if unknown:
        raise ProfetValueError(
            f"{where} has unknown key(s) {quote_list(unknown)}; allowed: {KEY_AVERAGES_KEY!r}, "
            f"{STEPS_COLUMN!r}, {LATENCY_COLUMN!r}"
        )
    if len(rows) > MAX_ROWS:
        raise ProfetValueError(f"{where} holds {len(rows):,} rows; the limit is {MAX_ROWS:,}")
    return pd.DataFrame(rows), {k: doc[k] for k in (STEPS_COLUMN, LATENCY_COLUMN) if k in doc}


def _frame_from_csv(text: str, where: str) -> pd.DataFrame:
    check_csv_text(text, where)
    try:
        df = pd.read_csv(
            io.StringIO(text), dtype=str, keep_default_na=False, index_col=False, nrows=MAX_ROWS + 1
        )
    except Exception as exc:  # pandas raises many types for malformed CSV
        raise ProfetValueError(f"cannot read {where} as CSV: {quote(str(exc))}") from None
    if len(df) > MAX_ROWS:
        raise ProfetValueError(f"{where} holds more than {MAX_ROWS:,} rows")
    return df


def _column(df: pd.DataFrame, name: str, where: str) -> np.ndarray:
    col = df[name]
    if col.map(lambda v: isinstance(v, str)).all():  # a CSV's cells
        return text_to_float(col, name, where)
    bad = col.map(lambda v: isinstance(v, bool) or not isinstance(v, (int, float)))
    if bad.any():
        raise ProfetValueError(f"{where}: column {quote(name)} holds a value that is no number")
    try:
        return col.to_numpy(dtype=float)
    except OverflowError:  # an integer beyond float range
        raise ProfetValueError(f"{where}: column {quote(name)} holds a number too large") from None


def from_key_averages(data: str | dict, where: str) -> pd.DataFrame:
    """Read a key_averages export (CSV text, or the parsed JSON object) into one profile row.

    Returns
    -------
    pandas.DataFrame
        Shape (1, n_ops + k): ``Device_<op>`` (us over the steps; summed over rows of the same
        name), ``framework`` ("pytorch"), ``steps`` where the export says it (a column, the JSON
        key or the ``ProfilerStep*`` row's count), ``batch_latency_s`` where given; ``attrs
        ["profile_notes"]``.

    Raises
    ------
    ProfetValueError
        A column missing, a time or count that is no number or negative, more than one ``steps``
        value, no op with device time.
    """
    df, meta = _frame_from_json(data, where) if isinstance(data, dict) else (None, {})
    df = df if df is not None else _frame_from_csv(data, where)
    time_col = next((t for t in _TIME if t in df.columns), None)
    missing = [c for c in _NEEDED if c not in df.columns] + ([] if time_col else [_TIME[0]])
    if missing:
        raise ProfetValueError(
            f"{where}: a key_averages export needs the column(s) {quote_list(missing)} "
            f"(have {quote_list(list(df.columns))})"
        )
    us = _column(df, time_col, where)
    count = _column(df, "count", where)
    check_times(np.nan_to_num(us)[None, :], [str(n) for n in df["name"]], where, "time of")
    kind = df["device_type"].astype(str).str.replace("DeviceType.", "", regex=False).str.upper()
    names = df["name"].astype(str).str.slice(0, 200)
    ops = pd.Series(np.nan_to_num(us), index=names)[(kind == "CPU").to_numpy()]
    ops = ops[ops > 0].groupby(level=0, sort=False).sum().sort_values(ascending=False)
    if ops.empty:
        raise ProfetValueError(
            f"{where}: no op has device time (self_device_time_total): a CPU-only profile, or "
            "activities lacking ProfilerActivity.CUDA"
        )
    row = {f"Device_{k}": float(v) for k, v in ops.items()}
    check_op_names(list(row), where)
    steps = meta.get(STEPS_COLUMN)
    if steps is None and STEPS_COLUMN in df.columns:
        values = pd.unique(_column(df, STEPS_COLUMN, where))
        if len(values) != 1:
            raise ProfetValueError(f"{where}: column 'steps' must hold one value for every row")
        steps = values[0]
    marker = (names == "ProfilerStep*").to_numpy()
    if steps is None and marker.any():
        steps = count[marker][0]
    if steps is not None:
        row[STEPS_COLUMN] = int(check_steps([steps], where)[0])
    if LATENCY_COLUMN in meta:
        lat = meta[LATENCY_COLUMN]
        if isinstance(lat, bool) or not isinstance(lat, (int, float)):
            raise ProfetValueError(f"{where}: {LATENCY_COLUMN} {quote(lat)} is no number (s)")
        row[LATENCY_COLUMN] = float(check_latency([lat], where)[0])
    row["framework"] = "pytorch"
    out = pd.DataFrame([row])
    out.attrs["profile_notes"] = (NOTE,)
    return out


def loads_key_averages(text: str, where: str) -> dict | None:
    """The parsed JSON object if ``text`` is a key_averages export in JSON, else None."""
    if f'"{KEY_AVERAGES_KEY}"' not in text:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) and KEY_AVERAGES_KEY in doc else None
