import json

import numpy as np
import pandas as pd
import pytest

from profet_core.errors import NotFittedError, ProfetValueError
from profet_core.features._profile_features import FAMILIES
from profet_core.models._breakdown import (
    LEARNERS,
    BreakdownRegressor,
    breakdown_change,
    breakdown_pairs,
)
from profet_core.training._cross_validate import cross_validate_breakdown


def _linear_relation(n=200, seed=0):
    """Anchor family times and a target where conv runs 2x faster and the rest 1.25x slower."""
    rng = np.random.default_rng(seed)
    cols = [*FAMILIES, "idle"]
    X = pd.DataFrame(0.0, index=range(n), columns=cols)
    X["conv"] = rng.uniform(1e3, 1e5, n)
    X["activation"] = rng.uniform(1e2, 1e4, n)
    X["idle"] = rng.uniform(1e2, 1e3, n)
    Y = X * 1.25
    Y["conv"] = 0.5 * X["conv"]
    return X, Y


@pytest.fixture(scope="module")
def pairs(synthetic_dataset):
    return breakdown_pairs(synthetic_dataset, "gpu-a", "gpu-b", median=True)


def test_breakdown_pairs_joins_anchor_and_target(synthetic_dataset):
    X, Y, groups, keys = breakdown_pairs(synthetic_dataset, "gpu-a", "gpu-b")
    assert list(X.columns) == [*FAMILIES, "idle"] == list(Y.columns)
    assert len(X) == len(Y) == len(groups) == len(keys) == 5 * 3 * 3 * 3
    assert list(keys.columns) == ["exp", "model", "input_size", "batch_size"]
    # Synthetic gpu-b runs conv ops 0.4x the time of gpu-a.
    np.testing.assert_allclose(Y["conv"] / X["conv"], 0.4, rtol=0.05)
    Xm, _, gm, km = breakdown_pairs(synthetic_dataset, "gpu-a", "gpu-b", median=True)
    assert len(Xm) == 5 * 3 * 3 and set(km["exp"]) == {"median"} and set(gm) == set(groups)


def test_breakdown_pairs_rejects_unknown_instance(synthetic_dataset):
    with pytest.raises(ProfetValueError, match="gpu-z"):
        breakdown_pairs(synthetic_dataset, "gpu-a", "gpu-z")


@pytest.mark.parametrize("learner", LEARNERS, ids=LEARNERS)
def test_state_round_trip_predicts_the_same(pairs, learner):
    X, Y, _, _ = pairs
    model = BreakdownRegressor(learner=learner, n_estimators=10).fit(X, Y)
    meta, arrays = model.to_state()
    json.dumps(meta)
    assert all(isinstance(v, np.ndarray) for v in arrays.values())
    back = BreakdownRegressor.from_state(json.loads(json.dumps(meta)), dict(arrays))
    pred = model.predict(X)
    pd.testing.assert_frame_equal(back.predict(X), pred, check_exact=True)
    assert list(pred.columns) == list(Y.columns)
    assert (pred.to_numpy() >= 0).all()
    assert back.get_params() == model.get_params()


@pytest.mark.parametrize("learner", LEARNERS, ids=LEARNERS)
def test_learns_obvious_relation(learner):
    X, Y = _linear_relation()
    model = BreakdownRegressor(learner=learner, n_estimators=20).fit(X, Y)
    Xt, Yt = _linear_relation(n=30, seed=1)
    pred = model.predict(Xt)
    np.testing.assert_allclose(pred["conv"], Yt["conv"], rtol=0.02)
    np.testing.assert_allclose(pred["activation"], Yt["activation"], rtol=0.02)
    assert (pred["depthwise"] == 0).all()


def test_absolute_mode_learns_relation_too():
    X, Y = _linear_relation()
    model = BreakdownRegressor(learner="linear", relative=False, shares=False).fit(X, Y)
    # log1p(0.5 x) is not exactly linear in log1p(x); close for x >> 1.
    np.testing.assert_allclose(model.predict(X)["conv"], Y["conv"], rtol=1e-3)


