import json
import shutil

import numpy as np
import pandas as pd
import pytest

from profet_core import ArtifactError, ProfetValueError, load_artifacts, train
from profet_core.models._methods import METHODS
from tests._utils import SPEED, make_synthetic, synthetic_catalog


@pytest.fixture(scope="module")
def predictor(trained):
    return load_artifacts(trained)


@pytest.fixture(scope="module")
def predictor_all(trained_all):
    """Every method, the reference (its DNN trained with TensorFlow) included."""
    return load_artifacts(trained_all)


def test_artifacts_hold_no_pickles_and_a_complete_manifest(trained):
    manifest = json.loads((trained / "manifest.json").read_text())
    listed = set(manifest["files"])
    on_disk = {str(p.relative_to(trained)) for p in trained.rglob("*") if p.is_file()} - {
        "manifest.json"
    }
    assert listed == on_disk
    assert not any(f.endswith((".pkl", ".pickle", ".joblib")) for f in listed)
    with np.load(trained / "arrays.npz", allow_pickle=False) as npz:
        assert all(npz[k].dtype != object for k in npz.files)
    assert manifest["data_fingerprint"] and manifest["versions"]["numpy"]


def test_every_instance_is_anchor_and_target(predictor):
    assert predictor.instances == list(SPEED)
    assert predictor.methods == ["hybrid"]  # the methods trained, no more
    assert predictor.targets("gpu-b") == ["gpu-a", "gpu-c"]


def test_every_method_trained_is_there(predictor_all):
    assert set(predictor_all.methods) == set(METHODS)
    assert predictor_all.instances == list(SPEED)


@pytest.mark.parametrize(
    "method",
    # the reference's artifacts train its DNN (TensorFlow): the full run's
    [pytest.param(m, id=m, marks=[pytest.mark.slow] if m != "hybrid" else []) for m in METHODS],
)
def test_predictions_are_accurate_on_synthetic_data(request, synthetic_dataset, method):
    # the reference's DNN needs TensorFlow to train: its artifacts skip without it
    predictor = request.getfixturevalue("predictor" if method == "hybrid" else "predictor_all")
    prof = synthetic_dataset.profiles
    rows = prof[(prof["instance"] == "gpu-a") & (prof["exp"] == "exp00")].reset_index(drop=True)
    lat = synthetic_dataset.latencies.set_index(
        ["exp", "instance", "model", "input_size", "batch_size"]
    )
    truth = lat.loc[
        [(r.exp, "gpu-b", r.model, r.input_size, r.batch_size) for r in rows.itertuples()],
        "batch_latency_s",
    ].to_numpy()
    anchor = lat.loc[
        [(r.exp, "gpu-a", r.model, r.input_size, r.batch_size) for r in rows.itertuples()],
        "batch_latency_s",
    ].to_numpy()
    res = predictor.predict("gpu-a", rows, anchor_latency_s=anchor, method=method)
    got = (
        res.table[res.table["target"] == "gpu-b"].sort_values("row")["batch_latency_ms"].to_numpy()
        / 1000
    )
    assert np.mean(np.abs(got - truth) / truth) < 0.15
    if method == "hybrid":  # the fixture calibrates intervals for the default method only
        assert (res.table["low_ms"] <= res.table["batch_latency_ms"]).all()
        assert (res.table["high_ms"] >= res.table["batch_latency_ms"]).all()
    else:
        assert res.table[["low_ms", "high_ms"]].isna().all().all()


def test_prediction_table_shape_and_members(predictor, synthetic_dataset):
    one = synthetic_dataset.profiles.iloc[[0]][synthetic_dataset.ops]
    res = predictor.predict("gpu-a", one)
    t = res.table
    assert list(t["target"]) == ["gpu-b", "gpu-c"]
    assert {
        "row",
        "batch_latency_ms",
        "low_ms",
        "high_ms",
        "usd_per_hour",
        "ensemble",
        "gpu",
    } <= set(t.columns)
    # Prices come from offerings only: no offering rents the synthetic GPUs, so the
    # artifacts' own prices (2.0, 0.5 USD/h) are not shown.
    assert t["usd_per_hour"].isna().all() and t["offering"].tolist() == ["", ""]
    with_lat = predictor.predict("gpu-a", one, anchor_latency_s=0.01)
    assert with_lat.table["ensemble"].iloc[0] != t["ensemble"].iloc[0]


