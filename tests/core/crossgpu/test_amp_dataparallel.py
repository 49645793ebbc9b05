"""The AMP gain and data-parallel models: what they learn from, what they never see."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.configurations import _amp, _dataparallel
from profet_core.crossgpu.configurations._amp import (
    amp_pairs,
    amp_state_from,
    predict_gain,
    step_ratio,
)
from profet_core.crossgpu.configurations._dataparallel import (
    fit_dataparallel,
    scaling_rows,
    step_factor,
)
from profet_core.crossgpu.spec._gpuref import amp_dtype, gpu_table
from profet_core.crossgpu.spec._holdout import learn_amp_dp
from profet_core.crossgpu.spec._model import PRIOR
from profet_core.crossgpu.spec._pairs import FAM_COLS
from profet_core.crossgpu.spec._published import load_published
from profet_core.errors import ProfetValueError
from profet_core.inputs._gpu_specs import load_specs

from ._utils import published_medians


@pytest.fixture(scope="module")
def medians():
    return published_medians()


@pytest.fixture(scope="module")
def model():
    from profet_core.crossgpu import CrossInstanceModel

    m = CrossInstanceModel()
    m._set_specs(load_specs())
    m.theta_ = PRIOR.copy()
    return m


def _spy(monkeypatch, module, name):
    seen = []
    real = getattr(module, name)

    def spy(rows, *args, **kw):
        seen.append(rows.copy())
        return real(rows, *args, **kw)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_held_out_rows_never_reach_a_fit(monkeypatch, model, medians):
    amp_seen = _spy(monkeypatch, _amp, "fit_amp")
    dp_seen = _spy(monkeypatch, _dataparallel, "fit_dataparallel")
    table = load_published()
    amp, dp = learn_amp_dp(model, table, medians)
    assert amp is not None and dp is not None
    assert len(amp_seen) > 5 and len(dp_seen) > 5  # the full fits and every fold
    for rows in amp_seen + dp_seen:
        assert not rows["held_out"].any()
        names = rows["model"].str.lower().str.replace(r"[\s_-]", "", regex=True)
        assert not names.isin(["vgg16", "inception3"]).any()
    # The held-out rows' numbers change nothing that is learned.
    moved = table.copy()
    moved.loc[moved["model"].isin(["vgg16", "inception3"]), "images_per_s"] *= 7.0
    amp2, dp2 = learn_amp_dp(model, moved, medians)
    assert amp2 == amp and dp2 == dp


def test_fits_refuse_held_out_rows(model, medians):
    gpus = gpu_table(load_specs())
    pairs = amp_pairs(load_published())
    assert pairs["held_out"].any()
    with pytest.raises(ProfetValueError, match="held-out"):
        _amp.fit_amp(pairs, gpus, np.ones((len(pairs), len(FAM_COLS))) / len(FAM_COLS))
    rows = scaling_rows(load_published(), gpus)
    with pytest.raises(ProfetValueError, match="held-out"):
        fit_dataparallel(rows)


def test_amp_pairs_are_one_gpu_same_source_same_gpu():
    pairs = amp_pairs(load_published())
    assert len(pairs) > 40
    assert (pairs["source"].str.split("@").str[0] == pairs["repo"]).all()
    assert (pairs["baseline_source"].str.split("@").str[0] == pairs["repo"]).all()
    # Lambda's TF tables: V100 32GB ResNet-50 1276 FP16 vs 432 FP32 images/s
    v100 = pairs[(pairs["gpu_published"] == "V100 32GB") & (pairs["model"] == "resnet50")]
    assert v100["gain"].iloc[0] == pytest.approx(1276 / 432)


def test_amp_gain_grows_with_the_tensor_rate_and_never_below_one(model, medians):
    gpus = gpu_table(load_specs())
    state, _, _ = amp_state_from(load_published(), gpus, medians, model.theta_)
    shares = np.tile(np.array([[0.6, 0.05, 0, 0.1, 0.03, 0.08, 0.06, 0.04, 0.02, 0.02]]), (3, 1))
    gains = predict_gain(
        state, gpus, ["NVIDIA V100 SXM2 16GB", "NVIDIA T4", "NVIDIA K80 (one GK210)"], shares
    )
    assert gains[0] > 1.5 and gains[1] > 1.2
    assert gains[2] == 1.0  # no tensor cores
    assert step_ratio(state, [0.0], [0.0], shares[:1])[0] == 1.0


@pytest.mark.parametrize(
    ("gpu", "dtype"),
    [
        ("NVIDIA V100 SXM2 16GB", "fp16"),
        ("NVIDIA T4", "fp16"),
        ("NVIDIA A100 SXM4 40GB", "bf16 or fp16"),
        ("NVIDIA K80 (one GK210)", "fp32"),
        ("NVIDIA Tesla M60 (one GM204)", "fp32"),
    ],
    ids=["volta", "turing", "ampere", "kepler", "maxwell"],
)
def test_amp_dtype_per_generation(gpu, dtype):
    assert amp_dtype(gpu_table(load_specs()).loc[gpu]) == dtype


def test_scaling_slows_with_gpus_gradients_and_slow_links():
    st = {"k0": 0.03, "k1": 3.0}
    f = step_factor(
        st, [0.1, 0.1, 0.1, 0.1], [1, 8, 8, 8], [25e6, 25e6, 138e6, 25e6], [300, 300, 300, 12]
    )
    assert f[0] == 1.0
    assert f[1] < f[2] and f[1] < f[3]


def test_artifacts_without_the_new_spec_columns_still_get_them_by_gpu():
    old = load_specs().drop(
        columns=["fp16_tensor_tflops", "bf16", "interconnect", "interconnect_gbs"]
    )
    g = gpu_table(old)
    assert g.loc["NVIDIA V100 SXM2 16GB", "fp16_tensor_tflops"] == 125
    assert g.loc["NVIDIA A100 SXM4 40GB", "interconnect"] == "nvswitch"


def test_a_gpu_the_sheets_lack_gets_no_made_up_gain():
    specs = load_specs().drop(columns=["fp16_tensor_tflops", "interconnect_gbs"])
    specs.loc[0, "gpu"] = "Some New GPU"
    g = gpu_table(specs)
    assert amp_dtype(g.loc["Some New GPU"]) == "unknown"
    assert np.isnan(g.loc["Some New GPU", "interconnect_gbs"])


@pytest.mark.parametrize(
    ("err", "width"),
    [([0.1, 0.2, 0.3, 0.4], 0.4), (list(np.arange(1, 10) / 10), 0.8)],
    ids=["four-rows", "nine-rows"],
)
def test_the_amp_interval_is_split_conformal(err, width):
    # the ceil((n+1) 0.8)-th smallest error, never the plain 80% quantile (which covers less)
    assert _amp.conformal_half_width(err) == pytest.approx(width)
    assert _amp.conformal_half_width(err) >= np.quantile(err, 0.8)


def test_conformal_half_width_refuses_no_errors():
    with pytest.raises(ProfetValueError, match="no out-of-fold errors"):
        _amp.conformal_half_width([])


def _oof(spread: dict) -> pd.DataFrame:
    rows = []
    for repo, s in spread.items():
        for g in range(4):
            for k in range(4):
                err = s * (k + 1) / 4
                rows.append(
                    {"repo": repo, "catalog_gpu": f"gpu{g}", "held_out": False}
                    | {"gain": 2.0, "pred": 2.0 * np.exp(err)}
                )
    return pd.DataFrame(rows)


def test_each_source_sets_its_own_interval_where_it_has_the_rows():
    oof = _oof({"tight": 0.02, "wide": 0.4})
    pooled, per = _amp.amp_half_widths(oof)
    assert per["tight"] == pytest.approx(0.02) and per["wide"] == pytest.approx(0.4)
    assert pooled == pytest.approx(0.3)  # the pooled width would miss every 0.4 wide row
    inside = _amp.crossfit_amp_coverage(oof)
    assert inside[oof["repo"] == "tight"].mean() == 1.0
    assert inside[oof["repo"] == "wide"].mean() == 1.0
    few = _oof({"tight": 0.02}).head(6).assign(catalog_gpu=["a", "a", "b", "b", "c", "c"])
    assert _amp.amp_half_widths(few)[1] == {}  # too few rows: all sources' width


@pytest.mark.parametrize("sheet", ["catalog", "reference"], ids=["catalog", "reference"])
def test_geforce_without_peer_to_peer_gets_half_its_link_whichever_sheet(sheet):
    from profet_core.crossgpu.configurations._dataparallel import link_gbs

    g = gpu_table(load_specs() if sheet == "catalog" else None)
    gbs = link_gbs(g.loc[["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090"]])
    # PCIe gen4 x16 (24 GB/s), each byte through host memory crossing it twice
    assert gbs.tolist() == [-12.0, -12.0]
    assert link_gbs(g.loc[["NVIDIA RTX A6000"]]).tolist() == [24.0]


def test_trained_amp_interval_is_conformal_on_gpus_left_out_and_per_source(model, medians):
    from profet_core.crossgpu.configurations._amp import amp_half_widths, amp_logo
    from profet_core.crossgpu.spec._holdout import learn_amp_dp

    table = load_published()
    amp, _ = learn_amp_dp(model, table, medians)
    gpus = gpu_table(model.specs_)
    _, pairs, shares = amp_state_from(table, gpus, medians, model.theta_)
    pooled, per = amp_half_widths(amp_logo(pairs, gpus, shares))
    # widened by one factor so that it also holds with a whole source left out
    cal = amp["source_calibration"]
    assert cal["scale"] >= 1 and cal["coverage_source"] >= 0.75
    assert amp["half_width"] == pytest.approx(pooled * cal["scale"])
    assert amp["source_half_width"] == pytest.approx(per) and len(per) >= 2


def test_a_left_out_source_is_predicted_as_a_users_own_setup(model, medians):
    """Leave-one-source-out judges what the product answers for a setup no source published:
    the sources' centre offset (``predict_gain`` without ``repos``), not an offset of 0."""
    gpus = gpu_table(load_specs())
    _, pairs, shares = amp_state_from(load_published(), gpus, medians, model.theta_)
    oof = _amp.amp_logo(pairs, gpus, shares, "repo")
    fit = ~pairs["held_out"]
    for repo in sorted(set(pairs.loc[fit, "repo"])):
        rows = (pairs["repo"] == repo).to_numpy()
        st = _amp.fit_amp(pairs[fit & ~rows], gpus, shares[(fit & ~rows).to_numpy()])
        own = predict_gain(st, gpus, pairs.loc[rows, "catalog_gpu"], shares[rows])
        np.testing.assert_allclose(oof.loc[rows, "pred"], own, rtol=1e-9, err_msg=repo)