def test_forest_matches_sklearn_multi_output(pairs):
    from sklearn.ensemble import RandomForestRegressor

    X, Y, _, _ = pairs
    model = BreakdownRegressor(learner="forest", n_estimators=10, relative=False, shares=False).fit(
        X, Y
    )
    ref = RandomForestRegressor(
        n_estimators=10, max_features=1.0, min_samples_leaf=3, random_state=0
    ).fit(np.log1p(X.to_numpy()), np.log1p(Y.to_numpy()))
    expected = np.maximum(np.expm1(ref.predict(np.log1p(X.to_numpy()))), 0)
    np.testing.assert_allclose(model.predict(X).to_numpy(), expected, rtol=1e-9)


def test_predict_before_fit_raises():
    with pytest.raises(NotFittedError):
        BreakdownRegressor().predict(np.ones((1, len(FAMILIES) + 1)))


def test_unknown_learner_is_rejected(pairs):
    X, Y, _, _ = pairs
    with pytest.raises(ProfetValueError, match="allowed: linear, knn, tree, forest"):
        BreakdownRegressor(learner="svm").fit(X, Y)


def test_predict_checks_family_columns(pairs):
    X, Y, _, _ = pairs
    model = BreakdownRegressor(learner="linear").fit(X, Y)
    with pytest.raises(ProfetValueError, match="lack column"):
        model.predict(X.drop(columns="conv"))
    with pytest.raises(ProfetValueError, match=">= 0"):
        model.predict(X.assign(conv=-1.0))


def test_breakdown_change_columns_and_values():
    anchor = pd.Series({"conv": 100.0, "pool": 10.0, "depthwise": 0.0, "idle": 5.0})
    target = pd.DataFrame([{"conv": 50.0, "pool": 20.0, "depthwise": 0.0, "idle": 0.0}])
    out = breakdown_change(anchor, target)
    assert list(out.columns) == ["family", "anchor_us", "target_us", "speedup"]
    assert list(out["family"]) == ["conv", "pool", "idle"]
    np.testing.assert_allclose(out["speedup"].to_numpy()[:2], [2.0, 0.5])
    assert np.isnan(out["speedup"].iloc[2])
    assert len(breakdown_change(anchor, target, drop_empty=False)) == 4


def test_breakdown_change_needs_every_family():
    with pytest.raises(ProfetValueError, match="lacks families"):
        breakdown_change(pd.Series({"conv": 1.0, "pool": 2.0}), pd.Series({"conv": 1.0}))


def test_cross_validate_breakdown(synthetic_dataset):
    calls = []
    res = cross_validate_breakdown(
        synthetic_dataset,
        learners=("linear", "forest"),
        anchors=["gpu-a"],
        targets=["gpu-b"],
        params={"n_estimators": 10},
        progress=lambda d, t, m: calls.append((d, t)),
    )
    assert calls[-1] == (5, 5)
    assert set(res["learner"]) == {"linear", "forest", "identity", "median-ratio"}
    assert list(res.columns[:3]) == ["anchor", "target", "learner"]
    by = res.set_index("learner")
    assert (by["n"] == 5 * 3 * 3 * 3).all()
    # The synthetic target's conv ops are 2.5x faster: the learners must beat "no change".
    assert by.loc["forest", "family_wape_pct"] < by.loc["identity", "family_wape_pct"] / 3
    assert by.loc["linear", "latency_mape_pct"] < by.loc["identity", "latency_mape_pct"]


def test_cross_validate_rejects_unknown_learner(synthetic_dataset):
    with pytest.raises(ProfetValueError, match="allowed"):
        cross_validate_breakdown(synthetic_dataset, learners=("gbm",))


def test_breakdown_honours_the_profile_step_count():
    # Predict rescaled a profile over N steps to PROFET's 2, the breakdown did not, so
    # a 20-step profile showed 10x the anchor time per family. Both now share one preparation.
    from profet_core import load_artifacts, read_profile

    predictor = load_artifacts()
    two = read_profile("examples/profile_g3s.json").drop(columns=["steps"], errors="ignore")
    ops = [c for c in two.columns if c.startswith(("Host_", "Device_"))]
    twenty = two.copy()
    twenty[ops] = twenty[ops] * 10
    twenty["steps"] = 20
    want = predictor.breakdown("g3s.xlarge", two)
    got = predictor.breakdown("g3s.xlarge", twenty)
    assert not want.empty
    pd.testing.assert_frame_equal(got, want, rtol=1e-9)
    table = predictor.predict("g3s.xlarge", twenty).table["batch_latency_ms"]
    np.testing.assert_allclose(
        table, predictor.predict("g3s.xlarge", two).table["batch_latency_ms"]
    )
