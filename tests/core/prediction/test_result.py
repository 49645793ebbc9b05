"""The CSV document of a prediction: one format for ``profet predict --format csv``
and the app's download."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from profet_core import load_artifacts, parse_profile
from profet_core.prediction._result import CSV_FIRST


@pytest.fixture(scope="module")
def prediction():
    predictor = load_artifacts()
    anchor = predictor.instances[0]
    example = predictor.examples[anchor]
    profile = parse_profile(json.dumps(example["profile"]), "example.json", steps=2)
    return predictor.predict(anchor, profile, anchor_latency_s=example["batch_latency_s"])


def test_to_csv_is_write_csv_in_bytes(prediction):
    text = io.StringIO()
    prediction.write_csv(text)
    assert prediction.to_csv() == text.getvalue().encode("utf-8")


def test_columns_start_with_the_key_ones_and_leave_the_anchor_out(prediction):
    table = pd.read_csv(io.BytesIO(prediction.to_csv()))
    assert list(table.columns[: len(CSV_FIRST)]) == list(CSV_FIRST)
    assert "anchor" not in table.columns
    assert set(table.columns) == set(prediction.table.columns) - {"anchor"}
    shown = table["batch_latency_ms"].to_numpy()
    assert (shown == prediction.table["batch_latency_ms"].round(4).to_numpy()).all()
