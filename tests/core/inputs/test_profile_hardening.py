"""Regression tests for the profile readers' hostile-input classes: each input is refused by one clear message."""

import errno
import io
import json
import os
import socket

import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetError, ProfetFileNotFoundError, ProfetValueError, parse_profile
from profet_core._schema import MAX_OP_NAME_CHARS, MAX_OPS, MAX_ROWS
from profet_core.inputs import _safe_read
from profet_core.inputs._profile import normalise_steps, read_profile


def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf)
    return buf.getvalue()


BAD = [
    ("deep-json", b"[" * 100_000 + b"]" * 100_000, "p.json", "nested too deeply"),
    ("int-beyond-float", b'{"Device_A": 1' + b"0" * 400 + b"}", "p.json", "too large"),
    ("int-4301-digits", b'{"Device_A": ' + b"7" * 4301 + b"}", "p.json", "too large"),
    ("float-1e400", b'{"Device_A": 1e400}', "p.json", "too large"),
    ("lone-surrogate", b'{"Device_\\ud800": 1}', "p.json", "lone surrogate"),
    ("dup-json-key", b'{"Device_A": -1, "Device_A": 2}', "p.json", "repeats the key 'Device_A'"),
    ("json-above-1e12", b'{"Device_A": 2e12}', "p.json", "Device_A.*<= 1e\\+12 us"),
    ("json-null", b'{"Device_A": null}', "p.json", "must be numbers"),
    ("csv-nan", b"Device_A,Device_B\n1,2\n3,NaN\n", "p.csv", "'Device_B' holds 'NaN' at row 1"),
    ("csv-nan-lower", b"Device_A\nnan\n", "p.csv", "'Device_A' holds 'nan' at row 0"),
    ("csv-null", b"Device_A\n1\nnull\n", "p.csv", "'Device_A' holds 'null' at row 1"),
    ("csv-inf", b"Device_A\ninf\n", "p.csv", "too large"),
    ("csv-true", b"Device_A\nTrue\nFalse\n", "p.csv", "'Device_A' holds True/False"),
    ("csv-true-mixed", b"Device_A\n1\nTrue\n", "p.csv", "'Device_A' holds 'True' at row 1"),
    ("csv-400-digits", b"Device_A\n1" + b"0" * 400 + b"\n", "p.csv", "too large"),
    ("csv-400-digits-mixed", b"Device_A\n1\n9" + b"9" * 400 + b"\n", "p.csv", "too large"),
    ("csv-underscore", b"Device_A\n1_000\n", "p.csv", "'1_000' at row 0"),
    ("csv-dup-column", b"Device_A,Device_A\n1,2\n", "p.csv", "repeats the column.*'Device_A'"),
    ("csv-1e308", b"Device_A,Device_B\n1e308,1e308\n", "p.csv", "<= 1e\\+12 us"),
    ("csv-latency-nan", b"Device_A,batch_latency_s\n1,nan\n", "p.csv", "batch_latency_s"),
    ("csv-steps-0", b"Device_A,steps\n1,0\n", "p.csv", "steps 0 at row 0"),
    ("csv-steps-frac", b"Device_A,steps\n1,2.5\n", "p.csv", "steps 2.5"),
    ("csv-long-name", b"Device_" + b"x" * 300 + b"\n1\n", "p.csv", "longer than 256"),
    (
        "tfstats-empty-type",
        b"Host/device,Type,Total time (us)\nDevice,Conv2D,3\nDevice,,4\n",
        "tensorflow_stats.csv",
        "row 1 has an empty op Type",
    ),
    (
        "tfstats-nan",
        b"Host/device,Type,Total time (us)\nDevice,Conv2D,nan\n",
        "tensorflow_stats.csv",
        "holds 'nan' at row 0",
    ),
    (
        "tfstats-bad-side",
        b"Host/device,Type,Total time (us)\nGPU,Conv2D,1\n",
        "tensorflow_stats.csv",
        "row 0.*'GPU'; allowed: Host, Device",
    ),
    (
        "tfstats-sum-1e12",
        b"Host/device,Type,Total time (us)\nDevice,A,9e11\nDevice,A,9e11\n",
        "tensorflow_stats.csv",
        "'Device_A' at row 0 is 1.8e\\+12 us",
    ),
]


