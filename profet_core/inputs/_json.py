"""PROFET JSON profiles: op -> us objects, lists of them, and the object form with metadata.

Accepted shapes::

    {"Device_Conv2D": 120.5, "Host_IDLE": 9.0}                       # one profile
    [{...}, {...}]                                                    # several
    {"ops": {"Device_Conv2D": 120.5}, "steps": 2, "batch_latency_s": 0.012,
     "batch_size": 32, "input_size": 128, "instance": "g4dn.xlarge"} # with metadata

``profet profile --torch`` adds :data:`TORCH_META` keys (``framework``, ``gpu_name``...).

A list may mix plain and object-form items. Python's ``json`` is hooked so that nothing it
can raise besides a clean refusal escapes: duplicate keys (which would hide a value), integers
of thousands of digits (``ValueError`` on conversion), integers beyond float range
(``OverflowError``) and nesting deep enough for ``RecursionError``.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd

from .._messages import quote, quote_list
from .._schema import (
    LATENCY_COLUMN,
    MAX_BATCH_SIZE,
    MAX_CELLS,
    MAX_INPUT_SIZE,
    MAX_LATENCY_S,
    MAX_OPS,
    MAX_ROWS,
    MIN_LATENCY_S,
    STEPS_COLUMN,
)
from ..errors import ProfetValueError
from ._rules import check_instance_names, check_op_names, check_steps, check_times

#: Metadata keys of the object form, with their check (value -> ok) and what is allowed.
META = {
    STEPS_COLUMN: "an integer 1..1000",
    LATENCY_COLUMN: f"seconds {MIN_LATENCY_S:g}..{MAX_LATENCY_S:g}",
    "batch_size": f"an integer 1..{MAX_BATCH_SIZE:,}",
    "input_size": f"an integer 1..{MAX_INPUT_SIZE:,} (pixels)",
    "instance": "text (the anchor instance's name)",
    "convention_differs": "text (what differs from PROFET's capture convention)",
}
#: What ``profet profile --torch`` adds (the meta columns of a torch.profiler trace's table,
#: :func:`._torch_trace.trace_table`): key -> (test, what is allowed).
TORCH_META = {
    "framework": (lambda v: v in ("pytorch", "tensorflow"), "'pytorch' or 'tensorflow'"),
    "gpu_name": (lambda v: isinstance(v, str) and len(v) <= 80, "text of <= 80 characters"),
    "gpu_memory_gib": (lambda v: _real(v) and 0 < v <= 4096, "GiB 0..4096"),
    "gpu_sm_count": (lambda v: _whole(v) and 0 <= v <= 4096, "an integer 0..4096"),
    "gpu_compute_capability": (
        lambda v: isinstance(v, str) and re.fullmatch(r"(?:\d{1,2}\.\d{1,2})?", v) is not None,
        "text such as '8.0' (or empty)",
    ),
    "world_size": (lambda v: _whole(v) and 1 <= v <= 1_000_000, "an integer 1..1,000,000"),
    "kernels": (lambda v: _whole(v) and 0 <= v <= 10**12, "an integer >= 0"),
    "autocast": (lambda v: v in ("", "fp16", "bf16"), "'', 'fp16' or 'bf16'"),
    "channels_last": (lambda v: isinstance(v, bool), "true or false"),
    "host_launch_us": (lambda v: _real(v) and 0 <= v <= 1e12, "microseconds 0..1e12"),
}


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _real(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


_SHAPE = (
    "profile JSON must be an object of op name -> microseconds, an object "
    '{"ops": {...}, "steps": ..., ...}, or a list of such objects'
)


def _pairs(pairs: list) -> dict:
    """``object_pairs_hook``: refuse duplicate keys (the last would silently win)."""
    if len(pairs) > MAX_OPS + len(META) + 1:  # refuse before building a huge dict
        raise ProfetValueError(f"a JSON object has {len(pairs):,} keys; the limit is {MAX_OPS:,}")
    out = dict(pairs)
    if len(out) != len(pairs):
        seen, dup = set(), None
        for k, _ in pairs:
            if k in seen:
                dup = k
                break
            seen.add(k)
        raise ProfetValueError(
            f"profile JSON repeats the key {quote(dup)}; each key may appear once per object"
        )
    return out


def _int(text: str):
    """``parse_int``: huge integers become float (inf beyond range), refused by the bounds."""
    return int(text) if len(text) <= 30 else float(text)


def loads(text: str):
    """``json.loads`` with the hooks above; every failure is a ProfetValueError."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise ProfetValueError(
            f"profile is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise ProfetValueError(
            "profile JSON is nested too deeply; a profile is an object (or list of objects) "
            "of op name -> microseconds"
        ) from None


