"""Zoo names and grid (no TensorFlow), and concatenating dataset folders."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core import make_dataset
from profet_core.capture import _zoo
from profet_core.errors import ProfetValueError
from profet_core.inputs._dataset import combine_datasets
from tests._utils import SHARED, make_synthetic, requires_shared

ISSUE_MODELS = (
    "LeNet5 VGGSmall VGG11 VGG13 VGG16 VGG19 ResNetSmall ResNet18 ResNet34 ResNet50 MNIST_CNN "
    "CIFAR10_CNN FLOWER_CNN AlexNet InceptionV3 InceptionResNetV2 Xception EfficientNetB0 "
    "MobileNetV2"
).split()


def test_zoo_holds_the_original_architectures():
    assert set(_zoo.ZOO) == set(ISSUE_MODELS)
    assert set(_zoo.QUICK_MODELS) <= set(_zoo.ZOO)


@requires_shared
def test_zoo_names_equal_the_shared_data_models():
    models = set(pd.read_parquet(SHARED / "profiles.parquet", columns=["model"])["model"])
    assert models <= set(_zoo.ZOO)


def test_grid_skips_inputs_a_model_refuses_and_numbers_repeats():
    grid = _zoo.workload_grid(["InceptionV3", "LeNet5"], [32, 128], [16], repeats=2)
    assert [(w.exp, w.model, w.input_size) for w in grid if w.exp == "exp01"] == [
        ("exp01", "InceptionV3", 128),
        ("exp01", "LeNet5", 32),
        ("exp01", "LeNet5", 128),
    ]
    assert {w.exp for w in grid} == {"exp01", "exp02"}


@pytest.mark.parametrize(
    "sizes, batches, repeats, match",
    [([0], [16], 1, "input size 0"), ([32], [-1], 1, "batch size -1"), ([32], [16], 0, "repeats")],
    ids=["input-0", "batch-negative", "repeats-0"],
)
def test_grid_refuses_bad_sizes(sizes, batches, repeats, match):
    with pytest.raises(ProfetValueError, match=match):
        _zoo.workload_grid(["LeNet5"], sizes, batches, repeats)


def test_steps_per_epoch_follow_the_original_data_sizes():
    assert _zoo.steps_per_epoch(32, 16) == 3125
    assert _zoo.steps_per_epoch(224, 256) == 8
    assert _zoo.steps_per_epoch(32, 16, cap=100) == 100


def test_combine_datasets_concatenates_and_fills_missing_ops():
    prof, lat = make_synthetic(n_arch=2, n_exp=1)
    a = make_dataset(prof, lat)
    other = prof.head(3).drop(columns=["Device_MatMul"]).assign(instance="new", Host_Extra=7.0)
    b = make_dataset(other, lat.head(3).assign(instance="new"))
    both = combine_datasets([a, b])
    assert len(both.profiles) == len(prof) + 3 and "new" in both.instances
    assert set(both.ops) == set(a.ops) | {"Host_Extra"}
    new = both.profiles[both.profiles["instance"] == "new"]
    assert (new["Device_MatMul"] == 0).all() and (both.profiles["Host_Extra"].fillna(-1) >= 0).all()
    assert combine_datasets([a]) is a
    with pytest.raises(ProfetValueError, match="at least one"):
        combine_datasets([])


@pytest.mark.parametrize(
    "size, batch, steps, expected",
    [(32, 32, 1563, (50_000, 10_000)), (224, 16, 125, (2_000, 500)), (32, 32, 4, (128, 32))],
    ids=["cifar-like", "imagenet-like", "capped"],
)
def test_numpy_arrays_have_the_original_dataset_sizes(size, batch, steps, expected):
    from profet_core.capture._profile import dataset_sizes

    assert dataset_sizes(size, batch, steps) == expected