@pytest.mark.parametrize(("data", "name", "match"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_is_refused_by_name(data, name, match):
    with pytest.raises(ProfetValueError, match=match) as info:
        parse_profile(data, name)
    assert len(str(info.value)) < 400


PARQUET_BAD = [
    ("datetime", pd.DataFrame({"Device_A": pd.to_datetime(["2024-01-01"])}), "timestamp"),
    ("timedelta", pd.DataFrame({"Device_A": pd.to_timedelta([5], unit="s")}), "duration"),
    ("bool", pd.DataFrame({"Device_A": [True, False]}), "type 'bool'"),
    ("object", pd.DataFrame({"Device_A": ["12", "x"]}), "type '(large_)?string'"),
    ("nan", pd.DataFrame({"Device_A": [1.0, 2.0]}), "NaN at row 1"),
    ("steps-str", pd.DataFrame({"Device_A": [1.0], "steps": ["2"]}), "'steps' has type"),
]


@pytest.mark.parametrize(
    ("frame", "match"), [p[1:] for p in PARQUET_BAD], ids=[p[0] for p in PARQUET_BAD]
)
def test_parquet_column_types_are_checked(frame, match):
    if match.startswith("NaN"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        buf = io.BytesIO()  # pandas would write NaN as null; keep a real NaN
        pq.write_table(pa.table({"Device_A": pa.array([1.0, np.nan], from_pandas=False)}), buf)
        data = buf.getvalue()
    else:
        data = _parquet(frame)
    with pytest.raises(ProfetValueError, match=match):
        parse_profile(data, "p.parquet")


def test_parquet_null_is_an_absent_op():
    frame = pd.DataFrame({"Device_A": [1.0, None], "Device_B": [2.0, 3.0]})
    df = parse_profile(_parquet(frame), "p.parquet")
    assert df["Device_A"].tolist() == [1.0, 0.0]


def test_parquet_duplicate_columns_are_refused():
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table([pa.array([1.0]), pa.array([2.0])], names=["Device_A"] * 2), buf)
    with pytest.raises(ProfetValueError, match="repeats the column"):
        parse_profile(buf.getvalue(), "p.parquet")


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"Device_A,Device_B\n1,2\n,\n", "p.csv"),
        (_parquet(pd.DataFrame({"Device_A": [1.0, None]})), "p.parquet"),
    ],
    ids=["csv", "parquet"],
)
def test_row_without_any_op_time_is_refused(data, name):
    with pytest.raises(ProfetValueError, match="row 1 has no op time"):
        parse_profile(data, name)


def test_csv_empty_cell_is_an_absent_op():
    df = parse_profile(b"Device_A,Device_B\n1,\n,2\n", "p.csv")
    assert df[["Device_A", "Device_B"]].to_numpy().tolist() == [[1.0, 0.0], [0.0, 2.0]]


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (json.dumps({f"Device_{i}": 1 for i in range(MAX_OPS + 10)}), "keys; the limit"),
        (json.dumps([{f"Device_{i}": 1} for i in range(MAX_OPS + 1)]), "op names; the limit"),
        (json.dumps([{"Device_A": 1}] * (MAX_ROWS + 1)), "profiles; the limit"),
        (json.dumps({"Device_" + "x" * 10_000_000: 1}), "longer than 256"),
        ("Device_A\n" + "1\n" * (MAX_ROWS + 1), "more than 200,000 rows"),
    ],
    ids=["json-many-keys", "json-many-ops", "json-many-rows", "json-10M-name", "csv-many-rows"],
)
def test_resource_bounds(data, match):
    with pytest.raises(ProfetValueError, match=match) as info:
        parse_profile(data, "p.json" if data[0] in "[{" else "p.csv")
    assert len(str(info.value)) < 300  # a 10 M-character name is quoted cut to ~80


def test_longest_allowed_name_is_accepted():
    name = "Device_" + "x" * (MAX_OP_NAME_CHARS - 7)
    assert name in parse_profile(json.dumps({name: 1}), "p.json").columns


# -- files ------------------------------------------------------------------------------------


def _fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


