"""The anchor told from the profile: a g3s.xlarge profile that names no instance,
given as a p3.2xlarge one, is flagged naming g3s.xlarge; the classifier is fitted here on the
real data as training does."""

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts, read_profile
from profet_core.features._anchor import (
    anchor_features,
    anchor_findings,
    anchor_probabilities,
    fit_anchor_classifier,
)
from profet_core.prediction._checks import sense_checks
from tests._utils import ROOT, SHARED, requires_shared

EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def fitted():
    if not (SHARED / "profiles.parquet").is_file():
        pytest.skip(f"real PROFET data not found at {SHARED}")
    prof = pd.read_parquet(SHARED / "profiles.parquet")
    return fit_anchor_classifier(prof)  # as `profet train` does (about 10 s)


def _unnamed(name):
    return read_profile(EXAMPLES / name).drop(columns="instance", errors="ignore")


def test_features_are_scale_free():
    profile = _unnamed("profile_g3s.json")
    a, ok = anchor_features(profile)
    ops = [c for c in profile.columns if c.startswith(("Host_", "Device_"))]
    c, _ = anchor_features(profile[ops] * 5)  # the same profile over 10 steps
    assert ok.all() and np.allclose(a, c, atol=1e-3)


@requires_shared
@pytest.mark.parametrize("name", ["profile_g3s.json", "profile_g3s_10steps.json"])
def test_a_g3s_profile_given_as_p3_is_flagged_naming_g3s(fitted, name):
    meta, arrays = fitted
    assert meta["instances"] == ["g3s.xlarge", "g4dn.xlarge", "p2.xlarge", "p3.2xlarge"]
    assert "VGG16" in meta["reserved"]
    profile = _unnamed(name)
    (found,) = anchor_findings(profile, "p3.2xlarge", meta, arrays)
    assert found.code == "anchor_mismatch" and found.level == "warning"
    assert "looks taken on g3s.xlarge" in found.message and "--anchor g3s.xlarge" in found.message
    # how often it is wrong, as measured under docs/anchor_hint_rule.md
    assert "flags 10.1% of genuine profiles, 14.8% on the worst instance" in found.message
    assert "catches 23.9% of wrong anchors" in found.message
    assert anchor_findings(profile, "g3s.xlarge", meta, arrays) == []


@requires_shared
def test_a_row_naming_its_instance_is_not_second_guessed(fitted):
    meta, arrays = fitted
    profile = read_profile(EXAMPLES / "profile_g3s.json").assign(instance="p3.2xlarge")
    assert anchor_findings(profile, "p3.2xlarge", meta, arrays) == []
    p = anchor_probabilities(profile, arrays)
    assert p.shape == (1, 4) and p.sum() == pytest.approx(1.0)


@requires_shared
def test_sense_checks_say_it_and_artifacts_without_the_state_say_nothing(fitted):
    meta, arrays = fitted
    model = load_artifacts().bundle.model
    profile = _unnamed("profile_g3s_10steps.json").assign(steps=10)
    stored = {f"anchor|{k}": v for k, v in arrays.items()}
    with_state = sense_checks(
        {**model, "anchor_signal": meta}, profile, 0.113, "p3.2xlarge", stored
    )
    assert sum("looks taken on g3s.xlarge" in w for w in with_state) == 1
    without = sense_checks({**model, "anchor_signal": None}, profile, 0.113, "p3.2xlarge", {})
    assert not any("looks taken on" in w for w in without)


def test_no_verdict_without_device_time_or_with_one_instance():
    profile = pd.DataFrame({"Host_IDLE": [5.0], "Host_Dataset": [3.0]})
    _, ok = anchor_features(profile)
    assert not ok.any()
    one = pd.DataFrame({"instance": ["a"] * 3, "model": ["m"] * 3, "Device_Relu": [1.0, 2, 3]})
    assert fit_anchor_classifier(one) == ({}, {})
