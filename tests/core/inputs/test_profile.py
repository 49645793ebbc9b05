import json

import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetFileNotFoundError, ProfetValueError, parse_profile, read_profile
from profet_core.inputs._profile import MAX_PROFILE_BYTES

PROFILE = {"Device_Conv2D": 100.5, "Device_Relu": 20.0, "Host_IDLE": 5.0}


@pytest.mark.parametrize("payload", [[PROFILE], PROFILE], ids=["list-of-one", "plain-object"])
def test_profet_json(payload):
    df = parse_profile(json.dumps(payload), "p.json")
    assert df.shape == (1, 4)
    assert df.loc[0, "Device_Conv2D"] == 100.5
    assert df.loc[0, "steps"] == 2


def test_json_list_of_many_fills_missing_with_zero():
    df = parse_profile(json.dumps([PROFILE, {"Device_MatMul": 3}]), "p.json")
    assert df.shape == (2, 5)
    assert df.loc[1, "Device_Conv2D"] == 0.0 and df.loc[1, "Device_MatMul"] == 3.0


def test_tensorboard_csv_is_grouped_by_side_and_type():
    tb = pd.DataFrame(
        {
            "Rank": [1, 2, 3, 4],
            "Host/device": ["Device", "Device", "Host", "Device"],
            "Type": ["Conv2D", "Conv2D", "IDLE", "Relu"],
            "Operation": ["conv1", "conv2", "IDLE", "relu"],
            "Total time (us)": [10.0, 15.0, 7.0, 3.0],
        }
    )
    df = parse_profile(tb.to_csv(index=False), "tensorflow_stats.csv")
    assert df.to_dict("records") == [
        {"Device_Conv2D": 25.0, "Device_Relu": 3.0, "Host_IDLE": 7.0, "steps": 2}
    ]


def test_table_with_latency_column(tmp_path):
    table = pd.DataFrame(
        {
            "Device_Conv2D": [1.0, 2.0],
            "Host_IDLE": [3.0, np.nan],
            "batch_latency_s": [0.1, np.nan],
            "note": ["a", "b"],
        }
    )
    table.to_parquet(tmp_path / "many.parquet")
    df = read_profile(tmp_path / "many.parquet")
    assert list(df.columns) == ["Device_Conv2D", "Host_IDLE", "batch_latency_s", "steps"]
    assert df.loc[1, "Host_IDLE"] == 0.0
    assert np.isnan(df.loc[1, "batch_latency_s"])


@pytest.mark.parametrize(
    ("data", "name", "match"),
    [
        (b"", "p.json", "is empty"),
        (b"  \n", "p.json", "is empty"),
        (b'[{"Device_Conv2D": 1,}]', "p.json", "not valid JSON"),
        (b"[1, 2]", "p.json", "must be an object"),
        (b"[]", "p.json", "must be an object"),
        (b"[{}]", "p.json", "empty object"),
        (b'{"Device_Conv2D": -3}', "p.json", "Device_Conv2D.*>= 0"),
        (b'{"Device_Conv2D": "12"}', "p.json", "must be numbers"),
        (b'{"Device_Conv2D": NaN}', "p.json", "finite"),
        (b'{"Device_Conv2D": true}', "p.json", "must be numbers"),
        (b'{"Conv2D": 3}', "p.json", "not of the form Host_<Op>"),
        (b"a,b\n1,2\n", "p.csv", "no Host_<Op>/Device_<Op> columns"),
        (b"Device_Relu\n-1\n", "p.csv", "negative"),
        (b"Device_Relu,batch_latency_s\n1,-0.5\n", "p.csv", "batch_latency_s"),
        (b"\x89PNG\r\n", "p.png", "allowed: .json, .csv, .parquet"),
        (b"PAR1garbage", "p.parquet", "cannot read"),
    ],
    ids=[
        "empty",
        "blank",
        "bad-json",
        "list-of-numbers",
        "empty-list",
        "empty-object",
        "negative",
        "string-time",
        "nan",
        "bool",
        "bad-op-name",
        "csv-no-ops",
        "csv-negative",
        "csv-bad-latency",
        "png",
        "broken-parquet",
    ],
)
def test_bad_input_is_one_clear_error(data, name, match):
    with pytest.raises(ProfetValueError, match=match):
        parse_profile(data, name)


def test_oversized_input_is_refused():
    with pytest.raises(ProfetValueError, match="the limit is"):
        parse_profile(b" " + b"0" * (MAX_PROFILE_BYTES + 1), "big.csv")


def test_missing_file(tmp_path):
    with pytest.raises(ProfetFileNotFoundError, match="does not exist"):
        read_profile(tmp_path / "none.json")
