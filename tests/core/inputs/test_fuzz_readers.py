"""Property suite over every reader: a finite, non-negative op table or a ProfetError, nothing else.

Each strategy aims at one format (raw bytes, JSON-ish values, CSV-ish text, Parquet from
fuzzed frames); every example must finish within a deadline, and the suite in ~30 s.
"""

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profet_core import ProfetError, parse_profile
from profet_core._schema import MAX_OP_TIME_US, MAX_STEPS
from profet_core.inputs._profile import normalise_steps
from tests.core.inputs._traces import Builder, dump, training_step

FUZZ = settings(
    max_examples=300,
    deadline=2000,  # ms per example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NAMES = st.one_of(
    st.sampled_from(["Device_Conv2D", "Device_Relu", "Host_IDLE", "Device_IDLE", "steps"]),
    st.sampled_from(["batch_latency_s", "Host/device", "Type", "Total time (us)", "ops"]),
    st.text(min_size=0, max_size=12).map(lambda s: "Device_" + s),
    st.text(min_size=0, max_size=12),
)
NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1e308, 1e12, 1e13, -0.0, 2**63, 10**400]),
)
SCALARS = st.one_of(NUMBERS, st.booleans(), st.none(), st.text(max_size=8))
JSONISH = st.recursive(
    st.one_of(SCALARS, st.dictionaries(NAMES, NUMBERS, max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(NAMES, inner, max_size=5)),
    max_leaves=20,
)
CELLS = st.one_of(
    st.sampled_from(["", "nan", "NaN", "null", "inf", "-1", "True", "1e400", "1_0", " 3 "]),
    NUMBERS.map(str),
    st.text(alphabet=",\"'\n\r 0123456789.eE+-abc\x00", max_size=8),
)


def _check(data, name, steps=None) -> None:
    """The property: a finite, non-negative table with a valid steps column, or a ProfetError."""
    try:
        df = parse_profile(data, name, steps=steps)
    except ProfetError:
        return
    ops = [c for c in df.columns if c.startswith(("Host_", "Device_"))]
    assert ops and len(df) >= 1
    times = df[ops].to_numpy(dtype=float)
    assert np.isfinite(times).all() and (times >= 0).all() and (times <= MAX_OP_TIME_US).all()
    assert df["steps"].dtype == np.int64 and df["steps"].between(1, MAX_STEPS).all()
    if "batch_latency_s" in df.columns:
        lat = df["batch_latency_s"].to_numpy(dtype=float)
        assert ((lat > 0) & np.isfinite(lat) | np.isnan(lat)).all()
    norm = normalise_steps(df)[ops].to_numpy(dtype=float)
    assert np.isfinite(norm).all() and (norm >= 0).all()


@FUZZ
@given(data=st.binary(max_size=300), name=st.sampled_from(["p.json", "p.csv", "p.parquet", "p"]))
def test_any_bytes(data, name):
    _check(data, name)


def _dumps(value) -> str:
    # json.dumps writes NaN/Infinity and lone surrogates escaped: both must be handled
    return json.dumps(value, allow_nan=True)


@FUZZ
@given(value=JSONISH, steps=st.one_of(st.none(), st.integers(-2, 1002)))
def test_any_json_value(value, steps):
    try:
        _check(_dumps(value), "p.json", steps)
    except ValueError as exc:  # steps override outside 1..1000 must be a ProfetError too
        raise AssertionError(f"not a ProfetError: {exc!r}") from exc


@FUZZ
@given(
    ops=st.dictionaries(
        st.text(max_size=10).map(lambda s: "Device_" + s), NUMBERS, min_size=1, max_size=5
    ),
    meta=st.dictionaries(
        st.sampled_from(
            ["steps", "batch_latency_s", "batch_size", "input_size", "instance", "extra"]
        ),
        SCALARS,
        max_size=3,
    ),
)
def test_json_object_form(ops, meta):
    _check(_dumps({"ops": ops, **meta}), "p.json")


@FUZZ
@given(
    header=st.lists(NAMES, min_size=1, max_size=5),
    rows=st.lists(st.lists(CELLS, min_size=0, max_size=6), max_size=5),
)
def test_any_csv(header, rows):
    text = "\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n"
    _check(text, "p.csv")


COLUMN_VALUES = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=3),
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=3, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.lists(st.one_of(st.none(), st.floats(0, 1e6)), min_size=3, max_size=3),
    st.lists(st.text(max_size=4), min_size=3, max_size=3),
    st.just(list(pd.to_datetime(["2024-01-01"] * 3))),
    st.just(list(pd.to_timedelta([1, 2, 3], unit="s"))),
)


