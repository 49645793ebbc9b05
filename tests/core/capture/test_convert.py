"""Trace -> tensorflow_stats -> profile, on fixtures made by fixtures/make_fixtures.py."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from profet_core.capture._convert import find_xplanes, stats_from_tool_json, trace_to_profile
from profet_core.errors import ProfetFileNotFoundError, ProfetValueError
from profet_core.inputs._tfstats import group_tf_stats
from tests.core.capture._utils import FIXTURES, requires_xprof

LAYOUTS = ["tf_stats_operation_type.csv", "tf_stats_type.csv"]


@pytest.mark.parametrize("name", LAYOUTS, ids=["operation-type", "type"])
def test_both_column_layouts_group_to_the_same_profile(name):
    table = pd.read_csv(FIXTURES / name)
    profile = group_tf_stats(table)
    reference = group_tf_stats(pd.read_csv(FIXTURES / LAYOUTS[0]))
    pd.testing.assert_frame_equal(profile, reference)
    assert all(k.startswith(("Host_", "Device_")) for k in profile.columns)
    assert "Host_IDLE" in profile.columns  # IDLE rows are kept, as in the training data
    # Total time, not self-time: Dataset rows nest, so their totals exceed their self-times.
    dataset = table[table.iloc[:, 1] == "Dataset"]
    assert profile["Host_Dataset"].iloc[0] == pytest.approx(dataset["Total time (us)"].sum())


@requires_xprof
def test_trace_converts_to_the_stored_table(tmp_path):
    # A copy: the converter caches its result next to the trace.
    trace = shutil.copy(FIXTURES / "tiny.xplane.pb", tmp_path / "run.xplane.pb")
    profile = trace_to_profile([trace])
    stored = group_tf_stats(pd.read_csv(FIXTURES / LAYOUTS[0]))
    pd.testing.assert_frame_equal(profile, stored, rtol=1e-6)


def test_unknown_layout_is_refused():
    table = pd.read_csv(FIXTURES / LAYOUTS[0]).rename(columns={"Operation Type": "Kind"})
    with pytest.raises(ProfetValueError, match="not a tensorflow_stats table"):
        group_tf_stats(table)


@pytest.mark.parametrize(
    "data, match",
    [(b"not json", "not JSON"), (b'{"rows": []}', "no data table")],
    ids=["garbage", "no-table"],
)
def test_bad_tool_output(data, match):
    with pytest.raises(ProfetValueError, match=match):
        stats_from_tool_json(data)


def test_gviz_table_first_is_taken():
    tables = [
        {"cols": [{"label": "A"}], "rows": [{"c": [{"v": 1}]}]},
        {"cols": [{"label": "A"}], "rows": []},
    ]
    import json

    assert stats_from_tool_json(json.dumps(tables))["A"].tolist() == [1]


def test_no_trace_is_a_clear_error(tmp_path):
    with pytest.raises(ProfetFileNotFoundError, match="no profiler trace"):
        find_xplanes(tmp_path)
