"""Scaler prediction page: the shown value and curve equal ``Predictor.scale``; nothing is shown
from numbers the user never gave (issue 12)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from app_helpers import example_profile, no_exception, plain, plotly_spec, values

import ui


def _lat(at, name):
    return next(w for w in at.number_input if w.key.startswith(f"lat_{name}_"))


def _size(at, name):
    return next(w for w in at.number_input if w.key.startswith(f"size_{name}_"))


def _set_points(at, lat_a, lat_b, size_a=None, size_b=None):
    if size_a is not None:
        _size(at, "first").set_value(size_a)
    if size_b is not None:
        _size(at, "second").set_value(size_b)
    _lat(at, "first").set_value(lat_a)
    _lat(at, "second").set_value(lat_b)


def _predict_slider(at):
    return next(s for s in at.slider if s.key.startswith("predict_"))


def _range(predictor, by="batch"):
    return tuple(int(v) for v in predictor.scaler(None, by).size_range_)


@pytest.mark.parametrize("by", ["batch", "input"], ids=["batch", "input"])
def test_prediction_equals_core(page, predictor, by):
    lo, hi = _range(predictor, by)
    at = page("scaler").run()
    at.radio(key="by").set_value(by).run()
    _set_points(at, 12.5, 180.0)
    size = int(lo + (hi - lo) / 3)
    _predict_slider(at).set_value(size).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    value = float(predictor.scale(None, by, 12.5, 180.0, size))
    assert at.metric[0].value == ui.fmt_ms(value)
    spec = plotly_spec(at)
    grid = values(spec["data"][0]["x"])
    assert grid[0] == lo and grid[-1] == hi
    np.testing.assert_allclose(
        values(spec["data"][0]["y"]), predictor.scale(None, by, 12.5, 180.0, grid), rtol=1e-9
    )
    assert spec["data"][1]["y"] == [12.5, 180.0]  # the given points are marked


def test_inner_sizes_and_a_third_point_reach_the_core(page, predictor):
    lo, hi = _range(predictor)
    at = page("scaler").run()
    _set_points(at, 20.0, 90.0, size_a=32, size_b=128)
    _predict_slider(at).set_value(200).run()
    no_exception(at)
    assert at.metric[0].value == ui.fmt_ms(
        float(predictor.scale(None, "batch", 20.0, 90.0, 200, 32, 128))
    )
    at.checkbox(key="third_batch").check().run()
    next(w for w in at.number_input if w.key.startswith("mid_lat_")).set_value(30.0).run()
    no_exception(at)
    mid = int(round(np.sqrt(lo * hi)))
    want = float(predictor.scale(None, "batch", 20.0, 90.0, 200, 32, 128, points={mid: 30.0}))
    assert at.metric[0].value == ui.fmt_ms(want)


def test_fresh_page_asks_for_latencies_and_invents_none(page):
    at = page("scaler").run()
    no_exception(at)
    assert not at.error and not at.metric and not at.get("plotly_chart")
    assert "Enter the batch latency" in at.info[0].value
    assert not [s for s in at.slider if "latency" in s.label.lower()]  # no made-up latencies


def _anchor_result(predictor, anchor, rows, batch_size):
    profile = example_profile(predictor, anchor)
    if rows == 2:
        profile = profile.loc[[0, 0]].reset_index(drop=True)
        profile.iloc[1] *= 4
    prediction = predictor.predict(anchor, profile)
    return ui.AnchorResult(prediction, prediction.table, pd.DataFrame(), batch_size, 224)


def test_prefilled_from_an_anchor_prediction_without_an_error(page, predictor):
    """After any anchor prediction the page once showed `latency_max_ms is None` in red."""
    anchor = predictor.instances[0]
    result = _anchor_result(predictor, anchor, 1, 32)
    at = page("scaler")
    at.session_state[ui.ANCHOR_RESULT] = result
    at.run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    target = at.selectbox(key="prefill_target").value
    t = result.table.set_index("target")
    assert target == t["batch_latency_ms"].idxmin()  # opens on the fastest target
    assert _lat(at, "first").value == pytest.approx(t.at[target, "batch_latency_ms"])
    assert _size(at, "first").value == 32 and _lat(at, "second").value is None
    _lat(at, "second").set_value(3 * t.at[target, "batch_latency_ms"]).run()
    assert at.metric and not at.error


def test_several_rows_prefill_the_chosen_row_not_the_ends(page, predictor):
    """Three CNNs' predictions are three rows, not one model's latencies at two sizes."""
    anchor = predictor.instances[-1]
    result = _anchor_result(predictor, anchor, 2, 32)
    at = page("scaler")
    at.session_state[ui.ANCHOR_RESULT] = result
    at.run()
    target = at.selectbox(key="prefill_target").value
    at.selectbox(key="prefill_row").set_value(1).run()
    no_exception(at)
    t = result.table
    want = t[(t["row"] == 1) & (t["target"] == target)]["batch_latency_ms"].iloc[0]
    assert _lat(at, "first").value == pytest.approx(want)
    assert _lat(at, "second").value is None


def test_falling_latency_is_warned_about(page, predictor):
    at = page("scaler").run()
    _set_points(at, 200.0, 21.0)
    at.run()
    no_exception(at)
    assert any("is below the one at 16 images" in plain(w.value) for w in at.warning)
    assert at.metric  # still answered, with the warning


@pytest.mark.parametrize(
    ("lat_a", "lat_b", "sizes", "fragment"),
    [(10.0, 50.0, (128, 128), "two different")],
    ids=["sizes-equal"],
)
def test_bad_input_shows_info_or_error(page, predictor, lat_a, lat_b, sizes, fragment):
    at = page("scaler").run()
    _set_points(at, lat_a, lat_b, *sizes)
    at.run()
    no_exception(at)
    assert not at.get("plotly_chart")
    assert any(fragment in i.value for i in at.info)
    _set_points(at, 10.0, 50.0, 16, 256)
    at.run()
    assert not at.error and at.metric


def test_validation_errors_are_quoted(page, predictor):
    sc = predictor.validation["scalers"]
    sel = sc[(sc["by"] == "batch") & (sc["variant"] == "default")]
    at = page("scaler").run()
    _set_points(at, 10.0, 200.0)
    at.run()
    text = " ".join(c.value for c in at.caption)
    for r in sel.itertuples():
        assert f"{r.instance} {r.mape_pct:.1f}%" in text