@FUZZ
@given(columns=st.dictionaries(NAMES, COLUMN_VALUES, min_size=1, max_size=4))
def test_any_parquet(columns):
    buf = io.BytesIO()
    try:
        pd.DataFrame(columns).to_parquet(buf)
    except Exception:  # a frame pyarrow cannot write is no input for the reader
        return
    _check(buf.getvalue(), "p.parquet")


@FUZZ
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["Device", "Host", "device", "GPU", "", "nan"]),
            st.one_of(st.sampled_from(["Conv2D", "", " ", "IDLE"]), st.text(max_size=6)),
            CELLS,
        ),
        max_size=6,
    )
)
def test_any_tensorflow_stats(rows):
    df = pd.DataFrame(rows, columns=["Host/device", "Type", "Total time (us)"])
    _check(df.to_csv(index=False), "tensorflow_stats.csv")


def _base_trace() -> dict:
    b = Builder(world=2)
    for i in range(3):
        training_step(b, i + 1, i * 1000.0)
    return b.trace()


#: A trace example builds and reads ~60 events (~20 ms): fewer examples keep the suite's time.
FUZZ_TRACE = settings(FUZZ, max_examples=100)
TRACE_FIELDS = st.sampled_from(["ts", "dur", "name", "cat", "ph", "pid", "tid", "args"])
TRACE_ARGS = st.sampled_from(["correlation", "device", "Sequence number", "Input Dims"])


@FUZZ_TRACE
@given(
    edits=st.lists(st.tuples(st.integers(0, 200), TRACE_FIELDS, TRACE_ARGS, JSONISH), max_size=6),
    meta=st.dictionaries(
        st.sampled_from(["deviceProperties", "distributedInfo", "traceEvents"]), JSONISH, max_size=2
    ),
    gz=st.booleans(),
)
def test_any_torch_trace(edits, meta, gz):
    """A real-shaped trace with fields replaced by any JSON value: a table or a ProfetError."""
    trace = _base_trace()
    events = trace["traceEvents"]
    for i, field, arg, value in edits:
        event = events[i % len(events)]
        if field == "args" and isinstance(event.get("args"), dict):
            event["args"][arg] = value
        else:
            event[field] = value
    trace.update(meta)
    _check(dump(trace, gz=gz), "t.pt.trace.json.gz" if gz else "t.json")


KEYAVG_KEYS = st.sampled_from(
    ["name", "device_type", "count", "self_device_time_total", "self_cuda_time_total", "steps"]
)


@FUZZ
@given(
    rows=st.lists(st.dictionaries(KEYAVG_KEYS, SCALARS, max_size=6), max_size=4),
    meta=st.dictionaries(st.sampled_from(["steps", "batch_latency_s", "x"]), SCALARS, max_size=2),
)
def test_any_key_averages_export(rows, meta):
    doc = {"key_averages": rows, **meta}
    _check(_dumps(doc), "ka.json")
    header = ["name", "device_type", "count", "self_device_time_total"]
    lines = [",".join(header)] + [",".join(str(r.get(h, "")) for h in header) for r in rows]
    _check("\n".join(lines) + "\n", "ka.csv")


@pytest.mark.parametrize(
    "value", [1e308, 10**400, math.nan, -1.0, True], ids=["1e308", "big-int", "nan", "neg", "bool"]
)
def test_every_op_at_an_extreme_is_refused_in_every_format(value):
    # (NaN in a pandas frame is written to Parquet as null, an absent op: all absent is refused)
    ops = {"Device_A": value, "Device_B": value}
    inputs = [(_dumps(ops), "p.json"), (",".join(ops) + "\n" + f"{value},{value}\n", "p.csv")]
    if value != 10**400:  # Parquet holds no integer that large
        buf = io.BytesIO()
        pd.DataFrame([ops]).to_parquet(buf)
        inputs.append((buf.getvalue(), "p.parquet"))
    for data, name in inputs:
        with pytest.raises(ProfetError):
            parse_profile(data, name)
