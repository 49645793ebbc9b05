"""The in-house rows' FP16 AMP vs TF32 pairs as AMP-gain pairs of a fourth source (candidate S3 of
docs/inhouse_amp_rule.md, not adopted: kept for its study in ``bench/studies/_variants.py``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.configurations._amp import (
    MEMORY_FAMILIES,
    amp_pairs,
    amp_state_from,
    fit_amp,
)
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._inhouse import H100_SXM, H200_SXM
from profet_core.crossgpu.spec._pairs import FAM_COLS
from profet_core.crossgpu.spec._published import load_published
from profet_core.errors import ProfetValueError
from profet_core.inputs._gpu_specs import load_specs
from tests._utils import bench_module

variants = bench_module("studies/_variants.py")
inhouse_amp_pairs = variants.inhouse_amp_pairs

SRC = "in-house@{}:profet_core/data/build/torch_steps.py"


def _row(precision, ms, spread=1.0, model="resnet50", cnn="ResNet50", batch=128, **kw):
    row = {
        "source": SRC.format("a" * 40),
        "framework": "PyTorch",
        "gpu_published": "NVIDIA H200",
        "catalog_gpu": H200_SXM,
        "gpu_count": 1,
        "model": model,
        "data_model": cnn,
        "profile_proxy": "",
        "image_size": 224,
        "batch_size": batch,
        "precision": precision,
        "ms_per_step": ms,
        "spread_pct": spread,
    }
    return row | kw


def _pairs(*rows):
    return inhouse_amp_pairs(pd.DataFrame(list(rows)))


def test_an_amp_row_pairs_with_the_tf32_row_of_its_workload():
    got = _pairs(
        _row("FP32", 300.0),
        _row("TF32", 200.0, source=SRC.format("b" * 40)),
        _row("AMP", 125.0),
        _row("AMP BF16", 100.0),
    )
    assert len(got) == 1
    p = got.iloc[0]
    # gain: the TF32 step over the FP16 AMP step (never strict FP32, never BF16)
    assert p["gain"] == pytest.approx(1.6)
    assert (p["repo"], p["framework"], p["profile"]) == ("in-house", "PyTorch", "ResNet50")
    assert p["source"] == SRC.format("a" * 40) and p["baseline_source"] == SRC.format("b" * 40)
    assert not p["held_out"]
    assert list(got.columns) == list(amp_pairs(load_published()).columns)


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([_row("AMP", 100.0)], id="no-tf32-partner"),
        pytest.param([_row("FP32", 200.0), _row("AMP", 100.0)], id="fp32-is-no-partner"),
        pytest.param([_row("TF32", 200.0), _row("AMP BF16", 100.0)], id="bf16-never-pairs"),
        pytest.param([_row("TF32", 200.0, batch=64), _row("AMP", 100.0)], id="other-batch"),
        pytest.param(
            [_row("TF32", 200.0, catalog_gpu=H100_SXM), _row("AMP", 100.0)], id="other-gpu"
        ),
        pytest.param([_row("TF32", 200.0, spread=10.5), _row("AMP", 100.0)], id="tf32-spread"),
        pytest.param([_row("TF32", 200.0), _row("AMP", 100.0, spread=12.0)], id="amp-spread"),
        pytest.param(
            [_row("TF32", 200.0, gpu_count=2), _row("AMP", 100.0, gpu_count=2)], id="two-gpus"
        ),
        pytest.param([_row("TF32", 200.0, cnn=""), _row("AMP", 100.0, cnn="")], id="no-data-cnn"),
    ],
)
def test_no_pair_without_a_tight_tf32_partner_of_the_same_one_gpu_workload(rows):
    assert _pairs(*rows).empty


def test_a_spread_at_the_bound_still_pairs():
    bound = variants.MAX_SPREAD_PCT
    assert len(_pairs(_row("TF32", 200.0, spread=bound), _row("AMP", 100.0, spread=bound))) == 1


def test_proxies_pair_through_their_data_cnn_as_in_the_published_table():
    kw = {"model": "resnet152", "cnn": "", "profile_proxy": "ResNet50"}
    got = _pairs(_row("TF32", 200.0, **kw), _row("AMP", 100.0, **kw))
    assert got["profile"].tolist() == ["ResNet50"] and not got["held_out"].any()


@pytest.mark.parametrize(
    ("model", "cnn", "proxy"),
    [
        pytest.param("vgg16", "VGG16", "", id="vgg16"),
        pytest.param("inception_v3", "", "InceptionResNetV2", id="inception-v3-by-name"),
        pytest.param("my_cnn", "", "VGG16", id="proxy-to-vgg16"),
    ],
)
def test_held_out_cnns_are_flagged_and_refused_by_the_fit(model, cnn, proxy):
    kw = {"model": model, "cnn": cnn, "profile_proxy": proxy}
    got = _pairs(_row("TF32", 200.0, **kw), _row("AMP", 100.0, **kw))
    assert got["held_out"].all() and len(got) == 1
    with pytest.raises(ProfetValueError, match="held-out rows"):
        fit_amp(got, gpu_table(load_specs()), np.zeros((1, len(FAM_COLS))))


def _medians(models=("ResNet50", "VGG11", "VGG16", "VGG19", "AlexNet", "MobileNetV2")):
    """The data's V100 at 224 px, batches 64 and 128, every family 100 us."""
    rows = [
        {"instance": "p3.2xlarge", "model": m, "input_size": 224, "batch_size": b}
        | {c: 100.0 for c in FAM_COLS}
        for m in models
        for b in (64, 128)
    ]
    return pd.DataFrame(rows)


def test_the_product_fit_leaves_them_out_and_the_candidate_adds_them():
    specs, table, medians = load_specs(), load_published(), _medians()
    gpus = gpu_table(specs)
    theta = np.zeros((len(FAM_COLS), 3))
    state, pairs, _ = amp_state_from(table, gpus, medians, theta)
    assert "in-house" not in set(pairs["repo"]) and "in-house" not in state["source_offset"]
    # the studies' default fits are the product's: nothing joined, the shipped families
    assert not variants.TODAY.inhouse_amp and variants.TODAY.memory_families == MEMORY_FAMILIES
    state_on, pairs_on, shares = variants.Fits(inhouse_amp=True).amp_state(
        table, gpus, medians, theta
    )
    mine = pairs_on[pairs_on["repo"] == "in-house"]
    fitted = mine[~mine["held_out"]]
    assert len(fitted) and len(pairs_on) == len(pairs) + len(mine)
    assert set(mine["catalog_gpu"]) <= {H100_SXM, H200_SXM}
    # the source gets its own offset; VGG16 pairs are kept for scoring but never fitted
    assert "in-house" in state_on["source_offset"]
    assert mine.loc[mine["model"] == "vgg16", "held_out"].all()
    assert state_on["pairs"].get(H200_SXM) == (fitted["catalog_gpu"] == H200_SXM).sum()
    assert shares.shape == (len(pairs_on), len(FAM_COLS))
