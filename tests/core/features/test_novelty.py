"""Novelty of a profile (distance from the training profiles) and novelty-widened intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetValueError
from profet_core.features._profile_features import ProfileNovelty
from profet_core.models._intervals import interval_quantiles


def test_distance_is_zero_on_training_rows_and_grows_with_distance():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    nov = ProfileNovelty(n_neighbors=1).fit(X)
    d = nov.distance(np.vstack([X, [[0.5, 0.5]], [[2.0, 2.0]]]))
    np.testing.assert_allclose(d[:4], 0.0, atol=1e-6)
    # Features have std 0.5: (0.5, 0.5) is one scale from each corner in both, (2, 2) two.
    assert d[4] == pytest.approx(np.sqrt(2), rel=1e-6)
    assert d[5] == pytest.approx(2 * np.sqrt(2), rel=1e-6)


def test_a_feature_constant_in_training_is_floored_and_clipped():
    # No training row uses feature 1 (like an op family no training CNN has).
    X = np.column_stack([np.arange(10.0), np.zeros(10)])
    nov = ProfileNovelty(n_neighbors=1, scale_floor=0.05, clip=5.0).fit(X)
    small, huge = nov.distance(np.array([[3.0, 0.1], [3.0, 1e6]]))
    assert small == pytest.approx(0.1 / 0.05)
    assert huge == pytest.approx(5.0)


def test_state_round_trip_and_bad_input():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    nov = ProfileNovelty().fit(X)
    twin = ProfileNovelty.from_state(*nov.to_state())
    Q = rng.normal(size=(5, 4)) * 3
    np.testing.assert_allclose(twin.distance(Q), nov.distance(Q))
    with pytest.raises(ProfetValueError, match="finite 2-D feature table"):
        ProfileNovelty().fit(np.array([[1.0, np.nan]]))


def _oof(with_novelty: bool, seed: int = 0) -> pd.DataFrame:
    """Out-of-fold rows whose error scale grows with novelty as the intervals assume
    (``1 + n / median(n)``); members disagree equally everywhere."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in range(10):
        novelty = 1.0 + a
        for i in range(60):
            pred = np.exp(rng.normal(scale=0.05 * (1 + novelty / 5.5)))
            key = {
                "anchor": "a",
                "target": "b",
                "architecture": f"n{a}",
                "exp": "e",
                "input_size": i,
                "batch_size": 1,
                "with_latency": True,
                "measured_s": 1.0,
            }
            rows.append(
                {
                    **key,
                    "estimator": "m",
                    "predicted_s": pred,
                    "novelty": novelty if with_novelty else np.nan,
                }
            )
            rows.append({**key, "estimator": "m:x", "predicted_s": pred * 1.05, "novelty": np.nan})
            rows.append({**key, "estimator": "m:y", "predicted_s": pred / 1.05, "novelty": np.nan})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("with_novelty", [True, False], ids=["novelty", "no-novelty"])
def test_novelty_widens_intervals_where_errors_are_larger(with_novelty):
    oof = _oof(with_novelty)
    iv = interval_quantiles(oof).set_index("estimator").loc["m"]
    assert np.isfinite(iv["novelty_ref"]) == with_novelty
    # Per-architecture coverage, each held out from the calibration.
    m = oof[oof["estimator"] == "m"].reset_index(drop=True)
    r = np.log(m["measured_s"] / m["predicted_s"]).to_numpy()
    cover = []
    for a, g in m.groupby("architecture"):
        cal = interval_quantiles(oof[oof["architecture"] != a]).set_index("estimator").loc["m"]
        scale = (0.05 + cal["eps"]) * (
            (1 + g["novelty"] / cal["novelty_ref"]) if with_novelty else 1
        )
        inside = (r[g.index] >= cal["q_lo"] * scale) & (r[g.index] <= cal["q_hi"] * scale)
        cover.append(inside.mean())
    if with_novelty:
        # Scaled by novelty, every architecture is covered about equally (nominal 80%).
        assert 0.7 <= min(cover) and max(cover) <= 0.95
    else:
        # One width for all: usual architectures over-covered, the most unusual under-covered.
        assert cover[0] > 0.9 and min(cover[-3:]) < 0.7


def _fresh_fingerprint(nov: ProfileNovelty) -> str:
    """The digest computed afresh (no kept value): parameters and fitted arrays."""
    import copy

    twin = copy.copy(nov)
    vars(twin).pop("_fingerprint", None)
    return twin.fingerprint()


def test_fingerprint_follows_the_parameters_and_a_refit():
    """The digest kept between predictions is the model's current one: another parameter
    value or a refit (new arrays) gives a new digest, equal to one computed afresh."""
    rng = np.random.default_rng(3)
    nov = ProfileNovelty(n_neighbors=2).fit(rng.normal(size=(12, 3)))
    first = nov.fingerprint()
    assert nov.fingerprint() == first == _fresh_fingerprint(nov)
    nov.set_params(n_neighbors=3)
    assert nov.fingerprint() != first
    assert nov.fingerprint() == _fresh_fingerprint(nov)
    before = nov.fingerprint()
    nov.fit(rng.normal(size=(12, 3)))
    assert nov.fingerprint() != before
    assert nov.fingerprint() == _fresh_fingerprint(nov)