def test_latency_column_in_table_is_used_per_row(predictor, synthetic_dataset):
    two = synthetic_dataset.profiles.iloc[[0, 1]][synthetic_dataset.ops].reset_index(drop=True)
    lat = predictor.predict("gpu-a", two, anchor_latency_s=[0.01, np.nan]).table
    col = predictor.predict("gpu-a", two.assign(batch_latency_s=[0.01, np.nan])).table
    pd.testing.assert_frame_equal(lat, col)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"anchor": "p9.huge"}, "unknown anchor instance 'p9.huge'"),
        ({"method": "magic"}, "unknown method 'magic'"),
        ({"anchor_latency_s": -1.0}, "anchor latency -1 s is not allowed"),
        ({"profiles": pd.DataFrame({"x": [1]})}, "Host_<Op>/Device_<Op>"),
    ],
    ids=["unknown-anchor", "unknown-method", "negative-latency", "no-op-columns"],
)
def test_predict_rejects_bad_input(predictor, synthetic_dataset, kwargs, match):
    args = {
        "anchor": "gpu-a",
        "profiles": synthetic_dataset.profiles.iloc[[0]][synthetic_dataset.ops],
    }
    args.update(kwargs)
    with pytest.raises(ProfetValueError, match=match):
        predictor.predict(**args)


def test_the_default_method_uses_a_new_op_and_says_nothing(predictor):
    base = {"Device_Conv2D": 500.0, "Device_Relu": 200.0}
    # 15% of the device time: warned about, under the 20% refused as unknown.
    novel = pd.DataFrame([{**base, "Device_TotallyNovelKernel": 125.0}])
    # The default method puts every op into a family: it uses the new op (the prediction moves)
    # and must not claim to have left it out.
    res = predictor.predict("gpu-a", novel)
    plain = predictor.predict("gpu-a", pd.DataFrame([base]))
    assert res.ignored_ops == ()
    assert not any("left out" in w for w in res.warnings())
    assert not np.allclose(res.table["batch_latency_ms"], plain.table["batch_latency_ms"])


def test_the_reference_reports_the_ops_it_left_out(predictor_all):
    novel = pd.DataFrame([{"Device_Conv2D": 500.0, "Device_Relu": 200.0}])
    novel["Device_TotallyNovelKernel"] = 125.0
    # The reference clusters op names: an op far from every cluster is left out, and said so.
    ref = predictor_all.predict("gpu-a", novel, method="profet")
    assert ref.ignored_ops == ("Device_TotallyNovelKernel",)
    assert any("'Device_TotallyNovelKernel'" in w for w in ref.warnings())


def test_scale(predictor):
    lo, hi = predictor.scaler("gpu-a", "batch").size_range_
    assert (lo, hi) == (16, 64)
    np.testing.assert_allclose(
        predictor.scale("gpu-a", "batch", {lo: 10.0, hi: 40.0}, [lo, hi]), [10.0, 40.0]
    )
    mid = float(predictor.scale("gpu-a", "batch", {16: 10.0, 64: 40.0}, 32))
    assert 10.0 < mid < 40.0
    with pytest.raises(ProfetValueError, match="outside the trained batch range 16..64"):
        predictor.scale("gpu-a", "batch", {16: 10.0, 64: 40.0}, 512)
    with pytest.raises(ProfetValueError, match="latency at batch size 16 is -1"):
        predictor.scale("gpu-a", "batch", {16: -1.0, 64: 40.0}, 32)
    with pytest.raises(ProfetValueError, match="two or more batch sizes"):
        predictor.scale("gpu-a", "batch", {16: 10.0}, 32)
    with pytest.raises(ProfetValueError, match="measured batch size 8 is outside"):
        predictor.scale("gpu-a", "batch", {8: 10.0, 64: 40.0}, 32)


@pytest.mark.parametrize(("by", "size"), [("batch", 32), ("input", 64)], ids=["batch", "input"])
def test_default_scaler_is_linear_in_the_work(predictor, by, size):
    # Batch: work grows with the batch size; input: with the pixel count (side squared).
    lo, hi = predictor.scaler("gpu-a", by).size_range_
    work = (lambda s: s) if by == "batch" else (lambda s: s**2)
    latency = lambda s: 5.0 + 0.01 * work(s)  # noqa: E731
    got = float(predictor.scale("gpu-a", by, {lo: latency(lo), hi: latency(hi)}, size))
    assert got == pytest.approx(latency(size), rel=1e-9)


def test_unusual_profile_has_higher_novelty_and_a_wider_interval(predictor, synthetic_dataset):
    prof = synthetic_dataset.profiles
    usual = (
        prof[prof["instance"] == "gpu-a"].iloc[[20]][synthetic_dataset.ops].reset_index(drop=True)
    )
    odd = usual.copy()
    # Nearly all device time in pooling: no synthetic CNN has such an op mix.
    odd["Device_MaxPool"] *= 200
    t = predictor.predict("gpu-a", pd.concat([usual, odd], ignore_index=True)).table
    b = t[t["target"] == "gpu-b"].set_index("row")
    assert b.loc[1, "novelty"] > 2 * b.loc[0, "novelty"]
    width = (b["high_ms"] - b["low_ms"]) / b["batch_latency_ms"]
    assert width.loc[1] > width.loc[0]
    band = predictor.novelty_band(b.loc[1, "novelty"], False)
    assert band is not None and 0 <= band["share_pct"] <= 100 and band["mape_pct"] >= 0
    assert predictor.novelty_band(b.loc[1, "novelty"], False, method="profet") is None


