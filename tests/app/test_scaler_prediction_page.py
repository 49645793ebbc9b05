"""Scaler prediction page: from one latency (the learned per-instance curve, prefilled from the
Anchor page's chosen row and target) or from two or three measured latencies; every shown number
equals the core's, and nothing is shown from numbers the user never gave."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from profet_app import common
from tests.app._utils import example_profile, no_exception, plain, plotly_spec, values


def _points_mode(at):
    at.radio(key="mode").set_value("points").run()
    return at


def _set_points(at, lat_a, lat_b, size_a=None, size_b=None, by="batch"):
    if size_a is not None:
        at.number_input(key=f"size_first_{by}").set_value(size_a)
    if size_b is not None:
        at.number_input(key=f"size_second_{by}").set_value(size_b)
    at.number_input(key=f"lat_first_{by}").set_value(lat_a)
    at.number_input(key=f"lat_second_{by}").set_value(lat_b)


def _one(at, prefix):
    return next(w for w in at.number_input if w.key.startswith(f"one_{prefix}_"))


def _range(predictor, by="batch"):
    return tuple(int(v) for v in predictor.scaler(None, by).size_range_)


def _anchor_result(predictor, anchor, rows, batch_size=32):
    profile = example_profile(predictor, anchor)
    if rows == 2:
        profile = profile.loc[[0, 0]].reset_index(drop=True)
        profile.iloc[1] *= 4
    prediction = predictor.predict(anchor, profile)
    return common.AnchorResult(
        prediction, prediction.table, pd.DataFrame(), batch_size, 224, profile
    )


def _with_result(page, result):
    at = page("scaler")
    at.session_state[common.ANCHOR_RESULT] = result
    return at.run()


@pytest.mark.parametrize("by", ["batch", "input"], ids=["batch", "input"])
def test_two_points_equal_core(page, predictor, by):
    lo, hi = _range(predictor, by)
    at = page("scaler").run()
    at.radio(key="by").set_value(by).run()
    _points_mode(at)
    _set_points(at, 12.5, 180.0, by=by)
    at.run()
    size = int(lo + (hi - lo) / 3)
    at.slider(key="pts_to").set_value(size).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    value = float(predictor.scale(None, by, {lo: 12.5, hi: 180.0}, size))
    assert at.metric[0].value == common.fmt_ms(value)
    spec = plotly_spec(at)
    line = next(d for d in spec["data"] if d["name"] == "Scaler prediction")
    grid = values(line["x"])
    assert grid[0] == lo and grid[-1] == hi
    np.testing.assert_allclose(
        values(line["y"]), predictor.scale(None, by, {lo: 12.5, hi: 180.0}, grid), rtol=1e-9
    )


def test_a_third_point_reaches_the_core(page, predictor):
    lo, hi = _range(predictor)
    at = _points_mode(page("scaler").run())
    _set_points(at, 20.0, 90.0, size_a=32, size_b=128)
    at.run()
    at.slider(key="pts_to").set_value(200).run()
    at.checkbox(key="third_batch").check().run()
    at.number_input(key="mid_lat_batch").set_value(30.0).run()
    no_exception(at)
    mid = int(round(np.sqrt(lo * hi)))
    want = float(predictor.scale(None, "batch", {32: 20.0, mid: 30.0, 128: 90.0}, 200))
    assert at.metric[0].value == common.fmt_ms(want)


def test_fresh_page_asks_for_a_latency_and_invents_none(page):
    at = page("scaler").run()
    no_exception(at)
    assert not at.error and not at.metric and not at.get("plotly_chart")
    assert "Enter the batch latency" in at.info[0].value
    assert _one(at, "lat").value is None
    _points_mode(at)
    assert not at.metric and "Enter the batch latency" in at.info[0].value


def test_one_measured_point_without_a_profile_equals_core(page, predictor):
    at = page("scaler").run()
    target = predictor.instances[1]
    at.selectbox(key="one_target").set_value(target).run()
    _one(at, "lat").set_value(40.0).run()
    at.slider(key="one_to").set_value(128).run()
    no_exception(at)
    want = predictor.scale_from_point(target, "batch", 40.0, 32, 128, 224)
    assert at.metric[0].value == common.fmt_ms(float(want.latency_ms[0]))
    # Without a profile the page says what the shape rests on: a note, not a warning.
    assert any("no anchor profile" in plain(w.value) for w in at.info)
    assert not any("no anchor profile" in plain(w.value) for w in at.warning)
    band = next(d for d in plotly_spec(at)["data"] if d["name"] == "80% interval")
    assert np.isfinite(values(band["y"])).all()


def test_the_target_instance_changes_the_curve(page, predictor):
    at = page("scaler").run()
    shown = {}
    for target in predictor.instances:
        at.selectbox(key="one_target").set_value(target).run()
        _one(at, "lat").set_value(40.0).run()
        at.slider(key="one_to").set_value(256).run()
        no_exception(at)
        shown[target] = at.metric[0].value
        want = predictor.scale_from_point(target, "batch", 40.0, 32, 256, 224).latency_ms[0]
        assert shown[target] == common.fmt_ms(float(want))
    assert len(set(shown.values())) > 1, shown


def test_prefilled_from_the_anchor_prediction_with_its_profile(page, predictor):
    """After any anchor prediction the page once showed `latency_max_ms is None` in red."""
    anchor = predictor.instances[0]
    result = _anchor_result(predictor, anchor, 1)
    at = _with_result(page, result)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    config = at.selectbox(key="pre_target").value
    t = result.table.set_index("configuration")
    # Opens on the fastest measured target, not the fastest spec-only GPU (never
    # measured at several sizes)
    measured = t[t["basis"] == "measured"]
    assert config == measured["batch_latency_ms"].idxmin() != t["batch_latency_ms"].idxmin()
    latency, target = t.at[config, "batch_latency_ms"], t.at[config, "target"]
    assert _one(at, "lat").value == pytest.approx(latency)
    at.slider(key="one_to").set_value(128).run()
    want = predictor.scale_from_point(target, "batch", latency, 32, 128, 224, result.profiles)
    assert at.metric[0].value == common.fmt_ms(float(want.latency_ms[0]))
    caption = " ".join(c.value for c in at.caption)
    assert common.fmt_ms(float(want.low_ms[0])) in caption  # the interval is stated, in ms
    assert not any("no anchor profile" in plain(w.value) for w in (*at.warning, *at.info))


def test_several_rows_use_the_chosen_rows_latency_and_profile(page, predictor):
    """Three CNNs' predictions are three rows, not one model's latencies at two sizes."""
    anchor = predictor.instances[-1]
    result = _anchor_result(predictor, anchor, 2)
    at = _with_result(page, result)
    at.selectbox(key="prefill_row").set_value(1).run()
    no_exception(at)
    config = at.selectbox(key="pre_target").value
    t = result.table
    hit = t[(t["row"] == 1) & (t["configuration"] == config)]
    latency, target = hit["batch_latency_ms"].iloc[0], hit["target"].iloc[0]
    assert _one(at, "lat").value == pytest.approx(latency)
    at.slider(key="one_to").set_value(64).run()
    profile = result.profiles.iloc[[1]]
    want = predictor.scale_from_point(target, "batch", latency, 32, 64, 224, profile)
    assert at.metric[0].value == common.fmt_ms(float(want.latency_ms[0]))


def test_an_amp_multi_gpu_prediction_is_named_and_scaled_per_gpu(page, predictor):
    """After an 8-GPU AMP prediction the page said "29.98 ms predicted on p3.2xlarge at batch
    size 32" (the 8 x V100 AMP row, global batch 256) and scaled that step as one GPU's."""
    from profet_core import PredictRequest

    anchor = "g3s.xlarge"
    profile = example_profile(predictor, anchor)
    request = PredictRequest(anchor=anchor, precision="amp", gpus=8, batch_size=32)
    prediction = predictor.predict(None, profile, request)
    kept = {f.name for f in dataclasses.fields(common.AnchorResult)}
    result = common.AnchorResult(
        prediction,
        prediction.table,
        pd.DataFrame(),
        32,
        224,
        profile,
        **({"request": request} if "request" in kept else {}),
    )
    at = _with_result(page, result)
    no_exception(at)
    config = "8 x V100 SXM2 16GB"
    at.selectbox(key="pre_target").set_value(config).run()
    no_exception(at)
    said = " ".join(plain(i.value) for i in at.info)
    assert config in said and "AMP" in said and "8 GPUs" in said and "global batch 256" in said
    one = predictor.predict(None, profile, dataclasses.replace(request, gpus=1)).table.set_index(
        "target"
    )
    step = float(one.at["p3.2xlarge", "batch_latency_ms"])
    eight = prediction.table.set_index("configuration").at[config, "batch_latency_ms"]
    assert step != pytest.approx(eight)  # the one-GPU step, not the 8-GPU one
    assert _one(at, "lat").value == pytest.approx(step)
    assert common.fmt_ms(step) in said