def _two_conditions() -> pd.DataFrame:
    """One source publishing a GPU with XLA on and off (FP16 and FP32, one and eight GPUs)."""
    t = load_published()
    v100 = t[t["gpu_published"].isin(["V100 32GB", "8x V100 32GB"]) & (t["model"] == "resnet50")]
    rows = []
    for xla, speed in [("on", 1.0), ("off", 0.8)]:
        part = v100.copy()
        part["xla"] = xla
        # XLA off: FP16 slower still (a smaller gain), FP32 as is
        part.loc[part["precision"] == "AMP", "images_per_s"] *= speed
        part["source"] = part["source"] + f"#{xla}"
        rows.append(part)
    return pd.concat(rows, ignore_index=True)


def test_amp_pairs_never_mix_a_sources_two_conditions():
    # round 4 (docs/amp_decision_rule.md): before, the XLA-off AMP row paired with whichever
    # FP32 row came first and one of the two pairs was dropped as a duplicate
    pairs = amp_pairs(_two_conditions())
    assert len(pairs) == 2
    gains = pairs.set_index(pairs["source"].str[-3:].str.strip("#"))["gain"]
    assert gains["on"] == pytest.approx(1276 / 432)
    assert gains["off"] == pytest.approx(0.8 * 1276 / 432)
    assert (pairs["source"].str[-3:] == pairs["baseline_source"].str[-3:]).all()


def test_scaling_rows_pair_each_condition_with_its_own_one_gpu_row():
    t = _two_conditions()
    rows = scaling_rows(t, gpu_table(load_specs()))
    n = ((t["gpu_count"] > 1) & t["catalog_gpu"].notna()).sum()
    assert len(rows) == n  # each 8-GPU row once, not twice (once per condition's 1-GPU row)
    assert rows.groupby("source").size().eq(1).all()


def test_published_xla_off_counterparts_pair_only_among_themselves():
    # Lambda's XLA-off runs of the 2080 Ti and RTX 8000 (round 4 D1) add pairs; none changes
    t = load_published()
    d1 = t["notes"].str.contains("round 4 D1", regex=False)
    before = amp_pairs(t[~d1])
    after = amp_pairs(t)
    new = after[after["source"].isin(t.loc[d1, "source"])]
    assert set(new["gpu_published"]) == {"RTX 2080Ti", "RTX 8000"} and len(new) == 12
    assert new["baseline_source"].isin(t.loc[d1, "source"]).all()
    old = after[~after["source"].isin(t.loc[d1, "source"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(old, before)
    gpus = gpu_table(load_specs())
    assert len(scaling_rows(t, gpus)) == len(scaling_rows(t[~d1], gpus)) + 72
