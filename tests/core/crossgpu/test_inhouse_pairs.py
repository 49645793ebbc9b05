"""The in-house PyTorch rows as one more source of speed-up pairs (candidate B of
docs/arch_efficiency_rule.md, which did not pass the rule: kept for its study in
``bench/studies/_variants.py``, never read by the library's fit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.spec._inhouse import load_inhouse
from profet_core.crossgpu.spec._pairs import FAM_COLS
from profet_core.crossgpu.spec._published import load_published, published_pairs
from profet_core.inputs._gpu_specs import load_specs
from tests._utils import bench_module

variants = bench_module("studies/_variants.py")
ANCHOR, inhouse_pairs = variants.ANCHOR, variants.inhouse_pairs


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
        & (rows["spread_pct"] <= variants.MAX_SPREAD_PCT)
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


def test_the_study_adds_them_after_the_published_pairs(specs):
    table, medians = load_published(), _medians()
    plain = published_pairs(table, specs, medians)
    both = variants.published_and_inhouse_pairs(table, specs, medians)
    mine = inhouse_pairs(specs, medians)
    assert len(mine) and len(both) == len(plain) + len(mine)
    pd.testing.assert_frame_equal(both.iloc[: len(plain)], plain)
    # without the data's V100 there is nothing to pair them with
    no_v100 = medians.assign(instance="g4dn.xlarge")
    assert len(variants.published_and_inhouse_pairs(table, specs, no_v100)) == len(
        published_pairs(table, specs, no_v100)
    )
