import numpy as np
import pandas as pd
import pytest

from profet_core import make_dataset
from profet_core.crossgpu import median_table
from profet_core.crossgpu.spec._memory import FitModel, fit_table, validate_fit
from profet_core.errors import ProfetValueError
from tests.core.crossgpu._utils import make_multi_gpu, spec_table


@pytest.fixture(scope="module")
def small_memory_data():
    """gpu-a has 2 GB: its biggest workloads (batch 64 at 64 px) are absent from its rows."""
    p, lat = make_multi_gpu()
    big = (p["instance"] == "gpu-a") & (p["batch_size"] * p["input_size"] ** 2 >= 64 * 64**2)
    specs = spec_table()
    specs.loc[specs["instance"] == "gpu-a", "gpu_memory_gb"] = 2.0
    return median_table(make_dataset(p[~big], lat[~big.to_numpy()])), specs


def test_absent_workloads_are_negatives_and_fit_probability_orders(small_memory_data):
    medians, specs = small_memory_data
    table = fit_table(medians, specs)
    neg = table[table["fits"] == 0]
    assert set(neg["target"]) == {"gpu-a"}
    assert (neg["batch_size"] == 64).all()
    model = FitModel().fit(table, specs)
    p = model.predict_proba_table(table, specs)
    assert p[table["fits"].to_numpy() == 0].mean() < 0.5 < p[table["fits"].to_numpy() == 1].mean()
    back = FitModel.from_state(*model.to_state())
    np.testing.assert_allclose(back.predict_proba_table(table, specs), p)


def test_validate_fit_reports_brier_against_base_rate(small_memory_data):
    medians, specs = small_memory_data
    out = validate_fit(medians, specs).set_index("target")
    assert out.loc["all", "brier"] < out.loc["all", "brier_base_rate"]
    assert out.loc["gpu-a", "not_fit"] > 0


def test_unknown_instance_rejected(small_memory_data):
    medians, specs = small_memory_data
    table = fit_table(medians, specs)
    model = FitModel().fit(table, specs)
    bad = table.head(2).assign(target="nope")
    with pytest.raises(ProfetValueError, match="not in the spec catalog"):
        model.predict_proba_table(bad, specs)
    assert isinstance(table, pd.DataFrame)


@pytest.mark.parametrize(
    ("batch", "input_size", "latency_scale"),
    [(1_000_000, None, 1.0), (None, 100_000, 1.0), (None, None, 1e5)],
    ids=["batch-1e6", "input-1e5", "latency-1e5x"],
)
def test_workloads_beyond_the_trained_range_get_no_probability(
    small_memory_data, batch, input_size, latency_scale
):
    # batch 1,000,000 once "fit" a T4 with P 0.99
    medians, specs = small_memory_data
    table = fit_table(medians, specs)
    model = FitModel().fit(table, specs)
    far = table.head(3).copy()
    far["batch_size"] = batch or far["batch_size"]
    far["input_size"] = input_size or far["input_size"]
    far["anchor_latency_s"] *= latency_scale
    assert np.isnan(model.predict_proba_table(far, specs)).all()
    assert np.isfinite(model.predict_proba_table(table, specs)).all()
    assert not model.in_range(far, specs).any()


def test_old_state_without_the_range_falls_back_to_the_spread(small_memory_data):
    medians, specs = small_memory_data
    table = fit_table(medians, specs)
    meta, arrays = FitModel().fit(table, specs).to_state()
    old = FitModel.from_state(
        meta, {k: v for k, v in arrays.items() if k in ("coef", "mean", "scale")}
    )
    far = table.head(2).assign(batch_size=1_000_000)
    assert np.isnan(old.predict_proba_table(far, specs)).all()
    assert np.isfinite(old.predict_proba_table(table, specs)).all()
