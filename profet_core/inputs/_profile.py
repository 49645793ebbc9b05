"""Reading user profiles: PROFET JSON, TensorBoard ``tensorflow_stats`` CSV, a table of many, or
a torch.profiler trace (``.json``/``.json.gz``, :mod:`._torch_trace`) or ``key_averages()``
export (:mod:`._torch_keyavg`).

Every format goes through the same rules (:mod:`._profile_rules`): op names, op times, step
counts and latencies are refused the same way whichever reader found them. The result keeps op
times as given (us, over ``steps`` training steps); :func:`normalise_steps` moves them to
PROFET's convention of 2 steps, the span of every training profile.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._messages import quote, show_number
from .._schema import (
    DEFAULT_STEPS,
    LATENCY_COLUMN,
    MAX_PROFILE_BYTES,
    MIN_ROW_TOTAL_US,
    STEPS_ASSUMED,
    STEPS_COLUMN,
    op_columns,
)
from ..errors import ProfetValueError
from ._args import shown
from ._json import from_json
from ._rules import check_latency, check_steps
from ._safe_read import read_bounded
from ._table import finish, from_csv, from_parquet
from ._torch_events import GZIP_MAGIC
from ._torch_keyavg import from_key_averages, is_key_averages_csv, loads_key_averages
from ._torch_trace import NOTES_ATTR, is_trace, load_document, read_document, trace_table

__all__ = [
    "LATENCY_COLUMN",
    "MAX_PROFILE_BYTES",
    "STEPS_COLUMN",
    "normalise_steps",
    "parse_profile",
    "read_profile",
]


def _sniff(data: bytes, name: str) -> str:
    suffix = Path(name).suffix.lower()
    if data[:2] == GZIP_MAGIC:
        return "gzip"
    if suffix == ".parquet" or data[:4] == b"PAR1":
        return "parquet"
    if suffix == ".json" or data.lstrip()[:1] in (b"{", b"["):
        return "json"
    if suffix in (".csv", ".txt", ""):
        return "csv"
    raise ProfetValueError(
        f"file {quote(name)} has type {quote(suffix)}; allowed: .json, .csv, .parquet, and a "
        "torch.profiler trace (.json or .json.gz)"
    )


def _torch(data: bytes, kind: str, name: str, where: str) -> tuple[pd.DataFrame, bool] | None:
    """The table of a torch.profiler trace or key_averages export, and whether it is a trace
    (which counts its own steps); None for other inputs.

    A gzip file must hold one; plain JSON is read as a trace only where it holds
    ``"traceEvents"`` (parsed once more as PROFET JSON if it is no trace object).
    """
    if kind == "csv":
        text = _decode(data, where)
        return (from_key_averages(text, where), False) if is_key_averages_csv(text) else None
    if kind == "gzip" or b'"traceEvents"' in data:
        doc = load_document(data, f"trace {quote(name)}")
        if is_trace(doc):
            return trace_table(read_document(doc, name)), True
        if isinstance(doc, dict) and "key_averages" in doc:
            return from_key_averages(doc, where), False
        if kind == "gzip":
            raise ProfetValueError(
                f"{where} is gzip-compressed but holds no torch.profiler trace (no "
                "'traceEvents'); PROFET reads .gz only for traces: decompress other profiles first"
            )
        return None
    if kind == "json" and b'"key_averages"' in data:
        doc = loads_key_averages(_decode(data, where), where)
        return None if doc is None else (from_key_averages(doc, where), False)
    return None


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ProfetValueError(f"{where} is not UTF-8 text") from None


def with_steps(out: pd.DataFrame, steps, where: str) -> pd.DataFrame:
    """Put a checked int ``steps`` column last: the override, else the input's, else 2 (a
    new frame; ``out`` is unchanged).

    The rows given 2 because the input did not say are listed in ``attrs[STEPS_ASSUMED]``, so
    that a prediction can say so (a 10-step profile read as 2 steps is 5x off).
    """
    n = len(out)
    assumed = np.zeros(n, dtype=bool)
    if steps is not None:
        values = np.full(n, check_steps([steps], "steps override")[0])
    elif STEPS_COLUMN in out.columns:
        raw = pd.Series(out[STEPS_COLUMN], dtype=object)
        assumed = pd.isna(raw).to_numpy()
        raw = raw.where(~assumed, DEFAULT_STEPS)  # a row that does not say: 2
        values = check_steps(raw.to_numpy(), where)
    else:
        values = np.full(n, DEFAULT_STEPS)
        assumed[:] = True
    out = out.drop(columns=[STEPS_COLUMN], errors="ignore")
    out = out.assign(**{STEPS_COLUMN: values.astype(np.int64)})
    out.attrs[STEPS_ASSUMED] = tuple(int(i) for i in np.flatnonzero(assumed))
    return out


def _check_row_totals(out: pd.DataFrame, where: str) -> None:
    """Refuse rows whose op times add up to less than 1 us (denormals, or not microseconds)."""
    ops = op_columns(out.columns)
    total = out[ops].to_numpy(dtype=float).sum(axis=1)
    low = total < MIN_ROW_TOTAL_US
    if low.any():
        i = int(low.argmax())
        raise ProfetValueError(
            f"{where}: row {i}'s op times add up to {show_number(total[i])} us; a training "
            f"step's profile holds at least {MIN_ROW_TOTAL_US:g} us (are the times in "
            "microseconds?)"
        )


def parse_profile(
    data: bytes | str, name: str = "profile.json", steps: int | None = None
) -> pd.DataFrame:
    """Parse profile bytes (an upload, pasted text or a file's contents).

    Parameters
    ----------
    data : bytes or str
        The file's contents. Accepted: PROFET JSON (one object op -> microseconds, a list of
        them, or ``{"ops": {...}, "steps": int, "batch_latency_s": float, "batch_size": int,
        "input_size": int, "instance": str}`` with every key but ``ops`` optional);
        TensorBoard's ``tensorflow_stats`` CSV (columns ``Host/device``, ``Type``, ``Total time
        (us)``), grouped by host/device and op type; a CSV or Parquet table with one profile per
        row in ``Host_<Op>``/``Device_<Op>`` columns, optionally with ``batch_latency_s`` (each
        row's anchor latency, seconds) and ``steps``. An empty CSV cell or Parquet null is an
        absent op (0); NaN, inf, booleans and text are refused. A torch.profiler trace (Kineto
        JSON, plain or gzip; :func:`profet_core.inputs._torch_trace.read_trace` says what is
        counted) or a ``key_averages()`` export (:mod:`profet_core.inputs._torch_keyavg`).
    name : str
        File name, used only to tell the format by its suffix and in messages.
    steps : int, optional
        Training steps the profile covers (1..1000), overriding the input's; default: the
        input's ``steps``, else 2 (PROFET's convention).

    Returns
    -------
    pandas.DataFrame
        Shape (n_profiles, n_ops + k): op times in microseconds as given (0 for ops a profile
        lacks), a ``steps`` column (int), and ``batch_latency_s`` (NaN where unknown) when the
        input carried one; JSON's object form may add ``batch_size``, ``input_size``,
        ``instance`` and the torch meta columns; a trace gives one row with the columns of
        :func:`profet_core.inputs._torch_trace.trace_table` and ``attrs["profile_notes"]``.

    Raises
    ------
    ProfetValueError
        Empty or oversized input, an unknown format, malformed JSON, CSV or Parquet; an op name
        that is malformed, longer than 256 characters or one of more than 5,000; a time that is
        not a number, negative, NaN, inf or above 1e12 us; a duplicate key or column; a bad
        ``steps`` or latency; more rows than 200,000. For torch inputs, one line each: a
        CPU-only, forward-only or step-less trace, a truncated file, a gzip file decompressing
        past its bound (see ``read_trace``), a steps override that disagrees with a trace's.
    """
    if not isinstance(name, str):
        raise ProfetValueError(f"profile name must be text (a file name); got {shown(name)}")
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogatepass")
    if not isinstance(data, bytes):
        raise ProfetValueError(
            f"profile data must be bytes or text (a file's contents; read_profile reads a "
            f"path); got {type(data).__name__} {shown(data)}"
        )
    where = f"profile {quote(name)}"
    if len(data) > MAX_PROFILE_BYTES:
        raise ProfetValueError(
            f"{where} is {len(data) / 1e6:.1f} MB; the limit is {MAX_PROFILE_BYTES / 1e6:.0f} MB"
        )
    if not data.strip():
        raise ProfetValueError(f"{where} is empty")
    kind = _sniff(data, name)
    torch = _torch(data, kind, name, where) if kind != "parquet" else None
    if torch is not None:
        return _torch_steps(*torch, steps, where)
    if kind == "json":
        out = from_json(_decode(data, where).lstrip("\ufeff"))
    else:
        raw = (
            from_parquet(data, where)
            if kind == "parquet"
            else from_csv(_decode(data, where), where)
        )
        ops, lat, raw_steps = finish(raw, where)
        out = ops
        if lat is not None:
            out = out.assign(**{LATENCY_COLUMN: lat})
        if raw_steps is not None:
            out = out.assign(**{STEPS_COLUMN: raw_steps})
    _check_row_totals(out, where)
    if LATENCY_COLUMN in out.columns:
        lat = pd.to_numeric(out[LATENCY_COLUMN], errors="coerce").to_numpy(dtype=float)
        out[LATENCY_COLUMN] = check_latency(lat, where)
    return with_steps(out.reset_index(drop=True), steps, where)


def _torch_steps(out: pd.DataFrame, is_trace: bool, steps, where: str) -> pd.DataFrame:
    """A torch table's checks and ``steps``: a trace counts its own steps; an override that
    disagrees is refused (its times are sums over the counted steps)."""
    notes = out.attrs.get(NOTES_ATTR, ())
    if is_trace and steps is not None and steps != out[STEPS_COLUMN].iloc[0]:
        raise ProfetValueError(
            f"{where}: steps {quote(steps)} given, but the trace counts its own steps "
            f"({out[STEPS_COLUMN].iloc[0]}); leave the steps override out for a trace"
        )
    _check_row_totals(out, where)
    if LATENCY_COLUMN in out.columns:
        out[LATENCY_COLUMN] = check_latency(out[LATENCY_COLUMN].to_numpy(dtype=float), where)
    out = with_steps(out.reset_index(drop=True), steps, where)
    out.attrs[NOTES_ATTR] = tuple(notes)
    return out


def read_profile(path: str | Path, steps: int | None = None) -> pd.DataFrame:
    """Read a profile file; see :func:`parse_profile` for the formats, ``steps`` and the result.

    Only a regular file is read, at most :data:`MAX_PROFILE_BYTES`; a folder, FIFO, device,
    symlink loop, empty path, over-long name or unreadable file is refused saying which.
    """
    data = read_bounded(path, MAX_PROFILE_BYTES, "profile file")
    return parse_profile(data, Path(path).name, steps=steps)


def profile_instance(profiles: pd.DataFrame) -> str:
    """The instance a profile file says it was taken on (a PROFET JSON's ``"instance"``).

    Parameters
    ----------
    profiles : pandas.DataFrame
        As returned by :func:`read_profile`.

    Returns
    -------
    str
        The one instance its rows name.

    Raises
    ------
    ProfetValueError
        The rows name no instance, or more than one.
    """
    named = profiles["instance"].dropna().unique() if "instance" in profiles else []
    if len(named) != 1:
        raise ProfetValueError(
            "give --anchor INSTANCE: the profile does not name the one instance it was taken on"
        )
    return str(named[0])


def normalise_steps(profiles: pd.DataFrame) -> pd.DataFrame:
    """Rescale op times to PROFET's 2-step convention and drop the ``steps`` column.

    Parameters
    ----------
    profiles : pandas.DataFrame
        As returned by :func:`parse_profile`: ``Host_*``/``Device_*`` columns (us over
        ``steps`` steps) and optionally ``steps`` (int 1..1000; 2 where absent).

    Returns
    -------
    pandas.DataFrame
        Same rows and columns without ``steps``; each op time multiplied by ``2 / steps``.
        Other columns (``batch_latency_s``: one step's latency) are unchanged.
    """
    if STEPS_COLUMN not in profiles.columns:
        return profiles.copy()
    steps = check_steps(profiles[STEPS_COLUMN].to_numpy(), "profiles")
    out = profiles.drop(columns=[STEPS_COLUMN])
    ops = op_columns(out.columns)
    kinds = dict(zip(out.columns, out.dtypes, strict=True))
    if (steps == DEFAULT_STEPS).all() and all(kinds[c] == np.float64 for c in ops):
        return out  # a factor of 1 on float times: the same numbers, without the copy
    factor = DEFAULT_STEPS / steps.astype(float)
    out[ops] = out[ops].to_numpy(dtype=float) * factor[:, None]
    return out