def _meta_value(key: str, value, i: int):
    if key in TORCH_META:
        test, allowed = TORCH_META[key]
        if not test(value):
            raise ProfetValueError(f"profile {i}: {key} is {quote(value)}; allowed: {allowed}")
        return value
    bad = False
    if key == LATENCY_COLUMN:
        bad = isinstance(value, bool) or not isinstance(value, (int, float))
        bad = bad or not MIN_LATENCY_S <= float(value) <= MAX_LATENCY_S
    elif key in ("batch_size", "input_size"):
        top = MAX_BATCH_SIZE if key == "batch_size" else MAX_INPUT_SIZE
        bad = isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= top
    elif key == "instance":
        bad = not isinstance(value, str) or not 0 < len(value) <= 80
        if not bad:
            check_instance_names([value], f"profile {i}: instance")
    elif key == "convention_differs":
        bad = not isinstance(value, str) or len(value) > 1000
    if bad:
        raise ProfetValueError(f"profile {i}: {key} is {quote(value)}; allowed: {META[key]}")
    return float(value) if key == LATENCY_COLUMN else value


def _split(obj: dict, i: int) -> tuple[dict, dict]:
    """One item -> (ops, metadata)."""
    if "ops" not in obj:
        return obj, {}
    unknown = [k for k in obj if k != "ops" and k not in META and k not in TORCH_META]
    if unknown:
        raise ProfetValueError(
            f"profile {i} has unknown key(s) {quote_list(unknown)}; allowed besides 'ops': "
            f"{', '.join(META)} (and from a torch.profiler capture: {', '.join(TORCH_META)})"
        )
    ops = obj["ops"]
    if not isinstance(ops, dict):
        raise ProfetValueError(f"profile {i}: 'ops' must be an object of op name -> microseconds")
    meta = {k: _meta_value(k, v, i) for k, v in obj.items() if k != "ops"}
    if STEPS_COLUMN in meta:
        meta[STEPS_COLUMN] = int(check_steps([meta[STEPS_COLUMN]], f"profile {i}")[0])
    return ops, meta


def _times(items: list[dict], names: list[str]) -> np.ndarray:
    """Dense (n, n_ops) float matrix; absent ops are 0. Non-numbers are refused."""
    col = {n: j for j, n in enumerate(names)}
    out = np.zeros((len(items), len(names)))
    for i, ops in enumerate(items):
        for k, v in ops.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ProfetValueError(
                    f"profile {i}: op {quote(k)} has time {quote(v)}; op times must be numbers "
                    "of microseconds (not text, booleans, lists or null)"
                )
            # ints here have <= 30 digits (see _int), so float() cannot overflow
            out[i, col[k]] = float(v)
    return out


def from_json(text: str) -> pd.DataFrame:
    """Parse PROFET JSON text into op columns (us), plus ``steps``/metadata columns if given.

    Returns
    -------
    pandas.DataFrame
        Shape (n_profiles, n_ops + k): op columns sorted by first appearance, then metadata
        columns (``steps``, ``batch_latency_s``, ``batch_size``, ``input_size``, ``instance``)
        where any item gave them (NaN/None where another item did not).
    """
    data = loads(text)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data or not all(isinstance(d, dict) for d in data):
        raise ProfetValueError(_SHAPE)
    if len(data) > MAX_ROWS:
        raise ProfetValueError(
            f"profile JSON holds {len(data):,} profiles; the limit is {MAX_ROWS:,}"
        )
    items, metas = zip(*(_split(obj, i) for i, obj in enumerate(data)), strict=True)
    for i, ops in enumerate(items):
        if not ops:
            raise ProfetValueError(f"profile {i} is an empty object; it needs at least one op time")
    names = list(dict.fromkeys(k for ops in items for k in ops))
    check_op_names(names, "profile JSON")
    if len(items) * len(names) > MAX_CELLS:
        raise ProfetValueError(
            f"profile JSON holds {len(items):,} profiles x {len(names):,} ops; the limit is "
            f"{MAX_CELLS:,} values"
        )
    times = _times(list(items), names)
    check_times(times, names, "profile JSON")
    out = pd.DataFrame(times, columns=names)
    for key in (*META, *TORCH_META):
        if any(key in m for m in metas):
            out[key] = [m.get(key) for m in metas]
    return out
