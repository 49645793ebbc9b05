"""One-point scaler: latency at any size on an instance from one latency there."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetValueError, load_artifacts
from profet_core.onepoint import (
    OnePointScaler,
    cross_validate_one_point,
    one_point_pairs,
    summarize_one_point,
)
from profet_core.onepoint._model import ELASTICITY_MAX, FREE_FEATURES
from profet_core.onepoint._validate import interval_table


@pytest.fixture(scope="module")
def batch_pairs(synthetic_dataset):
    return one_point_pairs(synthetic_dataset, "batch")


@pytest.fixture(scope="module")
def fitted(batch_pairs):
    return OnePointScaler(by="batch", n_estimators=10, min_samples_leaf=2).fit(batch_pairs)


@pytest.fixture(scope="module")
def predictor(trained):
    return load_artifacts(trained)


def _args(pairs, rows=slice(None)):
    p = pairs.iloc[rows]
    free = p[list(FREE_FEATURES)].to_numpy()
    return p["s0"], p["s1"], p["other"], p["L0_s"], free


def test_pairs_join_every_size_pair_with_the_anchor_profile_at_the_first(
    synthetic_dataset, batch_pairs
):
    p = batch_pairs
    # 5 CNNs x 3 input sizes x 3 targets x 3 anchors x (3 x 2 ordered batch pairs)
    assert len(p) == 5 * 3 * 3 * 3 * 6
    assert (p["s0"] != p["s1"]).all() and set(p["s0"]) == {16.0, 32.0, 64.0}
    lat = synthetic_dataset.latencies
    one = p.iloc[0]
    want = lat[
        (lat["instance"] == one["target"])
        & (lat["model"] == one["model"])
        & (lat["input_size"] == one["other"])
        & (lat["batch_size"] == one["s1"])
    ]["batch_latency_s"].median()
    assert one["L1_s"] == pytest.approx(want)


def test_learned_curve_beats_linear_on_curves_with_fixed_overhead(synthetic_dataset):
    """The synthetic steps carry a fixed 500 us: linear-in-work overshoots, the model learns it."""
    oof = cross_validate_one_point(synthetic_dataset, "batch", n_estimators=10)
    table = summarize_one_point(oof).set_index(["instance", "variant"])["mape_pct"]
    for inst in oof["target"].unique():
        assert table[(inst, "profile")] < table[(inst, "linear in work")], table
        assert table[(inst, "latency only")] < table[(inst, "linear in work")], table


def test_curves_rise_and_pass_through_the_given_point(fitted, batch_pairs):
    s0, _, other, lat, free = _args(batch_pairs, slice(0, 1))
    grid = np.arange(16, 65, dtype=float)
    ratio = np.exp(fitted.predict_log_ratio("gpu-b", float(s0.iloc[0]), grid, other, lat, free[0]))
    assert ratio[grid == s0.iloc[0]] == pytest.approx(1.0)
    assert (ratio[grid > s0.iloc[0]] >= 1).all() and (ratio[grid < s0.iloc[0]] <= 1).all()
    # No elasticity beyond the clip: the curve never grows faster than (s1/s0) ** 1.5.
    assert (np.log(ratio) <= ELASTICITY_MAX * np.abs(np.log(grid / s0.iloc[0])) + 1e-12).all()


def test_an_unmeasured_target_takes_the_median_of_the_measured_ones(fitted, batch_pairs):
    args = _args(batch_pairs, slice(0, 7))
    each = [fitted.predict_log_ratio(t, *args) for t in fitted.targets_]
    np.testing.assert_allclose(fitted.predict_log_ratio("a100", *args), np.median(each, axis=0))


@pytest.mark.parametrize(
    ("use_profile", "free", "match"),
    [(True, None, "needs the anchor profile")],
    ids=["profile-missing"],
)
def test_profile_model_needs_features(fitted, batch_pairs, use_profile, free, match):
    s0, s1, other, lat, _ = _args(batch_pairs, slice(0, 2))
    with pytest.raises(ProfetValueError, match=match):
        fitted.predict_log_ratio("gpu-a", s0, s1, other, lat, free)


def test_state_round_trips_through_json(fitted, batch_pairs, synthetic_dataset):
    oof = cross_validate_one_point(synthetic_dataset, "batch", n_estimators=5)
    fitted.intervals_ = interval_table(oof, "profile")
    meta, arrays = fitted.to_state()
    back = OnePointScaler.from_state(json.loads(json.dumps(meta)), arrays)
    args = _args(batch_pairs)
    np.testing.assert_array_equal(
        back.predict_log_ratio("gpu-c", *args), fitted.predict_log_ratio("gpu-c", *args)
    )
    pd.testing.assert_frame_equal(back.intervals_, fitted.intervals_, check_dtype=False)
    lo, hi = back.interval("gpu-c", 32.0, np.array([32.0, 64.0, 16.0]))
    assert lo[0] == hi[0] == 0.0  # the given point is given
    assert (lo[1:] < 0).all() and (hi[1:] > 0).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"latency_ms": 0.0}, "latency_ms is 0;"),
        ({"latency_ms": float("nan")}, "latency_ms is nan"),
        ({"latency_ms": "fast"}, "latency_ms is 'fast'"),
        ({"size": 512}, r"batch size 512 is outside the trained range 16..64"),
        ({"size_from": 8}, "outside the trained range"),
        ({"other_size": -3}, "other_size is -3;"),
        ({"by": "depth"}, "scale by 'depth'; allowed: batch, input"),
        ({"target": "tpu"}, "unknown target instance 'tpu'"),
    ],
    ids=["zero", "nan", "text", "size-out", "from-out", "other-neg", "bad-by", "bad-target"],
)
def test_bad_input_is_refused_by_name(predictor, kwargs, match):
    call = {
        "target": "gpu-a",
        "by": "batch",
        "latency_ms": 5.0,
        "size_from": 32,
        "size": 64,
        "other_size": 64,
    }
    with pytest.raises(ProfetValueError, match=match):
        predictor.scale_from_point(**{**call, **kwargs})


def _profile(dataset, rows):
    ops = dataset.profiles[list(dataset.ops)]
    return ops.iloc[rows].reset_index(drop=True)


@pytest.mark.parametrize(
    ("rows", "scale", "match"),
    [([0, 1], 1.0, "must be one row"), ([0], 0.0, "no device time")],
    ids=["two-rows", "all-zero"],
)
def test_bad_profile_is_refused(predictor, synthetic_dataset, rows, scale, match):
    profile = _profile(synthetic_dataset, rows) * scale
    with pytest.raises(ProfetValueError, match=match):
        predictor.scale_from_point("gpu-a", "batch", 5.0, 32, 64, 64, profile)


def test_scale_from_point_uses_the_profile_and_says_what_it_rests_on(predictor, synthetic_dataset):
    profile = _profile(synthetic_dataset, [0])
    with_p = predictor.scale_from_point("gpu-a", "batch", 5.0, 32, [16, 64], 64, profile)
    without = predictor.scale_from_point("gpu-a", "batch", 5.0, 32, [16, 64], 64)
    assert with_p.basis == "profile" and without.basis == "latency only"
    assert not with_p.notes
    assert any("no anchor profile" in n for n in without.notes)
    t = with_p.table()
    assert list(t.columns) == ["size", "latency_ms", "low_ms", "high_ms"]
    assert (t["low_ms"] <= t["latency_ms"]).all() and (t["latency_ms"] <= t["high_ms"]).all()
    assert t["latency_ms"].iloc[0] < 5.0 < t["latency_ms"].iloc[1]
    # A profile over 4 steps is the same workload as the same times over 2.
    four = profile.assign(steps=4) * 1
    four[list(synthetic_dataset.ops)] *= 2
    again = predictor.scale_from_point("gpu-a", "batch", 5.0, 32, [16, 64], 64, four)
    np.testing.assert_allclose(again.latency_ms, with_p.latency_ms)


def test_an_other_size_outside_training_is_noted(predictor):
    out = predictor.scale_from_point("gpu-a", "input", 5.0, 64, 128, 999)
    assert any("outside the trained 16..64" in n for n in out.warnings), out.warnings
    assert not any("outside the trained" in n for n in out.notes)  # a warning, not a note


def test_curves_between_measured_sizes_have_no_jumps(fitted, batch_pairs):
    """The input-size curve jumped near 203, 209 and 218 px, where the forest's
    random split thresholds on log(s1 / s0) fall. The elasticity is now the forest's at the
    measured sizes and linear in log size between them: at a measured size nothing changes."""
    s0, s1, other, lat, free = _args(batch_pairs, slice(0, 1))
    grid = np.linspace(16, 64, 481)
    grid = grid[grid != s0.iloc[0]]
    logr = fitted.predict_log_ratio("gpu-b", float(s0.iloc[0]), grid, other, lat, free[0])
    elasticity = logr / np.log(grid / s0.iloc[0])
    assert fitted.sizes_ == [16.0, 32.0, 64.0]
    for a, b in zip(fitted.sizes_[:-1], fitted.sizes_[1:], strict=True):
        inside = (grid > a) & (grid < b)
        e = elasticity[inside]
        # linear in log size: equal steps in log size give equal steps in elasticity
        slope = np.diff(e) / np.diff(np.log(grid[inside]))
        np.testing.assert_allclose(slope, slope[0], atol=1e-6)
    for size in fitted.sizes_:  # at a measured size: the forest's own, clipped
        if size == s0.iloc[0]:
            continue
        onehot = np.zeros((1, len(fitted.targets_)))
        onehot[0, fitted.targets_.index("gpu-b")] = 1.0
        X = fitted._design(
            onehot, s0.to_numpy(), np.array([size]), other.to_numpy(), lat.to_numpy(), free
        )
        want = np.clip(fitted.forest_.predict(X), 0, ELASTICITY_MAX)[0] * np.log(size / s0.iloc[0])
        got = fitted.predict_log_ratio("gpu-b", s0.iloc[0], size, other, lat, free[0])[0]
        assert got == pytest.approx(want)
