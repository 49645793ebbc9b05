"""One name per quantity: the tables `profet` prints for people head their columns with the CSV's
and JSON's names (predict's table said latency_ms for batch_latency_ms)."""

from __future__ import annotations

import io
import json

import pandas as pd

from tests._utils import ROOT, run

PROFILE = str(ROOT / "examples" / "profile_g3s.json")


def test_the_predict_table_heads_its_columns_as_the_csv_and_json_do():
    code, table, err = run("predict", "--profile", PROFILE)
    assert code == 0, err
    head = next(x for x in table.splitlines() if x.split()[:2] == ["row", "configuration"])
    code, csv, _ = run("predict", "--profile", PROFILE, "--format", "csv")
    code, doc, _ = run("predict", "--profile", PROFILE, "--format", "json")
    csv_cols = set(pd.read_csv(io.StringIO(csv)).columns)
    json_cols = set(json.loads(doc)["predictions"][0])
    for name in head.split():
        assert name in csv_cols and name in json_cols, name
    assert "batch_latency_ms" in head.split() and "latency_ms" not in head.split()
    assert {"price_check", "regions_at_price"} <= set(head.split())
