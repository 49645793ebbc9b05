"""Scaler prediction page: the shown value and curve equal ``Predictor.scale``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from app_helpers import example_profile, no_exception, plain, plotly_spec, values

import ui


def _inputs(at, prefix):
    return [w for w in at.number_input if w.label.startswith(prefix)]


def _set_points(at, lat_a, lat_b, size_a=None, size_b=None):
    small, large = _inputs(at, "Batch latency at the") or [None, None]
    sizes = [w for w in at.number_input if w.key.startswith("size_")]
    if size_a is not None:
        sizes[0].set_value(size_a)
    if size_b is not None:
        sizes[1].set_value(size_b)
    small.set_value(lat_a)
    large.set_value(lat_b)


def _predict_slider(at):
    return next(s for s in at.slider if s.key.startswith("predict_"))


@pytest.mark.parametrize("by", ["batch", "input"], ids=["batch", "input"])
def test_prediction_equals_core(page, predictor, anchor, by):
    target = anchor  # every instance is a target too
    lo, hi = predictor.scaler(target, by).size_range_
    at = page("scaler").run()
    at.selectbox(key="target").set_value(target)
    at.radio(key="by").set_value(by).run()
    _set_points(at, 12.5, 180.0)
    size = int(lo + (hi - lo) / 3)
    _predict_slider(at).set_value(size).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    value = float(predictor.scale(target, by, 12.5, 180.0, size))
    assert at.metric[0].value == ui.fmt_ms(value)
    spec = plotly_spec(at)
    curve = spec["data"][0]
    grid = values(curve["x"])
    assert grid[0] == lo and grid[-1] == hi
    np.testing.assert_allclose(
        values(curve["y"]), predictor.scale(target, by, 12.5, 180.0, grid), rtol=1e-9
    )
    assert spec["data"][1]["y"] == [12.5, 180.0]  # the given points are marked
    np.testing.assert_allclose(spec["data"][2]["y"], [value], rtol=1e-9)


def _sizes(predictor, target, by="batch"):
    lo, hi = (int(v) for v in predictor.scaler(target, by).size_range_)
    return lo, lo + (hi - lo) // 4, (lo + hi) // 2, hi - (hi - lo) // 8, hi


def test_inner_sizes_are_passed_to_the_core(page, predictor):
    target = predictor.instances[0]
    _, quarter, mid, near_hi, _ = _sizes(predictor, target)
    at = page("scaler").run()
    at.selectbox(key="target").set_value(target).run()
    _set_points(at, 20.0, 90.0, size_a=quarter, size_b=mid)
    _predict_slider(at).set_value(near_hi).run()
    no_exception(at)
    value = float(predictor.scale(target, "batch", 20.0, 90.0, near_hi, quarter, mid))
    assert at.metric[0].value == ui.fmt_ms(value)


@pytest.mark.parametrize("by", ["batch", "input"], ids=["batch", "input"])
def test_third_point_is_passed_to_the_core(page, predictor, by):
    target = predictor.instances[0]
    lo, hi = (int(v) for v in predictor.scaler(target, by).size_range_)
    mid, query = int(round(np.sqrt(lo * hi))), int(round(np.sqrt(lo * hi))) // 2 + lo
    at = page("scaler").run()
    at.selectbox(key="target").set_value(target)
    at.radio(key="by").set_value(by).run()
    _set_points(at, 10.0, 200.0)
    at.checkbox(key=f"third_{by}").check().run()
    [third] = _inputs(at, "Batch latency at that size")
    third.set_value(30.0)
    _predict_slider(at).set_value(query).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    want = float(predictor.scale(target, by, 10.0, 200.0, query, points={mid: 30.0}))
    assert want != pytest.approx(float(predictor.scale(target, by, 10.0, 200.0, query)))
    assert at.metric[0].value == ui.fmt_ms(want)
    assert plotly_spec(at)["data"][1]["y"] == [10.0, 30.0, 200.0]


def test_sliders_mode(page, predictor):
    target = predictor.instances[-1]
    at = page("scaler").run()
    at.selectbox(key="target").set_value(target)
    at.radio(key="mode").set_value("Sliders").run()
    lat_sliders = [s for s in at.slider if s.key.startswith("slide_")]
    assert len(lat_sliders) == 2
    lat_sliders[0].set_value(8.0)
    lat_sliders[1].set_value(150.0)
    size = _sizes(predictor, target)[1]
    _predict_slider(at).set_value(size).run()
    no_exception(at)
    value = float(predictor.scale(target, "batch", 8.0, 150.0, size))
    assert at.metric[0].value == ui.fmt_ms(value)


def _anchor_result(predictor, anchor, rows, batch_size):
    profile = example_profile(predictor, anchor)
    if rows == 2:
        profile = profile.loc[[0, 0]].reset_index(drop=True)
        profile.iloc[1] *= 4
    prediction = predictor.predict(anchor, profile)
    return ui.AnchorResult(prediction, prediction.table, pd.DataFrame(), batch_size, 224)


@pytest.mark.parametrize("which", [0, 1, 3], ids=["at-lo", "near-lo", "near-hi"])
def test_prefilled_from_one_anchor_prediction(page, predictor, which):
    anchor = predictor.instances[0]
    sizes = _sizes(predictor, predictor.targets(anchor)[1])
    batch_size = sizes[which]
    result = _anchor_result(predictor, anchor, 1, batch_size)
    target = predictor.targets(anchor)[1]
    predicted = float(result.table.set_index("target").at[target, "batch_latency_ms"])
    at = page("scaler")
    at.session_state[ui.ANCHOR_RESULT] = result
    at.run()
    at.selectbox(key="target").set_value(target).run()
    no_exception(at)
    assert "Prefilled one point" in at.info[0].value
    small, large = _inputs(at, "Batch latency at the")
    size_inputs = [w for w in at.number_input if w.key.startswith("size_")]
    filled, empty, size_w = (
        (small, large, size_inputs[0]) if batch_size <= sizes[2] else (large, small, size_inputs[1])
    )
    assert filled.value == pytest.approx(predicted)
    assert empty.value is None
    assert size_w.value == batch_size
    # The missing point is reported, not raised.
    assert at.error and "latency_" in plain(at.error[0].value)


def test_fresh_page_asks_for_latencies(page):
    at = page("scaler").run()
    no_exception(at)
    assert not at.error and at.info and "Enter the batch latency" in at.info[0].value


def test_prefilled_ends_from_several_rows(page, predictor):
    anchor = predictor.instances[-1]
    result = _anchor_result(predictor, anchor, 2, 32)
    at = page("scaler")
    at.session_state[ui.ANCHOR_RESULT] = result
    at.run()
    no_exception(at)
    t = result.table
    # The page opens on the fastest target of the anchor prediction.
    target = t.loc[t["batch_latency_ms"].idxmin(), "target"]
    assert at.selectbox(key="target").value == target
    lat = t[t["target"] == target]["batch_latency_ms"]
    small, large = _inputs(at, "Batch latency at the")
    assert (small.value, large.value) == pytest.approx((lat.min(), lat.max()))
    value = float(
        predictor.scale(
            target, "batch", float(lat.min()), float(lat.max()), _predict_slider(at).value
        )
    )
    assert at.metric[0].value == ui.fmt_ms(value)


@pytest.mark.parametrize(
    "lat_a,lat_b,sizes,fragment",
    [
        (-1.0, 50.0, None, "latency_min_ms"),
        (10.0, None, None, "latency_max_ms"),
        (10.0, 50.0, (3, 1), "must be below"),
        (10.0, 50.0, (2, 2), "must be below"),
    ],
    ids=["negative-latency", "missing-latency", "sizes-reversed", "sizes-equal"],
)
def test_bad_input_shows_error(page, predictor, lat_a, lat_b, sizes, fragment):
    at = page("scaler").run()
    s = _sizes(predictor, at.selectbox(key="target").value)
    size_a, size_b = (s[sizes[0]], s[sizes[1]]) if sizes else (None, None)
    _set_points(at, lat_a, lat_b, size_a, size_b)
    at.run()
    no_exception(at)
    assert len(at.error) == 1 and fragment in plain(at.error[0].value), [e.value for e in at.error]
    assert not at.get("plotly_chart")
    # Fixing the input brings the prediction back.
    _set_points(at, 10.0, 50.0, s[0], s[-1])
    at.run()
    assert not at.error and at.metric


def test_validation_errors_are_quoted(page, predictor):
    target = predictor.instances[0]
    sc = predictor.validation["scalers"]
    row = sc[
        (sc["instance"] == target) & (sc["by"] == "batch") & (sc["variant"] == "default")
    ].iloc[0]
    at = page("scaler").run()
    at.selectbox(key="target").set_value(target).run()
    _set_points(at, 10.0, 200.0)
    at.run()
    no_exception(at)
    text = " ".join(c.value for c in at.caption)
    assert (
        f"default: {row['mape_pct']:.1f}% (n = {row['n']}; {row['mape_3pt_pct']:.1f}% with a middle size given)"
        in text
    )
