import numpy as np
import pandas as pd
import pytest

from profet_core import make_dataset
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.spec._validate import logo_runs, summarize_gpus
from profet_core.errors import ProfetValueError
from tests.core.crossgpu._utils import make_multi_gpu, spec_table


@pytest.fixture(scope="module")
def multi_gpu():
    return make_dataset(*make_multi_gpu())


def _without(dataset, gpu):
    p, lat = dataset.profiles, dataset.latencies
    return make_dataset(p[p["instance"] != gpu], lat[lat["instance"] != gpu])


def _mape(model, dataset, anchor, target):
    pairs = all_pairs(median_table(dataset))
    sub = pairs[(pairs["anchor"] == anchor) & (pairs["target"] == target)]
    ops = dataset.profiles[dataset.profiles["instance"] == anchor].set_index(
        ["model", "input_size", "batch_size"]
    )
    ops = ops.loc[list(zip(sub["model"], sub["input_size"], sub["batch_size"], strict=True))]
    lat, members = model.predict(anchor, target, ops, sub["anchor_latency_s"].to_numpy())
    true = sub["target_latency_s"].to_numpy()
    return (
        100 * np.mean(np.abs(lat / true - 1)),
        100 * np.mean(np.abs(members["fp32-ratio"] / true - 1)),
        members,
    )


@pytest.fixture(scope="module")
def fitted_without_d(multi_gpu):
    return CrossInstanceModel(residual=False).fit(_without(multi_gpu, "gpu-d"), spec_table())


@pytest.mark.parametrize(
    ("anchor", "target"), [("gpu-a", "gpu-d"), ("gpu-d", "gpu-e")], ids=["to-new", "from-new"]
)
def test_recovers_gpu_without_rows(fitted_without_d, multi_gpu, anchor, target):
    model = fitted_without_d
    assert model.basis("gpu-d") == "specs only"
    mape, fp32_mape, _ = _mape(model, multi_gpu, anchor, target)
    assert mape < 4.0
    assert mape < fp32_mape / 2
    # The conv exponent on peak FLOPS moves from the prior 1 toward the true 0.7 (clock, nearly
    # collinear with FLOPS here, shares the rest).
    assert 0.6 < model.theta_[0, 0] < 0.95
    assert ((model.theta_ >= 0) & (model.theta_ <= 1)).all()  # physics bounds hold


def test_state_round_trip_predicts_identically(multi_gpu):
    model = CrossInstanceModel(n_trees=20).fit(_without(multi_gpu, "gpu-d"), spec_table())
    model = model.with_intervals({"specs only": 0.3, "measured": 0.1})
    meta, arrays = model.to_state()
    assert all(isinstance(v, np.ndarray) and v.dtype != object for v in arrays.values())
    back = CrossInstanceModel.from_state(meta, arrays)
    ops = multi_gpu.profiles[multi_gpu.profiles["instance"] == "gpu-a"]
    a, ma = model.predict("gpu-a", "gpu-d", ops, 0.01)
    b, mb = back.predict("gpu-a", "gpu-d", ops, 0.01)
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(ma["physical"], mb["physical"])
    assert back.interval(a, "specs only")[0] == pytest.approx(a * np.exp(-0.3))


def test_calibration_shrinks_toward_specs_and_says_so(multi_gpu):
    # Make gpu-d 30% slower than its specs say: few-shot calibration must find most of it.
    p, lat = make_multi_gpu()
    slow = lat["instance"] == "gpu-d"
    lat.loc[slow, "batch_latency_s"] *= 1.3
    dev = [c for c in p.columns if c.startswith("Device_")]
    p.loc[p["instance"] == "gpu-d", dev] *= 1.3
    data = make_dataset(p, lat)
    model = CrossInstanceModel(residual=False).fit(_without(data, "gpu-d"), spec_table())
    few = make_dataset(p[p["model"] == "Net0"], lat[lat["model"] == "Net0"])
    cal = model.calibrate("gpu-d", few)
    assert cal.basis("gpu-d") == "calibrated (6 runs)"
    assert model.basis("gpu-d") == "specs only"  # the original is untouched
    assert cal.pair_basis("gpu-a", "gpu-d").startswith("calibrated")
    assert 0.1 < cal.calibration_["gpu-d"]["delta"] < np.log(1.3) + 0.05
    before = _mape(model, data, "gpu-a", "gpu-d")[0]
    after = _mape(cal, data, "gpu-a", "gpu-d")[0]
    assert after < before / 2


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m, d: m.predict("gpu-a", "nope", d.profiles.head(2)), "not in the spec catalog"),
        (lambda m, d: m.calibrate("gpu-a", d), "already has training rows"),
        (lambda m, d: m.with_intervals({"guess": 0.1}), "unknown basis"),
        (lambda m, d: m.interval([1.0], "specs only"), "no interval calibrated"),
        (lambda m, d: m.with_specs(spec_table().tail(2)), "lacks the trained"),
    ],
    ids=["unknown-target", "calibrate-measured", "bad-basis", "no-interval", "specs-drop"],
)
def test_bad_use_raises(fitted_without_d, multi_gpu, call, match):
    with pytest.raises(ProfetValueError, match=match):
        call(fitted_without_d, multi_gpu)


def test_logo_validation_runs_and_beats_fp32_ratio(multi_gpu):
    med = median_table(multi_gpu)
    oof = logo_runs(
        med, spec_table(), ks=(0, 1), gpus=["gpu-d"], archs=["Net2", "Net5"], params={"n_trees": 20}
    )
    assert set(oof["direction"]) == {"to", "from"}
    summary = summarize_gpus(oof)
    spec_only = summary[(summary["k"] == 0) & (summary["left_out"] == "all")].iloc[0]
    assert spec_only["mape_cross"] < spec_only["mape_fp32-ratio"]
    assert spec_only["r2_cross"] > 0.9
    assert isinstance(summary, pd.DataFrame)
