"""The synthetic DOE demo makes physical sense: more CPU is not slower, 10
epochs take longer than 5; and the shipped example holds what the generator makes."""

import pandas as pd
import pytest

from profet_core.doe import analyze, demo_results, make_design
from tests._utils import ROOT

FACTORS = [
    "cpu=750m,1500m",
    "memory=1.5Gi,3Gi",
    "network=FashionMNISTCNN,FashionMNISTResNet",
    "epochs=5,10",
]
LEVELS = {"network": ("FashionMNISTCNN", "FashionMNISTResNet")}


def _design():
    return make_design(FACTORS, generators="D=ABC", replicates=4, seed=1)


@pytest.mark.parametrize("seed", [0, 1, 2, 7], ids=lambda s: f"seed{s}")
def test_resource_effects_have_their_physical_sign(seed):
    results = demo_results(_design(), seed=seed)
    effects = analyze(results, "train_time_s", levels=LEVELS).effects.set_index("term")["effect"]
    assert effects["cpu"] < 0  # more CPU: shorter
    assert effects["epochs"] > 0  # more epochs: longer
    mean = results.groupby("epochs")["train_time_s"].mean()
    assert 1.6 < mean["10"] / mean["5"] < 2.4  # about proportional to the epochs
    by_cpu = results.groupby("cpu")["train_time_s"].mean()
    assert by_cpu["1500m"] < by_cpu["750m"]
    acc = analyze(results, "accuracy", levels=LEVELS).effects.set_index("term")["effect"]
    assert acc["epochs"] > 0


def test_the_shipped_example_is_the_generator_s():
    shipped = pd.read_csv(ROOT / "examples" / "doe_results.csv", dtype=str)
    made = demo_results(_design()).astype(str)
    pd.testing.assert_frame_equal(shipped, made.reset_index(drop=True), check_dtype=False)
