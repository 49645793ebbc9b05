"""Model choices the fits take as parameters and record, never as module switches: the AMP fit's
memory-bound families (bytes halved) and the N-GPU rows' parameter counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.configurations._amp import (
    MEMORY,
    MEMORY_FAMILIES,
    amp_logo,
    amp_pairs,
    fit_amp,
    memory_mask,
    step_ratio,
)
from profet_core.crossgpu.configurations._dataparallel import PARAMS, scaling_rows
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._pairs import FAM_COLS, MODEL_FAMILIES
from profet_core.crossgpu.spec._published import load_published
from profet_core.errors import ProfetValueError
from profet_core.inputs._gpu_specs import load_specs

NO_DEPTHWISE = tuple(f for f in MEMORY_FAMILIES if f != "depthwise")


@pytest.fixture(scope="module")
def fit_inputs():
    gpus = gpu_table(load_specs())
    pairs = amp_pairs(load_published())
    pairs = pairs[~pairs["held_out"] & pairs["catalog_gpu"].isin(gpus.index)]
    pairs = pairs.reset_index(drop=True)
    # every family the same share of the step, depthwise convolutions a large one
    shares = np.full((len(pairs), len(FAM_COLS)), 0.05)
    shares[:, MODEL_FAMILIES.index("depthwise")] = 0.5
    return pairs, gpus, shares / shares.sum(axis=1, keepdims=True)


def test_the_memory_bound_families_are_recorded_in_the_state(fit_inputs):
    pairs, gpus, shares = fit_inputs
    shipped = fit_amp(pairs, gpus, shares)
    assert shipped["memory_families"] == list(MEMORY_FAMILIES)
    other = fit_amp(pairs, gpus, shares, memory_families=NO_DEPTHWISE)
    assert other["memory_families"] == list(NO_DEPTHWISE)
    keys = ("a", "b", "beta", "alpha")  # a different model was fitted
    assert not np.allclose([other[k] for k in keys], [shipped[k] for k in keys])


def test_a_state_predicts_with_its_own_families(fit_inputs):
    _, _, shares = fit_inputs
    state = {"a": 0.1, "b": 0.3, "beta": 1.0, "alpha": 1.0}
    r, tf32 = np.full(3, 4.0), np.ones(3)
    # a state saved before the families were recorded reads the shipped ones
    np.testing.assert_array_equal(memory_mask(state), MEMORY)
    old = step_ratio(state, r, tf32, shares[:3])
    same = step_ratio(state | {"memory_families": list(MEMORY_FAMILIES)}, r, tf32, shares[:3])
    np.testing.assert_array_equal(old, same)
    # depthwise without the bytes-halved gain: a step that is half depthwise gains less
    no_dw = step_ratio(state | {"memory_families": list(NO_DEPTHWISE)}, r, tf32, shares[:3])
    assert (no_dw > old + 0.2).all()


def test_the_folds_are_fitted_with_the_given_families(fit_inputs):
    pairs, gpus, shares = fit_inputs
    keep = pairs["catalog_gpu"].isin(pairs["catalog_gpu"].unique()[:3]).to_numpy()
    shipped = amp_logo(pairs[keep], gpus, shares[keep])
    other = amp_logo(pairs[keep], gpus, shares[keep], memory_families=NO_DEPTHWISE)
    assert not np.allclose(shipped["pred"], other["pred"])


@pytest.mark.parametrize(
    "families",
    [("conv",), ("depthwise", "depthwise"), ("no-such-family",)],
    ids=["tensor-family", "repeated", "unknown"],
)
def test_families_outside_the_memory_bound_ones_are_refused_by_name(fit_inputs, families):
    pairs, gpus, shares = fit_inputs
    with pytest.raises(ProfetValueError, match="memory_families must be distinct families"):
        fit_amp(pairs, gpus, shares, memory_families=families)


def test_parameter_counts_are_a_parameter_of_the_scaling_rows():
    table, gpus = load_published(), gpu_table(load_specs())
    shipped = scaling_rows(table, gpus)
    wide = "efficientnet-widese-b0"
    assert wide not in PARAMS and not shipped["model"].str.lower().eq(wide).any()
    more = scaling_rows(table, gpus, {**PARAMS, wide: 5.0e6})
    mine = more[more["model"].str.lower() == wide]
    assert len(mine) and (mine["params"] == 5.0e6).all()
    rest = more[more["model"].str.lower() != wide].reset_index(drop=True)
    pd.testing.assert_frame_equal(rest, shipped)
