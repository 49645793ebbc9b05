"""The N-GPU model's synchronisation term for TensorFlow AMP without XLA (round 7, N3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.configurations._dataparallel import (
    fit_dataparallel,
    scaling_rows,
    step_factor,
)
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._published import load_published
from profet_core.inputs._gpu_specs import load_specs

TRUE = {"k0": 0.03, "k0_pcie": 0.05, "k1": 1.0, "k0_amp": 0.12}


def _rows(flagged: bool) -> pd.DataFrame:
    """Synthetic scaling rows made by the model itself from ``TRUE``; ``flagged``: half of
    them are TensorFlow AMP without XLA."""
    rng = np.random.default_rng(0)
    n = 48
    rows = pd.DataFrame(
        {
            "repo": np.repeat(["a", "b"], n // 2),
            "model": np.tile(["m1", "m2", "m3"], n // 3),
            "catalog_gpu": np.tile(["g1", "g2", "g3", "g4"], n // 4),
            "precision": np.tile(["AMP", "FP32"], n // 2),
            "gpu_count": rng.choice([2.0, 4.0, 8.0], n),
            "t1_s": rng.uniform(0.05, 0.5, n),
            "params": rng.uniform(5e6, 80e6, n),
            "gbs": rng.choice([24.0, 150.0, -6.0], n),
            "pcie": rng.random(n) < 0.5,
            "held_out": False,
        }
    )
    rows["amp_noxla"] = flagged & (rows["precision"] == "AMP")
    cols = [rows[c].to_numpy(float) for c in ("t1_s", "gpu_count", "params", "gbs")]
    f = step_factor(TRUE, *cols, rows["pcie"], rows["amp_noxla"])
    rows["scaling"] = 1.0 / f
    return rows


def test_the_term_is_learned_where_such_rows_exist():
    st = fit_dataparallel(_rows(True))
    assert st["k0_amp"] == pytest.approx(TRUE["k0_amp"], rel=1e-3)
    assert st["k1"] == pytest.approx(TRUE["k1"], rel=1e-3)


def test_without_such_rows_the_term_stays_zero_and_the_fit_is_the_old_one():
    rows = _rows(False)
    st = fit_dataparallel(rows)
    old = fit_dataparallel(rows, amp_sync=False)
    assert st["k0_amp"] == 0.0
    assert "k0_amp" not in old
    for k in ("k0", "k0_pcie", "k1"):
        assert st[k] == old[k]


def test_the_term_moves_only_flagged_rows():
    t1, n, p, g = [0.1, 0.1], [8, 8], [25e6, 25e6], [150.0, 150.0]
    f = step_factor(TRUE, t1, n, p, g, False, [True, False])
    assert f[0] - f[1] == pytest.approx(3 * TRUE["k0_amp"])
    # a state from before the term (no k0_amp) answers as it did
    old = {k: v for k, v in TRUE.items() if k != "k0_amp"}
    assert step_factor(old, t1, n, p, g, False, [True, False])[0] == pytest.approx(f[1])


def test_only_tensorflow_amp_rows_without_xla_are_flagged():
    rows = scaling_rows(load_published(), gpu_table(load_specs()))
    flagged = rows[rows["amp_noxla"]]
    assert len(flagged) > 0
    assert (flagged["framework"] == "TensorFlow").all()
    assert (flagged["precision"] == "AMP").all()
    # the XLA-on tables (every Lambda system but the V100 32GB) and PyTorch stay unflagged
    lambda_on = rows["gpu_published"].isin(["RTX 3090", "RTX A6000"]) & rows["repo"].str.startswith(
        "Lambda"
    )
    assert not rows.loc[lambda_on, "amp_noxla"].any()
    assert not rows.loc[rows["framework"] == "PyTorch", "amp_noxla"].any()