def test_a_typed_latency_far_beyond_its_work_is_warned_about(page, predictor):
    """5,000 ms at batch 256 against 20 ms at 16 (250x the latency for 16x the work) drew no
    warning."""
    at = _points_mode(page("scaler").run())
    _set_points(at, 20.0, 5000.0)
    at.run()
    no_exception(at)
    assert any("250x the one at 16 images" in plain(w.value) for w in at.warning)
    _set_points(at, 20.0, 210.0)
    at.run()
    assert not any("the work" in plain(w.value) for w in at.warning)


def test_falling_latency_is_warned_about(page, predictor):
    at = _points_mode(page("scaler").run())
    _set_points(at, 200.0, 21.0)
    at.run()
    no_exception(at)
    assert any("is below the one at 16 images" in plain(w.value) for w in at.warning)
    assert at.metric  # still answered, with the warning


def test_equal_sizes_ask_for_two_different_ones(page, predictor):
    at = _points_mode(page("scaler").run())
    _set_points(at, 10.0, 50.0, 128, 128)
    at.run()
    no_exception(at)
    assert not at.get("plotly_chart")
    assert any("two different" in i.value for i in at.info)
    _set_points(at, 10.0, 50.0, 16, 256)
    at.run()
    assert not at.error and at.metric


@pytest.mark.parametrize("mode", ["one", "points"], ids=["one-point", "two-points"])
def test_validation_errors_are_quoted(page, predictor, mode):
    table = predictor.validation["onepoint" if mode == "one" else "scalers"]
    variant = "profile" if mode == "one" else "default"
    sel = table[(table["by"] == "batch") & (table["variant"] == variant)]
    at = page("scaler").run()
    if mode == "one":
        _one(at, "lat").set_value(40.0).run()
    else:
        _points_mode(at)
        _set_points(at, 10.0, 200.0)
        at.run()
    text = " ".join(c.value for c in at.caption)
    assert len(sel) == len(predictor.instances)
    for r in sel.itertuples():
        assert f"{r.instance} {r.mape_pct:.1f}%" in text