def _loop(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    return str(tmp_path / "a")


def _dangling(tmp_path):
    (tmp_path / "d").symlink_to(tmp_path / "gone.json")
    return str(tmp_path / "d")


def _socket(tmp_path):
    path = tmp_path / "s"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    return str(path)


FILES = [
    ("folder", lambda t: str(t), ProfetValueError, "is a folder"),
    ("fifo", _fifo, ProfetValueError, "named pipe"),
    ("dev-zero", lambda t: "/dev/zero", ProfetValueError, "character device"),
    ("dev-null", lambda t: "/dev/null", ProfetValueError, "character device"),
    ("loop", _loop, ProfetValueError, "symlink loop"),
    ("dangling", _dangling, ProfetFileNotFoundError, "symlink to a file that does not exist"),
    ("socket", _socket, ProfetValueError, "a socket"),
    ("empty-path", lambda t: "", ProfetValueError, "path is empty"),
    ("long-name", lambda t: str(t / ("x" * 300 + ".json")), ProfetValueError, "255 bytes"),
    ("missing", lambda t: str(t / "none.json"), ProfetFileNotFoundError, "does not exist"),
    ("not-dir", lambda t: "/dev/null/p.json", ProfetFileNotFoundError, "not a folder"),
]


@pytest.mark.parametrize(
    ("make", "exc", "match"), [f[1:] for f in FILES], ids=[f[0] for f in FILES]
)
def test_files_are_named_for_what_they_are(tmp_path, make, exc, match):
    with pytest.raises(exc, match=match):
        read_profile(make(tmp_path))


def test_dev_stdin_is_not_read_unless_a_regular_file():
    import stat

    if stat.S_ISREG(os.stat("/dev/stdin").st_mode):
        pytest.skip("stdin is a regular file here")
    with pytest.raises(ProfetValueError, match="not a regular file"):
        read_profile("/dev/stdin")


def test_unreadable_file(tmp_path, monkeypatch):
    # root reads any file whatever its mode, so the refusal of open() is simulated
    path = tmp_path / "p.json"
    path.write_text('{"Device_A": 1}')

    def deny(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(_safe_read.os, "open", deny)
    with pytest.raises(ProfetValueError, match="permission denied"):
        read_profile(path)


def test_file_size_is_bounded(tmp_path):
    from profet_core._schema import MAX_PROFILE_BYTES

    path = tmp_path / "p.json"
    with path.open("wb") as f:  # sparse: one byte over the bound, none of it written
        f.truncate(MAX_PROFILE_BYTES + 1)
    with pytest.raises(ProfetValueError, match="the limit is 52 MB"):
        read_profile(path)
    with pytest.raises(ProfetValueError, match="the limit is 52 MB"):
        parse_profile(b" " * (MAX_PROFILE_BYTES + 1), "p.json")


# -- steps ------------------------------------------------------------------------------------

OPS = {"Device_A": 10.0, "Host_B": 4.0}


@pytest.mark.parametrize(
    ("data", "name", "override", "steps", "a"),
    [
        (json.dumps(OPS), "p.json", None, 2, 10.0),
        (json.dumps({"ops": OPS, "steps": 10}), "p.json", None, 10, 10.0),
        (json.dumps({"ops": OPS, "steps": 10}), "p.json", 4, 4, 10.0),
        (json.dumps([{"ops": OPS, "steps": 10}, OPS]), "p.json", None, [10, 2], 10.0),
        ("Device_A,Host_B,steps\n10,4,5\n", "p.csv", None, 5, 10.0),
        ("Device_A,Host_B,steps\n10,4,\n", "p.csv", None, 2, 10.0),
    ],
    ids=["plain-2", "object-10", "override", "mixed-list", "csv-column", "csv-empty-steps"],
)
def test_steps_column(data, name, override, steps, a):
    df = parse_profile(data, name, steps=override)
    assert df["steps"].dtype == np.int64
    assert df["steps"].tolist() == (steps if isinstance(steps, list) else [steps])
    assert df.loc[0, "Device_A"] == a  # kept as given


def test_object_form_metadata_columns():
    obj = {
        "ops": OPS,
        "batch_latency_s": 0.05,
        "batch_size": 32,
        "input_size": 128,
        "instance": "g4dn.xlarge",
    }
    row = parse_profile(json.dumps(obj), "p.json").iloc[0]
    assert row["batch_latency_s"] == 0.05 and row["batch_size"] == 32
    assert row["instance"] == "g4dn.xlarge" and row["steps"] == 2


@pytest.mark.parametrize(
    ("obj", "override", "match"),
    [
        ({"ops": OPS, "stepz": 2}, None, "unknown key.*'stepz'"),
        ({"ops": OPS, "Device_C": 2}, None, "unknown key.*'Device_C'"),
        ({"ops": OPS, "steps": 0}, None, "steps 0"),
        ({"ops": OPS, "steps": 1001}, None, "steps 1001"),
        ({"ops": OPS, "steps": True}, None, "steps True"),
        ({"ops": OPS, "steps": "2"}, None, "steps '2'"),
        ({"ops": OPS, "batch_latency_s": -1}, None, "batch_latency_s"),
        ({"ops": OPS, "batch_size": 0}, None, "batch_size"),
        ({"ops": [1]}, None, "'ops' must be an object"),
        (OPS, 0, "steps 0"),
        (OPS, 2.5, "steps 2.5"),
    ],
    ids=[
        "unknown-key",
        "op-beside-ops",
        "steps-0",
        "steps-1001",
        "steps-bool",
        "steps-text",
        "latency",
        "batch",
        "ops-list",
        "override-0",
        "override-frac",
    ],
)
def test_object_form_is_checked(obj, override, match):
    with pytest.raises(ProfetValueError, match=match):
        parse_profile(json.dumps(obj), "p.json", steps=override)


def test_normalise_steps_rescales_to_two_steps():
    df = parse_profile(json.dumps([{"ops": OPS, "steps": 10}, OPS, {"ops": OPS, "steps": 1}]))
    df["batch_latency_s"] = 0.1
    out = normalise_steps(df)
    assert "steps" not in out.columns
    assert out["Device_A"].tolist() == pytest.approx([2.0, 10.0, 20.0])
    assert out["Host_B"].tolist() == pytest.approx([0.8, 4.0, 8.0])
    assert out["batch_latency_s"].tolist() == [0.1] * 3  # one step's latency: unchanged


def test_every_error_is_a_profet_error():
    assert issubclass(ProfetValueError, ProfetError)
