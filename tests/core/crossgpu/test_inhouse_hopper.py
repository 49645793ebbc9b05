"""Measured H100 SXM5 / H200 ratios and AMP gains of the in-house rows: the pure part of
``bench/claims/hopper_check.py``, on small hand-made rows."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.spec._inhouse import (
    H100_SXM,
    H200_SXM,
    amp_gains,
    gpu_ratios,
    load_inhouse,
)
from profet_core.errors import ProfetValueError
from tests._utils import ROOT

#: ms per step of one CNN at batch 128 per precision (H200 10 % faster than the H100 in TF32).
STEPS = {
    H100_SXM: {"FP32": 100.0, "TF32": 55.0, "AMP": 40.0, "AMP BF16": 44.0},
    H200_SXM: {"FP32": 96.0, "TF32": 50.0, "AMP": 36.0},
}


def _rows(steps=STEPS, model="resnet50", data_model="ResNet50", proxy="", batch=128):
    rows = []
    for gpu, by_prec in steps.items():
        for prec, ms in by_prec.items():
            rows.append(
                {
                    "catalog_gpu": gpu,
                    "model": model,
                    "data_model": data_model,
                    "profile_proxy": proxy,
                    "image_size": 224,
                    "batch_size": batch,
                    "precision": prec,
                    "ms_per_step": ms,
                    "spread_pct": 2.0 if gpu == H100_SXM else 12.0,
                    "gpu_count": 1,
                }
            )
    return pd.DataFrame(rows)


def test_ratios_pair_the_two_gpus_by_workload_and_precision():
    r = gpu_ratios(_rows()).set_index("precision")
    # only precisions both GPUs ran (BF16 missing on the H200)
    assert sorted(r.index) == ["AMP", "FP32", "TF32"]
    np.testing.assert_allclose(r.loc["TF32", "ratio"], 55.0 / 50.0)
    np.testing.assert_allclose(r.loc["FP32", "ratio"], 100.0 / 96.0)
    assert (r["spread"] == 12.0).all()  # the larger spread of the two rows
    assert not r["held_out"].any() and set(r["cnn"]) == {"ResNet50"}
    # the other way round: the inverse
    inv = gpu_ratios(_rows(), num=H200_SXM, den=H100_SXM).set_index("precision")
    np.testing.assert_allclose(inv["ratio"], 1 / r["ratio"])


def test_gains_per_gpu_over_tf32_and_strict_fp32():
    g = amp_gains(_rows()).set_index("catalog_gpu")
    np.testing.assert_allclose(g.loc[H100_SXM, "fp16_tf32"], 55.0 / 40.0)
    np.testing.assert_allclose(g.loc[H100_SXM, "bf16_tf32"], 55.0 / 44.0)
    np.testing.assert_allclose(g.loc[H100_SXM, "fp16_fp32"], 100.0 / 40.0)
    np.testing.assert_allclose(g.loc[H200_SXM, "tf32_fp32"], 96.0 / 50.0)
    assert np.isnan(g.loc[H200_SXM, "bf16_tf32"])  # not measured there
    assert g.loc[H200_SXM, "spread"] == 12.0


def test_held_out_cnns_stay_flagged_also_through_a_proxy():
    rows = _rows(model="inception_v3", data_model=np.nan, proxy="InceptionResNetV2")
    r = gpu_ratios(rows)
    assert r["held_out"].all() and set(r["cnn"]) == {"InceptionResNetV2"}
    assert amp_gains(_rows(model="vgg16", data_model="VGG16"))["held_out"].all()


def _dup(rows):
    return pd.concat([rows, rows.iloc[[0]]], ignore_index=True)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda r: r.drop(columns="spread_pct"), r"lack the columns \['spread_pct'\]"),
        (lambda r: r.assign(precision="FP8"), r"unknown precision \['FP8'\]"),
        (
            lambda r: r.assign(ms_per_step=0.0),
            "positive number of milliseconds; '0.0' for resnet50",
        ),
        (lambda r: r.assign(ms_per_step=np.nan), "positive number of milliseconds; 'nan'"),
        (_dup, "two in-house rows of resnet50 224 px batch 128 FP32"),
        (lambda r: r[r["catalog_gpu"] == H100_SXM], "no one-GPU in-house row of 'NVIDIA H200"),
        (lambda r: r.assign(gpu_count=8), "no one-GPU in-house row of 'NVIDIA H100"),
    ],
    ids=["no-spread", "precision", "zero-ms", "nan-ms", "duplicate", "one-gpu-only", "8-gpus"],
)
def test_bad_rows_are_refused(change, match):
    with pytest.raises(ProfetValueError, match=match):
        gpu_ratios(change(_rows()))


def test_same_gpu_twice_is_refused():
    with pytest.raises(ProfetValueError, match="two different GPUs"):
        gpu_ratios(_rows(), num=H100_SXM, den=H100_SXM)


def test_the_package_rows_give_both_gpus_ratios():
    r = gpu_ratios(load_inhouse())
    # every data CNN measured on both at batch 128 (224 px; Inception-v3 at 299) in TF32
    tf32 = r[(r["precision"] == "TF32") & (r["batch_size"] == 128)]
    assert set(tf32["model"]) >= {"alexnet", "resnet50", "mobilenet_v2", "vgg11", "vgg19"}
    assert (r["ratio"] > 0).all()
    assert r.loc[r["model"].isin(["vgg16", "inception_v3"]), "held_out"].all()


def _bench():
    path = ROOT / "bench" / "claims" / "hopper_check.py"
    spec = importlib.util.spec_from_file_location("hopper_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_profiles_match_same_size_else_the_largest_of_at_least_128_px():
    hc = _bench()
    prof = pd.DataFrame(
        {
            "instance": "p3.2xlarge",
            "model": ["ResNet50", "ResNet50", "AlexNet", "AlexNet", "AlexNet"],
            "input_size": [224, 128, 128, 64, 32],
            "batch_size": [64, 64, 64, 128, 128],
        }
    )
    wl = pd.DataFrame(
        {
            "model": ["resnet50", "alexnet", "alexnet"],
            "cnn": ["ResNet50", "AlexNet", "AlexNet"],
            "image_size": 224,
            "batch_size": [64, 64, 128],
            "held_out": False,
        }
    )
    got = hc.match(wl, prof)
    assert list(zip(got["wl"], got["batch_size"], got["px"], strict=True)) == [
        ("resnet50", 64, 224),
        ("alexnet", 64, 128),  # no 224 px AlexNet profile: the largest at that batch
    ]  # AlexNet at batch 128: only 64 and 32 px, under MIN_PX: not matched