def test_sizes_read_as_words_and_no_zero_width_interval(page, predictor):
    """ "at px 128 pixels per side", and "18.5 ms to 18.5 ms, 80% interval" at the
    size the latency was given at (there the interval has no width)."""
    anchor = predictor.instances[0]
    at = _with_result(page, _anchor_result(predictor, anchor, 1))
    at.radio(key="by").set_value("input").run()
    no_exception(at)
    shown = " ".join(plain(i.value) for i in at.info)
    assert "at input size 224 pixels per side" in shown and "px 224" not in shown
    at.slider(key="one_to").set_value(224).run()
    assert at.metric[0].label == "Predicted batch latency at input size 224 pixels per side"
    caption = next(plain(c.value) for c in at.caption if c.value.startswith("Predicted"))
    assert "interval" not in caption and "given at this input size" in caption
    at.slider(key="one_to").set_value(128).run()
    caption = next(plain(c.value) for c in at.caption if c.value.startswith("Predicted"))
    low, high = re.search(r"\((.+?) to (.+?), 80% interval\)", caption).groups()
    assert low != high


def test_min_and_max_latency_sliders_drive_the_answer(page, predictor):
    """The design card's min/max latency sliders; dragging one fills its number box
    and moves the answer, typing in a box moves its slider."""
    lo, hi = _range(predictor)
    at = _points_mode(page("scaler").run())
    low, high = at.slider(key="lat_first_batch_slider"), at.slider(key="lat_second_batch_slider")
    assert 0 == low.min < low.max < high.max  # ranges from the sizes: wider at batch 256
    assert low.value == high.value == 0  # untouched: 0, "not entered"
    assert at.number_input(key="lat_first_batch").value is None  # nothing made up yet
    low.set_value(10.0).run()
    at.slider(key="lat_second_batch_slider").set_value(120.0).run()
    no_exception(at)
    assert at.number_input(key="lat_first_batch").value == pytest.approx(10.0)
    assert at.number_input(key="lat_second_batch").value == pytest.approx(120.0)
    at.slider(key="pts_to").set_value(128).run()
    first = at.metric[0].value
    assert first == common.fmt_ms(float(predictor.scale(None, "batch", {lo: 10.0, hi: 120.0}, 128)))
    at.slider(key="lat_second_batch_slider").set_value(200.0).run()
    assert at.metric[0].value != first
    assert at.metric[0].value == common.fmt_ms(
        float(predictor.scale(None, "batch", {lo: 10.0, hi: 200.0}, 128))
    )
    line = next(d for d in plotly_spec(at)["data"] if d["name"] == "Scaler prediction")
    assert values(line["y"])[-1] == pytest.approx(200.0)
    # A typed latency moves the slider, beyond its range when it must.
    top = at.slider(key="lat_second_batch_slider").max
    at.number_input(key="lat_second_batch").set_value(3 * top).run()
    no_exception(at)
    assert at.slider(key="lat_second_batch_slider").value == pytest.approx(3 * top)
    assert at.slider(key="lat_second_batch_slider").max >= 3 * top


def test_latency_slider_ranges_follow_the_instance(page, predictor):
    at = _points_mode(page("scaler").run())
    tops = {}
    for target in ("p2.xlarge", "p3.2xlarge"):
        at.selectbox(key="pts_target").set_value(target).run()
        no_exception(at)
        high = at.slider(key="lat_second_batch_slider")
        tops[target] = high.max
        # untouched, it reads as untouched: 0, "not entered", not a reference CNN's latency
        # while the page asks for the user's
        assert high.value == 0 and "not entered" in high.label
        assert at.number_input(key="lat_second_batch").value is None
    assert tops["p2.xlarge"] > tops["p3.2xlarge"], tops  # a K80 is slower than a V100
