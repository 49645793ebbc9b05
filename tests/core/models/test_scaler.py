import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetValueError
from profet_core.models._curve_scaler import CurveScaler, fit_scaler, scaling_curves


def _latencies(shape):
    rows = []
    for m, (a, b) in enumerate([(5.0, 0.1), (20.0, 0.5), (1.0, 2.0)]):
        for bs in (16, 32, 64, 128, 256):
            rows.append(
                {
                    "exp": "e",
                    "instance": "g",
                    "model": f"m{m}",
                    "input_size": 32,
                    "batch_size": bs,
                    "batch_latency_s": a + b * shape(bs),
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("through_ends", [False, True], ids=["profet-poly2", "through-ends"])
def test_recovers_a_quadratic_curve(through_ends):
    lat = _latencies(lambda n: n + 0.002 * n**2)
    curves = scaling_curves(lat, "batch")
    s = fit_scaler(curves, (16, 256), degree=2, through_ends=through_ends)
    truth = lat[lat["model"] == "m1"].set_index("batch_size")["batch_latency_s"]
    pred = s.predict(truth[16], truth[256], [32, 64, 128])
    np.testing.assert_allclose(pred, truth[[32, 64, 128]].to_numpy(), rtol=1e-6)


def test_ends_are_reproduced_and_other_end_pairs_work():
    lat = _latencies(lambda n: n)
    s = fit_scaler(scaling_curves(lat, "batch"), (16, 256), degree=2, through_ends=True)
    np.testing.assert_allclose(s.predict(10.0, 50.0, [16, 256]), [10.0, 50.0])
    # Linear curve: from the latencies at 32 and 128, 64 lies a third of the way.
    np.testing.assert_allclose(s.predict(10.0, 40.0, 64, size_a=32, size_b=128), 20.0)


def test_pixel_count_normalisation():
    s = CurveScaler(degree=1, through_ends=True, size_power=2.0).fit(
        [32, 256], [0.0, 1.0], (32, 256)
    )
    # Linear in pixel count: 128 px is (128^2 - 32^2) / (256^2 - 32^2) of the way.
    expected = (128**2 - 32**2) / (256**2 - 32**2)
    np.testing.assert_allclose(s.curve(128), expected)


def test_unknown_dimension():
    with pytest.raises(ProfetValueError, match="scale by 'depth'"):
        scaling_curves(_latencies(lambda n: n), "depth")


def test_curves_missing_an_end_are_left_out():
    lat = _latencies(lambda n: n)
    lat = lat[~((lat["model"] == "m0") & (lat["batch_size"] == 256))]
    curves = scaling_curves(lat, "batch")
    assert sorted(curves["model"].unique()) == ["m1", "m2"]
    with pytest.raises(ProfetValueError, match="no complete latency curves"):
        fit_scaler(curves.iloc[:0], (16, 256))


def test_ratio_aware_shape_reproduces_given_points_on_a_sub_range():
    # Two families of curves: flat-then-linear (small ratio) and linear (large ratio).
    rows = []
    for m, (a, b) in enumerate([(50.0, 0.01), (1.0, 1.0), (40.0, 0.02), (2.0, 1.0)]):
        for bs in (16, 32, 64, 128, 256):
            lat = a + b * bs if m % 2 else a + b * max(bs - 64, 0) ** 2
            rows.append(
                {
                    "exp": "e",
                    "instance": "g",
                    "model": f"m{m}",
                    "input_size": 32,
                    "batch_size": bs,
                    "batch_latency_s": lat,
                }
            )
    curves = scaling_curves(pd.DataFrame(rows), "batch")
    s = fit_scaler(curves, (16, 256), degree=3, through_ends=True)
    np.testing.assert_allclose(s.predict(5.0, 9.0, [32, 128], size_a=32, size_b=128), [5.0, 9.0])
    np.testing.assert_allclose(s.curve([16, 256]), [0.0, 1.0], atol=1e-12)


def test_predict_points_runs_through_every_given_point():
    s = CurveScaler(degree=1, through_ends=True).fit([16, 256], [0.0, 1.0], (16, 256))
    # A kink at 64 that two ends cannot see: flat 10 ms up to 64, then +1 ms per image.
    truth = {16: 10.0, 64: 10.0, 256: 202.0}
    got = s.predict_points(list(truth), list(truth.values()), [16, 32, 64, 128, 256])
    np.testing.assert_allclose(got, [10.0, 10.0, 10.0, 74.0, 202.0])
    # Vectorised over curves, points in any order: the same as one curve at a time.
    sizes = [256, 16, 64]
    lats = [np.array([202.0, 100.0]), np.array([10.0, 20.0]), np.array([10.0, 40.0])]
    both = s.predict_points(sizes, lats, np.array([32.0, 32.0]))
    np.testing.assert_allclose(both, [10.0, 20.0 + 20.0 * 16 / 48])


@pytest.mark.parametrize(
    ("sizes", "lats", "match"),
    [
        ([16], [1.0], "two or more distinct sizes"),
        ([16, 16], [1.0, 2.0], "two or more distinct sizes"),
        ([16, 64, 256], [1.0, 2.0], "2 latencies for 3 sizes"),
    ],
    ids=["one-size", "duplicate-size", "count-mismatch"],
)
def test_predict_points_rejects_bad_points(sizes, lats, match):
    s = CurveScaler(degree=1, through_ends=True).fit([16, 256], [0.0, 1.0], (16, 256))
    with pytest.raises(ProfetValueError, match=match):
        s.predict_points(sizes, lats, 32)


def test_validation_reports_the_gain_of_a_middle_point():
    from profet_core.training._cross_validate import validate_scalers

    # Overhead-bound up to batch 64 (the middle size), then linear: a kink the ends cannot see.
    lat = _latencies(lambda n: max(n, 64))
    linear = {
        "batch": {"degree": 1, "through_ends": True},
        "input": {"degree": 1, "through_ends": True},
    }
    r = validate_scalers(lat, {"linear": linear}).set_index("by").loc["batch"]
    assert r["mape_pct"] > 1.0
    assert r["mape_3pt_pct"] == pytest.approx(0.0, abs=1e-9)
