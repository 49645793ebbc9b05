"""The Anchor page's offerings section: after Predict the time-cost front over every
offering of the shipped snapshot, equal to the core's answer; filters narrow it; the download
carries every column; prices' source and date are said. (Kept apart from
test_anchor_prediction_page.py, which other changes edit, but it tests the same page.)"""

from __future__ import annotations

import time

import pandas as pd
import pytest

from profet_core import OfferingFilter, predict_offerings
from tests.app._utils import example_profile, no_exception, plotly_spec

ANCHOR = "g3s.xlarge"


@pytest.fixture
def predicted(page):
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(ANCHOR).run()
    t = time.perf_counter()
    at.button(key="predict").click().run(timeout=60)
    at.elapsed = time.perf_counter() - t
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    return at


def _grid(at) -> pd.DataFrame:
    frames = [
        d.value for d in at.dataframe if {"cloud", "batch_latency_ms"} <= set(d.value.columns)
    ]
    assert len(frames) == 1, "the offerings table is not shown"
    return frames[0].reset_index(drop=True)


def _front(at) -> dict:
    charts = [
        i for i, c in enumerate(at.get("plotly_chart")) if "offerings_front" in str(c.proto.id)
    ]
    assert charts, "the time-cost front is not drawn"
    return plotly_spec(at, charts[0])


def test_front_and_table_equal_the_core_over_the_whole_snapshot(predicted, predictor):
    example = predictor.examples[ANCHOR]
    want = predict_offerings(
        predictor,
        ANCHOR,
        example_profile(predictor, ANCHOR),
        anchor_latency_s=example["batch_latency_s"],
        batch_size=int(example["batch_size"]),
        input_size=int(example["input_size"]),
        filter=OfferingFilter(spot=None),
    ).where(OfferingFilter())  # the page opens on on-demand offerings
    grid = _grid(predicted)
    assert len(grid) == len(want.table)
    assert grid["batch_latency_ms"].notna().sum() >= 20 and grid["cloud"].nunique() >= 4
    assert set(grid.loc[grid["pareto"], "instance"]) == set(
        want.table.loc[want.table["pareto"], "instance"]
    )
    spec = _front(predicted)
    names = {d.get("name") for d in spec["data"]}
    assert {"aws", "gcp", "lambda", "runpod"} <= names and "time-cost front" in names
    points = sum(len(d.get("customdata", [])) for d in spec["data"] if d.get("mode") == "markers")
    assert points == int(
        want.table[["batch_latency_ms", "usd_per_1000_steps"]].notna().all(axis=1).sum()
    )
    picks = " ".join(a["text"] for a in spec["layout"].get("annotations", []))
    assert "fastest" in picks and "cheapest" in picks and "best value" in picks
    captions = " ".join(c.value for c in predicted.caption)
    assert "SkyPilot" in captions and "carry no date" in captions
    print(f"Predict with the full snapshot answered in {predicted.elapsed:.2f} s (AppTest)")


@pytest.mark.parametrize(
    ("widget", "value", "check"),
    [
        ("off_clouds", ["gcp"], lambda g: set(g["cloud"]) == {"gcp"}),
        ("off_market", "Spot", lambda g: set(g["market"]) == {"spot"}),
        ("off_gpus", ["H100"], lambda g: g["gpu"].str.contains("H100").all()),
    ],
    ids=["cloud", "spot", "gpu"],
)
def test_filters_narrow_the_offerings(predicted, widget, value, check):
    kinds = {"off_clouds": "multiselect", "off_market": "radio", "off_gpus": "multiselect"}
    getattr(predicted, kinds[widget])(key=widget).set_value(value).run(timeout=60)
    no_exception(predicted)
    grid = _grid(predicted)
    assert len(grid) and check(grid)


def test_the_price_cap_keeps_cheaper_offerings(predicted):
    predicted.number_input(key="off_max").set_value(1.0).run(timeout=60)
    grid = _grid(predicted)
    assert len(grid) and (grid["usd_per_hour"] <= 1.0).all()


def test_a_many_row_profile_is_priced_for_its_first_row_only(predictor):
    """A 43 MB upload holds ~95,000 profile rows: priced on every offering that took tens of GB
    per session and the server was killed. The first row is priced, and said so."""
    from profet_core import answer

    one = example_profile(predictor, ANCHOR)
    many = pd.concat([one] * 3, ignore_index=True)
    got = answer(predictor, ANCHOR, many, filter=OfferingFilter(spot=None)).offerings
    want = answer(predictor, ANCHOR, one, filter=OfferingFilter(spot=None)).offerings
    assert set(got.table["row"]) == {0}
    pd.testing.assert_frame_equal(got.table, want.table)
    assert got.notes[-1] == "Offerings are priced for profile row 0 only (the file holds 3 rows)."
    assert got.notes[:-1] == want.notes
