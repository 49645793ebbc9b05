"""Integration tests on the real PROFET data in ../shared (CI has it; skipped elsewhere)."""

import json

import numpy as np
import pytest

from profet_core import cross_validate, load_artifacts, load_dataset, read_profile, summarize
from profet_core.models._intervals import interval_quantiles, novelty_errors
from profet_core.models._methods import DEFAULT_METHOD, method_factory
from tests._utils import SHARED, requires_shared

pytestmark = [requires_shared, pytest.mark.realdata]
EXAMPLES = sorted((SHARED / "examples").glob("*.json")) if SHARED.is_dir() else []


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(SHARED)


@pytest.fixture(scope="module")
def shipped():
    return load_artifacts()


def test_real_dataset_loads(dataset):
    assert dataset.instances == ["g3s.xlarge", "g4dn.xlarge", "p2.xlarge", "p3.2xlarge"]
    assert len(dataset.architectures) == 12
    assert len(dataset.profiles) == 9036


def test_shipped_artifacts_were_trained_on_this_data(shipped, dataset):
    assert shipped.metadata["data_fingerprint"] == dataset.fingerprint
    assert shipped.instances == dataset.instances


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_shipped_artifacts_predict_the_examples(shipped, path):
    profile = read_profile(path)
    given = {"profile_a_g3s.json": 0.1224, "profile_b_g3s.json": 1.52987}.get(path.name)
    res = shipped.predict("g3s.xlarge", profile, anchor_latency_s=given)
    t = res.table.set_index("target")
    assert list(t.index) == sorted(shipped.targets("g3s.xlarge"))
    measured = ["g4dn.xlarge", "p2.xlarge", "p3.2xlarge"]
    assert (t.loc[measured, "basis"] == "measured").all()
    # Tensor-core GPUs rest on published speed-ups (their generation's pairs).
    assert t.loc[["p4d.24xlarge", "p5.48xlarge"], "basis"].str.match(r"published \(\d+\)$").all()
    assert t.drop(index=measured)["basis"].str.match(r"(published \(\d+\)|specs only)$").all()
    assert (t["batch_latency_ms"] > 0).all() and np.isfinite(t["batch_latency_ms"]).all()
    assert (t["low_ms"] < t["batch_latency_ms"]).all() and (
        t["high_ms"] > t["batch_latency_ms"]
    ).all()
    # A V100 trains these CNNs faster than a K80 on every workload in the data.
    assert t.loc["p3.2xlarge", "batch_latency_ms"] < t.loc["p2.xlarge", "batch_latency_ms"]
    if given:
        assert t.loc["p3.2xlarge", "batch_latency_ms"] < 1000 * given


def test_example_from_artifacts_round_trips(shipped):
    ex = shipped.examples["g3s.xlarge"]
    from profet_core import parse_profile

    res = shipped.predict(
        "g3s.xlarge",
        parse_profile(json.dumps([ex["profile"]])),
        anchor_latency_s=ex["batch_latency_s"],
    )
    assert len(res.table) == len(shipped.targets("g3s.xlarge"))


@pytest.fixture(scope="module")
def oof(dataset):
    """A reduced leave-one-architecture-out run: one pair, six left-out CNNs of different kinds."""
    archs = ["MobileNetV2", "ResNet50", "VGG16", "LeNet5", "AlexNet", "InceptionResNetV2"]
    return cross_validate(
        dataset,
        {DEFAULT_METHOD: method_factory(DEFAULT_METHOD)},
        anchors=["g3s.xlarge"],
        targets=["p3.2xlarge"],
        architectures=archs,
    )


def test_default_method_accuracy_on_left_out_architectures(oof):
    m = summarize(oof).set_index(["estimator", "with_latency"])["mape_pct"]
    assert m[(DEFAULT_METHOD, True)] < 15.0
    assert m[(DEFAULT_METHOD, False)] < 25.0
    # The learned method must beat the naive median-ratio baseline on unseen architectures.
    assert m[(DEFAULT_METHOD, True)] < m[("median-ratio", True)]


def test_errors_grow_with_novelty(oof):
    """What novelty warnings rest on: held-out CNNs unlike the rest are predicted worse."""
    bands = novelty_errors(oof)
    for with_lat in (True, False):
        b = bands[(bands["estimator"] == DEFAULT_METHOD) & (bands["with_latency"] == with_lat)]
        b = b[b["n"] > 0].sort_values("novelty_lo")
        assert b["share_pct"].sum() == pytest.approx(100)
        assert b["mape_pct"].iloc[-1] > b["mape_pct"].iloc[0]


def test_intervals_calibrated_on_other_architectures_cover_about_80_pct(oof):
    """Coverage is measured per architecture against intervals calibrated without it."""
    iv = interval_quantiles(oof)
    cov = iv[iv["estimator"] == DEFAULT_METHOD]["coverage"]
    assert cov.between(0.6, 0.95).all(), cov.tolist()


def test_shipped_fit_model_warns_on_a_huge_workload_for_the_small_gpu(shipped):
    """ "may not fit" from batch/input size, anchor latency and the target's memory."""
    profile = read_profile(EXAMPLES[0]) if EXAMPLES else None
    small = shipped.predict(
        "p3.2xlarge", profile, anchor_latency_s=0.01, batch_size=16, input_size=32
    )
    huge = shipped.predict(
        "p3.2xlarge", profile, anchor_latency_s=2.0, batch_size=256, input_size=256
    )
    p_small = small.table.set_index("target")["p_fit"]
    p_huge = huge.table.set_index("target")["p_fit"]
    assert p_huge["g3s.xlarge"] < p_small["g3s.xlarge"]
    assert p_huge["g3s.xlarge"] < 0.5 and any("May not fit" in w for w in huge.warnings())
    assert np.isfinite(p_small).all()
