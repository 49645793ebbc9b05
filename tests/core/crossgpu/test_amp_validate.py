"""Validation tables of the AMP gain and N-GPU scaling models: leave-one-GPU-out and
leave-one-source-out MAPE against their baselines, with 80% interval coverage, as ``train()``
writes them for the Model accuracy page and ``bench/claims/amp_multigpu.py`` prints them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.configurations._amp import amp_logo, amp_state_from
from profet_core.crossgpu.configurations._dataparallel import dp_logo, scaling_rows
from profet_core.crossgpu.configurations._validate import (
    AMP_FILE,
    SCALING_FILE,
    amp_dp_reports,
    amp_dp_validation,
    group_coverage,
)
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._model import PRIOR
from profet_core.crossgpu.spec._published import load_published
from profet_core.inputs._gpu_specs import load_specs

from ._utils import PUBLISHED_MODELS, published_medians


@pytest.fixture(scope="module")
def medians():
    return published_medians()


@pytest.fixture(scope="module")
def tables(medians):
    return amp_dp_validation(load_published(), gpu_table(load_specs()), medians, PRIOR)


def _ape(pred, true):
    return np.abs(np.asarray(pred, float) / np.asarray(true, float) - 1) * 100


def test_amp_gain_table_per_gpu_source_and_held_out(tables, medians):
    amp = tables[AMP_FILE]
    assert list(amp.columns) == [
        "fold",
        "group",
        "rows",
        "mape_pct",
        "mape_constant_pct",
        "mape_constant_source_pct",
        "mape_tensor_peak_pct",
        "coverage_pct",
    ]
    assert list(dict.fromkeys(amp["fold"])) == ["gpu", "source", "held-out"]
    gpus = gpu_table(load_specs())
    _, pairs, shares = amp_state_from(load_published(), gpus, medians, PRIOR)
    oof = amp_logo(pairs, gpus, shares, "catalog_gpu")
    fit = oof[~oof["held_out"]]
    by_gpu = amp[amp["fold"] == "gpu"].set_index("group")
    # every fitted pair once, each GPU left out in turn; the "all" row their mean
    assert by_gpu.loc["all", "rows"] == len(fit) == by_gpu["rows"].drop("all").sum()
    assert by_gpu.loc["all", "mape_pct"] == pytest.approx(_ape(fit["pred"], fit["gain"]).mean())
    a100 = fit[fit["catalog_gpu"] == "NVIDIA A100 SXM4 40GB"]
    assert by_gpu.loc["NVIDIA A100 SXM4 40GB", "mape_tensor_peak_pct"] == pytest.approx(
        _ape(a100["tensor_peak"], a100["gain"]).mean()
    )
    by_source = amp[amp["fold"] == "source"].set_index("group")
    assert set(by_source.index) == {*set(pairs["repo"]), "all"}
    # a left-out source has no pair of its own source for the per-source constant
    assert by_source["mape_constant_source_pct"].isna().all()
    held = amp[amp["fold"] == "held-out"].set_index("group")
    assert set(held.index) == {"inception3", "vgg16"}
    assert held["rows"].sum() == oof["held_out"].sum()
    assert not set(held.index) & set(fit["model"])
    assert amp["coverage_pct"].between(0, 100).all()


def test_scaling_table_per_gpu_source_count_and_held_out(tables):
    sc = tables[SCALING_FILE]
    assert list(dict.fromkeys(sc["fold"])) == ["gpu", "source", "gpu count", "held-out"]
    assert {"mape_pct", "mape_linear_pct", "coverage_pct"} <= set(sc.columns)
    rows = scaling_rows(load_published(), gpu_table(load_specs()))
    fit = rows[~rows["held_out"]]
    counts = sc[sc["fold"] == "gpu count"].set_index("group")
    assert set(counts.index) == {"2", "4", "8", "all"}
    assert counts["rows"].drop("all").sum() == len(fit)
    # linear scaling predicts 1: its error is the published loss of scaling
    assert counts.loc["all", "mape_linear_pct"] == pytest.approx(_ape(1.0, fit["scaling"]).mean())
    oof = dp_logo(rows, "catalog_gpu")
    by_gpu = sc[sc["fold"] == "gpu"].set_index("group")
    f = oof[~oof["held_out"]]
    assert by_gpu.loc["all", "mape_pct"] == pytest.approx(_ape(f["pred"], f["scaling"]).mean())
    assert set(sc.loc[sc["fold"] == "held-out", "group"]) == {"inception3", "vgg16"}


@pytest.mark.parametrize("truth", ["gain", "scaling"], ids=["amp-gain", "gpu-scaling"])
def test_coverage_is_cross_fitted_per_group(truth):
    # Group a's errors are judged by the split-conformal width of group b's errors and the
    # reverse: with 3 rows the ceil(4 * 0.8) = 4th smallest is capped at the largest.
    pred = np.exp([0.1, 0.2, 0.3, 0.01, 0.02, 0.5])
    oof = pd.DataFrame(
        {"g": list("aaabbb"), "pred": pred, truth: np.ones(6), "repo": "r", "held_out": False}
        | {"no_p2p": False, "gpu_count": 2.0}
    )
    cov = group_coverage(oof, "g", truth)
    # a's 0.1..0.3 inside b's width 0.5; b's 0.5 outside a's width 0.3
    assert cov["a"] == pytest.approx(100) and cov["b"] == pytest.approx(200 / 3)
    assert cov["all"] == pytest.approx(500 / 6)


def test_too_little_to_leave_out_gives_no_table(medians):
    gpus = gpu_table(load_specs())
    table = load_published()
    one_gpu = table[table["catalog_gpu"] == "NVIDIA A100 SXM4 40GB"]
    assert amp_dp_validation(one_gpu, gpus, medians, PRIOR) == {}
    # no p3.2xlarge profiles to take the CNNs' op mix from: no AMP table, scaling still judged
    other = medians.assign(instance="g4dn.xlarge")
    assert set(amp_dp_validation(table, gpus, other, PRIOR)) == {SCALING_FILE}


def test_reports_of_a_fitted_model_use_its_specs_and_exponents(tables, medians):
    class Fitted:
        specs_ = load_specs()
        theta_ = PRIOR

    got = amp_dp_reports(Fitted(), medians)
    for name, want in tables.items():
        pd.testing.assert_frame_equal(got[name], want)


@pytest.mark.slow
def test_train_writes_them_checksummed_and_the_loader_reads_them(tmp_path):
    """Four real instances (synthetic profiles of published CNNs): train() writes both tables
    into validation/, the manifest lists them, and load_artifacts gives them back."""
    import json

    from profet_core import load_artifacts, make_dataset, train
    from profet_core.crossgpu import median_table
    from tests.core.crossgpu._utils import make_multi_gpu

    real = {"gpu-a": "p2.xlarge", "gpu-b": "g3s.xlarge", "gpu-c": "g4dn.xlarge"}
    real["gpu-d"] = "p3.2xlarge"
    prof, lat = make_multi_gpu(n_arch=4)
    names = {f"Net{i}": m for i, m in enumerate(PUBLISHED_MODELS)}
    prof, lat = (
        t[t["instance"].isin(real)].assign(
            instance=lambda d: d["instance"].map(real), model=lambda d: d["model"].map(names)
        )
        for t in (prof, lat)
    )
    dataset, specs = make_dataset(prof, lat), load_specs()
    out = train(
        dataset,
        specs[["instance", "gpu"]].assign(usd_per_hour=1.0),  # the sheet holds no price
        tmp_path / "art",
        methods=["hybrid"],
        method_params={"hybrid": {"n_trees_et": 5, "n_trees_gb": 5}},
        specs=specs,
    )
    listed = json.loads((out / "manifest.json").read_text())["files"]
    assert {f"validation/{AMP_FILE}", f"validation/{SCALING_FILE}"} <= set(listed)
    val = load_artifacts(out).validation
    model = load_artifacts(out).cross
    want = amp_dp_reports(model, median_table(dataset))
    for key, name in (("amp_gain", AMP_FILE), ("gpu_scaling", SCALING_FILE)):
        got = val[key]
        np.testing.assert_allclose(got["mape_pct"], want[name]["mape_pct"], rtol=1e-9)
        assert list(got["fold"]) == list(want[name]["fold"])
