"""The in-house PyTorch rows as one more source of speed-up pairs (issue 40; candidate B of
docs/arch_efficiency_rule.md, which did not pass the rule: off by default)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu import _inhouse
from profet_core.crossgpu._inhouse import ANCHOR, all_published_pairs, inhouse_pairs, load_inhouse
from profet_core.crossgpu._pairs import FAM_COLS
from profet_core.crossgpu._published import load_published
from profet_core.inputs._gpu_specs import load_specs


def _medians(models=("ResNet50", "VGG16", "VGG11"), batches=(64, 128)) -> pd.DataFrame:
    """The data's V100 at 224 px for a few CNNs (latency 0.2 s per 64 images), profiled."""
    rows = []
    for m in models:
        for b in batches:
            row = {"instance": ANCHOR, "model": m, "input_size": 224, "batch_size": b}
            row |= {c: 100.0 for c in FAM_COLS}
            rows.append(row | {"latency_s": 0.2 * b / 64})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def specs():
    return load_specs()


def test_tf32_rows_of_measured_cnns_pair_with_the_data_v100(specs):
    rows = load_inhouse()
    pairs = inhouse_pairs(specs, _medians())
    assert len(pairs) and set(pairs["anchor"]) == {ANCHOR}
    # the H200 (2026-11-27) and H100 SXM5 (p5.48xlarge's GPU, 2026-11-28) runs
    assert set(pairs["target"]) == {"gpu-h200-sxm-141gb", "p5.48xlarge"}
    assert set(pairs["framework"]) == {"PyTorch"}
    # one document per run's script commit, each the rows' own source
    assert pairs["document"].str.startswith("in-house@").all()
    assert set(pairs["document"]) <= set(rows["source"])
    used = rows[
        (rows["precision"] == "TF32")
        & rows["data_model"].isin(["ResNet50", "VGG16", "VGG11"])
        & (rows["spread_pct"] <= _inhouse.MAX_SPREAD_PCT)
    ]
    assert len(pairs) == len(used)
    for p in pairs.itertuples():
        r = used[
            (used["model"] == p.model)
            & (used["batch_size"] == p.batch_size)
            & (used["catalog_gpu"] == p.target_gpu)
        ].iloc[0]
        # speed-up: the target's images/s over the V100's (batch / latency)
        np.testing.assert_allclose(
            p.speedup, r["images_per_s"] / (p.batch_size / p.anchor_latency_s)
        )
    # VGG16 stays held out, as in every source
    assert pairs.loc[pairs["model"] == "vgg16", "held_out"].all()
    assert not pairs.loc[pairs["model"] != "vgg16", "held_out"].any()
    # host-bound rows (spread over 10%) and strict-FP32 / AMP rows never pair
    assert (pairs["batch_size"] >= 64).all()


def test_no_pair_without_the_anchors_profile_or_the_same_workload(specs):
    assert inhouse_pairs(specs, _medians(batches=(32,))).empty
    assert inhouse_pairs(specs, _medians(models=("LeNet5",))).empty


def test_the_package_pairs_leave_them_out_unless_switched_on(specs, monkeypatch):
    table, medians = load_published(), _medians()
    from profet_core.crossgpu._published import published_pairs

    assert len(all_published_pairs(table, specs, medians)) == len(
        published_pairs(table, specs, medians)
    )
    monkeypatch.setattr(_inhouse, "USE_INHOUSE", True)
    both = all_published_pairs(table, specs, medians)
    assert len(both) == len(published_pairs(table, specs, medians)) + len(
        inhouse_pairs(specs, medians)
    )