def test_examples_and_validation_are_shipped(predictor):
    ex = predictor.examples["gpu-a"]
    assert ex["batch_latency_s"] > 0 and ex["profile"]
    assert {"metrics", "noise", "scalers", "per_architecture", "predictions", "novelty"} <= set(
        predictor.validation
    )
    cov = predictor.intervals["coverage"]
    assert ((cov >= 0) & (cov <= 1)).all()


def _copy(trained, tmp_path):
    dst = tmp_path / "art"
    shutil.copytree(trained, dst)
    return dst


def test_tampered_artifact_is_refused(trained, tmp_path):
    art = _copy(trained, tmp_path)
    with open(art / "prices.csv", "a") as f:
        f.write("evil,x,0\n")
    with pytest.raises(ArtifactError, match="'prices.csv' does not match its sha256"):
        load_artifacts(art)


def test_artifacts_of_the_old_layout_still_load(trained, tmp_path):
    # Older artifacts wrote the prices as instances.csv: such a folder still loads.
    art = _copy(trained, tmp_path)
    (art / "prices.csv").rename(art / "instances.csv")
    manifest = json.loads((art / "manifest.json").read_text())
    manifest["files"]["instances.csv"] = manifest["files"].pop("prices.csv")
    (art / "manifest.json").write_text(json.dumps(manifest))
    old = load_artifacts(art)
    pd.testing.assert_frame_equal(old.catalog, load_artifacts(trained).catalog)
    del manifest["files"]["instances.csv"]
    (art / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match=r"manifest does not list \['prices.csv'\]"):
        load_artifacts(art)


def test_missing_artifacts(tmp_path, trained):
    with pytest.raises(ArtifactError, match="manifest.json missing"):
        load_artifacts(tmp_path)
    art = _copy(trained, tmp_path)
    (art / "arrays.npz").unlink()
    with pytest.raises(ArtifactError, match="'arrays.npz' .* is missing"):
        load_artifacts(art)


@pytest.mark.slow  # about 5 s or more
def test_failed_training_leaves_existing_artifacts_untouched(trained, tmp_path):
    art = _copy(trained, tmp_path)
    before = (art / "manifest.json").read_bytes()
    prof, lat = make_synthetic(n_arch=2)
    import profet_core.training._train as train_module
    from profet_core import make_dataset

    def fail(*args, **kwargs):
        raise OSError("disk full while writing the manifest")

    # Fails after every model was fitted and written to the temporary folder.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(train_module, "write_manifest", fail)
        with pytest.raises(OSError, match="disk full"):
            train(
                make_dataset(prof, lat),
                synthetic_catalog(),
                art,
                methods=["hybrid"],
                intervals=False,
            )
    assert (art / "manifest.json").read_bytes() == before
    assert not [p for p in art.parent.iterdir() if p.name.startswith(".profet-train-")]
    assert load_artifacts(art).instances == list(SPEED)


def test_breakdown_per_op_family(predictor, synthetic_dataset):
    prof = synthetic_dataset.profiles
    row = prof[prof["instance"] == "gpu-a"].iloc[[0]][synthetic_dataset.ops]
    b = predictor.breakdown("gpu-a", row)
    assert set(b["target"]) == {"gpu-b", "gpu-c"}
    conv = b[(b["family"] == "conv")].set_index("target")["speedup"]
    # gpu-b runs conv ops 2.5x faster than gpu-a, gpu-c 1.5x slower (see tests/_utils.py SPEED).
    assert conv["gpu-b"] == pytest.approx(2.5, rel=0.15)
    assert conv["gpu-c"] == pytest.approx(1 / 1.5, rel=0.15)
    assert "per-op:forest" in set(predictor.validation["metrics"]["estimator"])


def test_member_spread_and_normalised_intervals():
    from profet_core.models._intervals import interval_quantiles, member_spread

    m = np.array([[1.0, 1.0, 1.0], [1.0, np.e, np.nan], [2.0, np.nan, np.nan]])
    np.testing.assert_allclose(member_spread(m), [0.0, 0.5, np.nan])
    # Rows whose members disagree more get proportionally wider intervals.
    rng = np.random.default_rng(0)
    rows = []
    for i in range(400):
        s = rng.uniform(0.01, 0.3)
        truth = 1.0
        pred = truth * np.exp(rng.normal(scale=s))
        key = {
            "anchor": "a",
            "target": "b",
            "architecture": f"n{i % 8}",
            "exp": "e",
            "input_size": i,
            "batch_size": 1,
            "with_latency": True,
            "measured_s": truth,
        }
        rows.append({**key, "estimator": "m", "predicted_s": pred})
        rows.append({**key, "estimator": "m:x", "predicted_s": pred * np.exp(s)})
        rows.append({**key, "estimator": "m:y", "predicted_s": pred * np.exp(-s)})
    iv = interval_quantiles(pd.DataFrame(rows)).set_index("estimator")
    assert np.isfinite(iv.loc["m", "eps"]) and np.isnan(iv.loc["m:x", "eps"])
    assert 0.7 <= iv.loc["m", "coverage"] <= 0.9
