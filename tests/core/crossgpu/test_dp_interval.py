"""The N-GPU interval per peer-to-peer class (round 9, I1: Mondrian split-conformal) and per
doubling of the GPU count (round 10, I2: shipped)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.configurations._amp import conformal_half_width
from profet_core.crossgpu.configurations._dataparallel import (
    DEFAULT_STATE,
    INTERVAL,
    crossfit_coverage,
    half_widths,
    row_half_width,
    scaling_rows,
)
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._published import load_published
from profet_core.errors import ProfetValueError
from profet_core.inputs._gpu_specs import load_specs


def _oof(errors: dict[str, list[float]], no_p2p: set[str], n: float = 2.0) -> pd.DataFrame:
    """Out-of-fold rows on ``n`` GPUs whose |log error| per GPU is given (published scaling 1)."""
    gpu = [g for g, e in errors.items() for _ in e]
    err = np.concatenate([np.asarray(e, float) for e in errors.values()])
    return pd.DataFrame(
        {
            "catalog_gpu": gpu,
            "gpu_count": n,
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
    st = half_widths(oof, kind="class")
    assert st["half_width"] == pytest.approx(conformal_half_width(SMALL + LARGE))
    assert st["class_half_width"] == pytest.approx(
        {"p2p": conformal_half_width(SMALL), "no_p2p": conformal_half_width(LARGE)}
    )
    # before round 9: the pooled width only
    pooled = half_widths(oof, kind="pooled")
    assert pooled["class_half_width"] == {} and pooled["half_width"] == st["half_width"]


def test_a_class_with_too_few_rows_takes_the_pooled_width():
    oof = _oof({"a": SMALL, "b": LARGE[:7]}, no_p2p={"b"})
    st = half_widths(oof, kind="class")
    assert set(st["class_half_width"]) == {"p2p"}
    got = row_half_width(st, [True, False], [8, 8])
    assert got == pytest.approx([st["half_width"], st["class_half_width"]["p2p"]])


def test_widths_per_doubling_grow_with_log2_of_the_gpu_count():
    # rows on 4 GPUs: the score is |log error| / 2, and an answer on N GPUs gets q log2 N
    oof = _oof({"a": SMALL, "b": LARGE}, no_p2p={"b"}, n=4.0)
    st = half_widths(oof, kind="class_log2n")
    q = conformal_half_width(LARGE) / 2
    assert st["per_log2n"] and st["class_half_width"]["no_p2p"] == pytest.approx(q)
    got = row_half_width(st, [True, True, True], [2, 4, 8])
    assert got == pytest.approx([q, 2 * q, 3 * q])
    assert INTERVAL == "class_log2n"


def test_a_state_without_class_widths_answers_with_the_pooled_one():
    old = {"half_width": DEFAULT_STATE["half_width"]}  # artifacts before round 9
    got = row_half_width(old, [True, False, True], [2, 4, 8])
    assert got == pytest.approx([old["half_width"]] * 3)


def test_an_unknown_interval_is_refused():
    with pytest.raises(ProfetValueError, match="interval 'quantile': expected one of pooled"):
        half_widths(_oof({"a": SMALL}, no_p2p=set()), kind="quantile")


def test_coverage_judges_a_left_out_gpu_by_its_class_on_other_gpus():
    # c (no peer-to-peer) is judged by d's width alone (the 8th smallest of its 9 errors,
    # 1.0): only its 1.1 is outside; a pooled width over a, b and d (the 23rd smallest of 27,
    # 0.7) leaves 4 of c's 9 outside
    oof = _oof({"a": SMALL, "b": SMALL, "c": LARGE, "d": LARGE}, no_p2p={"c", "d"})
    mondrian = crossfit_coverage(oof, kind="class").groupby(oof["catalog_gpu"]).mean()
    assert mondrian["c"] == pytest.approx(8 / 9)
    pooled = crossfit_coverage(oof, kind="pooled").groupby(oof["catalog_gpu"]).mean()
    assert pooled["c"] == pytest.approx(5 / 9)
    # a (peer-to-peer) is judged by b's small errors: 8 of 9 inside, not all (pooled: all)
    assert mondrian["a"] == pytest.approx(8 / 9) and pooled["a"] == pytest.approx(1.0)


def test_coverage_per_doubling_judges_8_gpus_by_errors_scaled_from_2():
    # b's errors on 2 GPUs set q; a's rows on 8 GPUs (errors 3x b's) sit at 3q: as covered
    # as b's own rows would be, where one width for every count would miss most of them
    two = _oof({"b": SMALL}, no_p2p=set(), n=2.0)
    eight = _oof({"a": [3 * e for e in SMALL]}, no_p2p=set(), n=8.0)
    oof = pd.concat([two, eight], ignore_index=True)
    scaled = crossfit_coverage(oof, kind="class_log2n").groupby(oof["catalog_gpu"]).mean()
    flat = crossfit_coverage(oof, kind="class").groupby(oof["catalog_gpu"]).mean()
    assert scaled["a"] == pytest.approx(8 / 9) and flat["a"] == pytest.approx(2 / 9)


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
