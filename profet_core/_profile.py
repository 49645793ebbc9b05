"""Reading user profiles: PROFET JSON, TensorBoard ``tensorflow_stats`` CSV, or a table of many."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ._data import OP_PREFIXES, op_columns
from ._tfstats import group_tf_stats, tf_stats_columns
from .errors import ProfetFileNotFoundError, ProfetValueError

#: Largest profile file accepted (bytes). A single profile is a few kB; tables of thousands of
#: profiles stay well under this.
MAX_PROFILE_BYTES = 50 * 1024 * 1024
LATENCY_COLUMN = "batch_latency_s"


def _check_time(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProfetValueError(
            f"op {name!r} has time {value!r}; op times must be numbers of microseconds"
        )
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ProfetValueError(
            f"op {name!r} has time {value!r}; allowed: finite and >= 0 microseconds"
        )
    return value


def _check_name(name) -> str:
    if not isinstance(name, str) or not name.startswith(OP_PREFIXES) or name in OP_PREFIXES:
        raise ProfetValueError(f"op name {name!r} is not of the form Host_<Op> or Device_<Op>")
    return name


def _from_json(text: str) -> pd.DataFrame:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfetValueError(
            f"profile is not valid JSON ({exc.msg} at line {exc.lineno})"
        ) from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data or not all(isinstance(d, dict) for d in data):
        raise ProfetValueError(
            "profile JSON must be an object of op name -> microseconds, or a list of such objects"
        )
    rows = []
    for obj in data:
        if not obj:
            raise ProfetValueError(
                "profile JSON holds an empty object; it needs at least one op time"
            )
        rows.append({_check_name(k): _check_time(k, v) for k, v in obj.items()})
    return pd.DataFrame(rows).fillna(0.0)


def _from_table(df: pd.DataFrame) -> pd.DataFrame:
    if tf_stats_columns(df.columns) is not None:
        return group_tf_stats(df)
    ops = op_columns(df.columns)
    if not ops:
        raise ProfetValueError(
            "table has no Host_<Op>/Device_<Op> columns and is not a TensorBoard tensorflow_stats "
            f"export (needs Host/device, Type, Total time (us)); columns found: {list(df.columns)[:8]}"
        )
    if df.empty:
        raise ProfetValueError("profile table has no rows")
    times = df[ops].apply(pd.to_numeric, errors="coerce")
    nonnum = [c for c in ops if (df[c].notna() & times[c].isna()).any()]
    if nonnum:
        raise ProfetValueError(f"op column(s) {nonnum[:5]} hold non-numeric values")
    times = times.fillna(0.0).astype(float)
    bad = [c for c in ops if (~np.isfinite(times[c]) | (times[c] < 0)).any()]
    if bad:
        raise ProfetValueError(
            f"op column(s) {bad[:5]} hold negative or infinite times; allowed: >= 0 us"
        )
    out = times
    if LATENCY_COLUMN in df.columns:
        lat = pd.to_numeric(df[LATENCY_COLUMN], errors="coerce")
        present = df[LATENCY_COLUMN].notna()
        if (present & (lat.isna() | ~np.isfinite(lat) | (lat <= 0))).any():
            raise ProfetValueError(f"column {LATENCY_COLUMN!r} must hold seconds > 0 (or be empty)")
        out = out.assign(**{LATENCY_COLUMN: lat.astype(float)})
    return out.reset_index(drop=True)


def _sniff(data: bytes, name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix == ".parquet" or data[:4] == b"PAR1":
        return "parquet"
    if suffix == ".json" or data.lstrip()[:1] in (b"{", b"["):
        return "json"
    if suffix in (".csv", ".txt", ""):
        return "csv"
    raise ProfetValueError(f"file {name!r} has type {suffix!r}; allowed: .json, .csv, .parquet")


def parse_profile(data: bytes | str, name: str = "profile.json") -> pd.DataFrame:
    """Parse profile bytes (an upload, pasted text or a file's contents).

    Parameters
    ----------
    data : bytes or str
        The file's contents. Accepted: PROFET JSON (one object op -> microseconds, or a list of
        them); TensorBoard's ``tensorflow_stats`` CSV (columns ``Host/device``, ``Type``,
        ``Total time (us)``), grouped by host/device and op type; a CSV or Parquet table with one
        profile per row in ``Host_<Op>``/``Device_<Op>`` columns, optionally with
        ``batch_latency_s`` (each row's anchor latency, seconds).
    name : str
        File name, used only to tell the format by its suffix and in messages.

    Returns
    -------
    pandas.DataFrame
        Shape (n_profiles, n_ops): op times in microseconds (0 for ops a profile lacks), plus a
        ``batch_latency_s`` column when the input carried one.

    Raises
    ------
    ProfetValueError
        Empty or oversized input, an unknown format, malformed JSON or CSV, a non-numeric,
        negative or non-finite time, or a bad op name.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        raise ProfetValueError(f"profile {name!r} is empty")
    if len(data) > MAX_PROFILE_BYTES:
        raise ProfetValueError(
            f"profile {name!r} is {len(data) / 1e6:.1f} MB; the limit is {MAX_PROFILE_BYTES / 1e6:.0f} MB"
        )
    kind = _sniff(data, name)
    if kind == "json":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ProfetValueError(f"profile {name!r} is not UTF-8 text") from None
        return _from_json(text)
    try:
        if kind == "parquet":
            df = pd.read_parquet(io.BytesIO(data))
        else:
            df = pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # pandas/pyarrow raise many types for malformed files
        raise ProfetValueError(
            f"cannot read {name!r} as {kind}: {str(exc).splitlines()[0]}"
        ) from None
    return _from_table(df)


def read_profile(path: str | Path) -> pd.DataFrame:
    """Read a profile file; see :func:`parse_profile` for the formats and the result."""
    path = Path(path)
    if not path.is_file():
        raise ProfetFileNotFoundError(f"profile file {str(path)!r} does not exist")
    size = path.stat().st_size
    if size > MAX_PROFILE_BYTES:
        raise ProfetValueError(
            f"profile {path.name!r} is {size / 1e6:.1f} MB; the limit is {MAX_PROFILE_BYTES / 1e6:.0f} MB"
        )
    return parse_profile(path.read_bytes(), path.name)
