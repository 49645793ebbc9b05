"""The N-GPU interval per peer-to-peer class (round 9, I1: Mondrian split-conformal)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu._amp import conformal_half_width
from profet_core.crossgpu._dataparallel import (
    DEFAULT_STATE,
    crossfit_coverage,
    half_widths,
    row_half_width,
    scaling_rows,
)
from profet_core.crossgpu._gpuref import gpu_table
from profet_core.crossgpu._published import load_published
from profet_core.inputs._gpu_specs import load_specs


def _oof(errors: dict[str, list[float]], no_p2p: set[str]) -> pd.DataFrame:
    """Out-of-fold rows whose |log error| per GPU is given (published scaling 1)."""
    gpu = [g for g, e in errors.items() for _ in e]
    err = np.concatenate([np.asarray(e, float) for e in errors.values()])
    return pd.DataFrame(
        {
            "catalog_gpu": gpu,
            "pred": np.exp(err),
            "scaling": 1.0,
            "held_out": False,
            "no_p2p": [g in no_p2p for g in gpu],
        }
    )


SMALL = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09]
LARGE = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]


def test_each_class_with_enough_rows_sets_its_own_width():
    oof = _oof({"a": SMALL, "b": LARGE}, no_p2p={"b"})
    pooled, per = half_widths(oof)
    assert pooled == pytest.approx(conformal_half_width(SMALL + LARGE))
    assert per == pytest.approx(
        {"p2p": conformal_half_width(SMALL), "no_p2p": conformal_half_width(LARGE)}
    )
    # the shipped width before round 9: pooled only
    assert half_widths(oof, mondrian=False) == (pooled, {})


def test_a_class_with_too_few_rows_takes_the_pooled_width():
    oof = _oof({"a": SMALL, "b": LARGE[:7]}, no_p2p={"b"})
    pooled, per = half_widths(oof)
    assert set(per) == {"p2p"}
    state = {"half_width": pooled, "class_half_width": per}
    assert row_half_width(state, [True, False]) == pytest.approx([pooled, per["p2p"]])


def test_a_state_without_class_widths_answers_with_the_pooled_one():
    old = {k: v for k, v in DEFAULT_STATE.items() if k != "class_half_width"}
    got = row_half_width(old, [True, False, True])
    assert got == pytest.approx([old["half_width"]] * 3)


def test_coverage_judges_a_left_out_gpu_by_its_class_on_other_gpus():
    # c (no peer-to-peer) is judged by d's width alone (the 8th smallest of its 9 errors,
    # 1.0): only its 1.1 is outside; a pooled width over a, b and d (the 23rd smallest of 27,
    # 0.7) leaves 4 of c's 9 outside
    oof = _oof({"a": SMALL, "b": SMALL, "c": LARGE, "d": LARGE}, no_p2p={"c", "d"})
    mondrian = crossfit_coverage(oof).groupby(oof["catalog_gpu"]).mean()
    assert mondrian["c"] == pytest.approx(8 / 9)
    pooled = crossfit_coverage(oof, mondrian=False).groupby(oof["catalog_gpu"]).mean()
    assert pooled["c"] == pytest.approx(5 / 9)
    # a (peer-to-peer) is judged by b's small errors: 8 of 9 inside, not all (pooled: all)
    assert mondrian["a"] == pytest.approx(8 / 9) and pooled["a"] == pytest.approx(1.0)


def test_published_rows_mark_the_gpus_without_peer_to_peer():
    rows = scaling_rows(load_published(), gpu_table(load_specs()))
    marked = set(rows.loc[rows["no_p2p"], "catalog_gpu"])
    assert marked == {
        "NVIDIA GeForce RTX 2080 Ti",
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 4090",
    }
    # an NVLink bridge gives peer-to-peer: its rows are not marked
    bridged = rows["gpu_published"].str.contains("NVLink", case=False)
    assert not (rows["no_p2p"] & bridged).any()
