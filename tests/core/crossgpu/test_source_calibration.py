"""Intervals calibrated both one GPU and one source left out."""

import numpy as np
import pytest

from profet_core.crossgpu.spec._calibrate import (
    BAND,
    calibration,
    coverage,
    crossfit,
    pooled_scale,
    source_note,
    source_spread,
    two_way_scale,
)


def test_coverage_counts_rows_within_the_scaled_width():
    assert coverage([0.1, 0.2, 0.3, 0.4], [0.25] * 4) == 0.5
    assert coverage([0.1, 0.2, 0.3, 0.4], [0.25] * 4, s=2.0) == 1.0


def test_a_factor_meeting_both_sides_is_taken_when_there_is_one():
    rng = np.random.default_rng(0)
    e_gpu, e_src = np.abs(rng.normal(0, 0.10, 400)), np.abs(rng.normal(0, 0.11, 400))
    hw = np.quantile(e_gpu, 0.7)  # too narrow for both
    got = two_way_scale(e_gpu, np.full(400, hw), e_src, np.full(400, hw))
    assert got["coverage_source_before"] < BAND[0]
    assert BAND[0] <= got["coverage_gpu"] <= BAND[1]
    assert BAND[0] <= got["coverage_source"] <= BAND[1]
    assert got["scale"] > 1


def test_where_none_does_the_source_side_is_met_first():
    rng = np.random.default_rng(1)
    e_gpu, e_src = np.abs(rng.normal(0, 0.05, 400)), np.abs(rng.normal(0, 0.20, 400))
    hw = np.full(400, np.quantile(e_gpu, 0.8))
    got = two_way_scale(e_gpu, hw, e_src, hw)
    assert got["coverage_source"] >= BAND[0] and got["coverage_gpu"] > BAND[1]
    # the smallest such factor
    assert coverage(e_src, hw, got["scale"] - 0.01) < BAND[0]


def test_calibration_reports_the_spread_between_sources():
    signed = np.array([0.1, 0.12, -0.2, -0.22, 0.0])
    got = calibration(np.abs(signed), np.full(5, 0.15), signed, np.full(5, 0.15), list("aabbc"))
    assert got["sources"] == 3 and got["rows_source"] == 5
    assert got["spread"] == pytest.approx([np.exp(-0.21), np.exp(0.11)])
    assert source_spread(signed, list("aabbc")) == got["spread"]


def test_source_note_names_each_kind_and_is_silent_for_old_artifacts():
    class M:
        source_calibration_ = {}
        amp_state_ = dp_state_ = None

    assert source_note(M(), "amp", True) is None
    c = {"spread": [0.9, 1.14], "sources": 9, "coverage_source": 0.75, "coverage_gpu": 0.9}
    M.source_calibration_ = {"fp32": c}
    M.amp_state_ = {"source_calibration": {**c, "sources": 3}}
    note = source_note(M(), "amp", False)
    assert "FP32 speed-up: the 9 sources' own levels spread x0.90..x1.14" in note
    assert "AMP gain: the 3 sources" in note and "N-GPU" not in note
    assert "N-GPU" not in source_note(M(), "fp32", True)


def test_pooled_scale_weighs_each_side_one_half():
    """FP32's form (docs/interval_both_coverage_rule.md): the 80% quantile of error / width over
    both sides, each side one half, so 10 source-out rows weigh as much as 300 GPU-out rows."""
    e_gpu, e_src = np.full(300, 0.05), np.full(10, 0.2)
    got = pooled_scale(e_gpu, np.full(300, 0.1), e_src, np.full(10, 0.1))
    assert got["scale"] == pytest.approx(2.0)  # unweighted pooling would give 0.5
    assert got["form"] == "pooled" and got["coverage_source"] == 1.0
    # row weights within a side move the quantile within that side
    e2 = np.array([0.05, 0.15])
    w = pooled_scale(e2, [0.1, 0.1], e2, [0.1, 0.1], w_gpu=[9, 1], w_source=[9, 1])
    assert w["scale"] == pytest.approx(0.5)  # equal row weights would give 1.5
    assert calibration(e2, [0.1, 0.1], e2, [0.1, 0.1], list("ab"), "pooled")["form"] == "pooled"


def test_crossfit_never_lets_a_row_its_gpu_or_its_source_set_its_width():
    side = np.array(["gpu"] * 3 + ["source"] * 3)
    gpu = np.array(list("abc") * 2)
    source = np.array(["s1", "s2", "s3", "s1", "s2", "s3"])
    err = np.array([0.1, 0.2, 0.3, 0.1, 0.2, 0.3])
    seen = []

    def fit(train, test):
        keys = gpu if side[test][0] == "gpu" else source
        assert not set(keys[train]) & set(keys[test])  # the judged GPU / source is not fitted
        seen.append(test.sum())
        return np.full(test.sum(), err[train].max())  # widest error among the fitted rows

    got = crossfit(side, gpu, source, err, fit)
    assert seen == [1] * 6
    # the row with the largest error is outside once its own GPU/source no longer sets the width
    assert got == {"crossfit_gpu": pytest.approx(2 / 3), "crossfit_source": pytest.approx(2 / 3)}


def test_source_note_gives_the_cross_fitted_coverage_where_kept():
    class M:
        amp_state_ = dp_state_ = None

    c = {"spread": [0.9, 1.14], "sources": 9, "coverage_source": 0.70, "coverage_gpu": 0.88}
    M.source_calibration_ = {"fp32": {**c, "crossfit_source": 0.82, "crossfit_gpu": 0.84}}
    note = source_note(M(), "fp32", False)
    assert "cover 82% with a source left out, 84% with a GPU left out (cross-fitted)." in note
    # a kind whose cross-fitted source-out coverage is short of the band says so
    M.dp_state_ = {"source_calibration": {**c, "crossfit_source": 0.59, "crossfit_gpu": 0.80}}
    note = source_note(M(), "fp32", True)
    assert "N-GPU scaling" in note and "cover 59% with a source left out" in note
    assert "80% with a GPU left out (cross-fitted), short of the 75% aimed at" in note
    assert note.count("short of") == 1
