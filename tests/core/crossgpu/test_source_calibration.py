"""Intervals calibrated both one GPU and one source left out (issue 40 item 5)."""

import numpy as np
import pytest

from profet_core.crossgpu._calibrate import (
    BAND,
    calibration,
    coverage,
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
