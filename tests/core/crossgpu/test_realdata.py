"""A small leave-one-GPU-out slice on the shared data (skips without it)."""

import numpy as np
import pytest

from profet_core import load_dataset
from profet_core.crossgpu import median_table
from profet_core.crossgpu.spec._validate import logo_runs, summarize_gpus
from profet_core.inputs._gpu_specs import load_specs
from tests._utils import SHARED, requires_shared

pytestmark = [requires_shared, pytest.mark.realdata]


def test_logo_slice_t4_specs_and_calibration():
    medians = median_table(load_dataset(SHARED))
    oof = logo_runs(medians, load_specs(), ks=(0, 1), gpus=["g4dn.xlarge"], archs=["VGG16"])
    # The T4 is predicted on all 6 pairs involving it, for both k.
    assert set(zip(oof["anchor"], oof["target"], strict=True)) >= {
        ("g4dn.xlarge", "p2.xlarge"),
        ("p3.2xlarge", "g4dn.xlarge"),
    }
    s = summarize_gpus(oof).set_index(["k", "left_out", "direction"])
    specs_only, calibrated = s.loc[(0, "all", "both")], s.loc[(1, "all", "both")]
    # Full-run numbers (bench/claims/crossgpu.py): the T4 is the GPU its specs describe best.
    assert specs_only["mape_cross"] < specs_only["mape_fp32-ratio"]
    assert calibrated["mape_cross"] < 25.0
    assert calibrated["r2_cross"] > 0.8


@pytest.fixture(scope="module")
def published_setup():
    from profet_core.crossgpu import CrossInstanceModel, all_pairs
    from profet_core.crossgpu.spec._published import load_published, published_pairs

    medians = median_table(load_dataset(SHARED))
    specs = load_specs()
    base = CrossInstanceModel(n_trees=30).fit_pairs(all_pairs(medians), specs)
    return base, medians, specs, load_published(), published_pairs


def test_published_pairs_beat_the_model_before_and_ignore_held_out_rows(published_setup):
    """Learned on published pairs (V100 baselines), the tensor-core GPUs' speed-ups
    are far closer than the spec model before; VGG16 / Inception-v3 rows change nothing."""
    from profet_core.crossgpu.spec._holdout import learn_published, published_logo

    base, medians, specs, table, published_pairs = published_setup
    pairs = published_pairs(table, specs, medians)
    assert set(pairs.loc[pairs["held_out"], "model"]) == {"vgg16", "inception3"}
    oof = published_logo(base, pairs)
    fit = oof[~oof["held_out"]]
    ape = lambda m: (fit[m] / fit["speedup"] - 1).abs().mean()  # noqa: E731
    assert ape("cross") < ape("before") / 1.5
    fitted, _ = learn_published(base, medians, specs, table=table)
    changed = table.copy()
    # Only the targets' rows: the held-out speed-ups become 7x what was published.
    targets = held_out_rows(changed) & (changed["catalog_gpu"] != "NVIDIA V100 SXM2 16GB")
    # the FP32 pairs' two and every held-out AMP / multi-GPU row
    assert targets.sum() >= 2
    changed.loc[targets, "images_per_s"] *= 7.0
    other, _ = learn_published(base, medians, specs, table=changed)
    for gen, eta in fitted.published_eta_.items():
        np.testing.assert_allclose(eta, other.published_eta_[gen])
    assert fitted.amp_state_ == other.amp_state_ and fitted.dp_state_ == other.dp_state_
    assert fitted.basis("p4d.24xlarge").startswith("published (")


def held_out_rows(table):
    from profet_core.crossgpu.spec._published import held_out

    return held_out(table["model"]) | held_out(table["data_model"])


def test_shipped_8_gpu_instances_are_priced_whole_and_say_so():
    """The published-measurement GPUs, priced as configurations: the shipped catalog's p4d/p5 keep their 8
    GPUs and the whole instance's price; one GPU of theirs is priced by the cheapest offering
    renting one, and a configuration only a bigger instance rents is paid whole, with a note."""
    from profet_core import load_artifacts, read_profile
    from tests._utils import ROOT

    p = load_artifacts()
    cat = p.catalog.set_index("instance")
    assert cat.loc["p4d.24xlarge", "gpu_count"] == 8 and cat.loc["p5.48xlarge", "gpu_count"] == 8
    res = p.predict("g3s.xlarge", read_profile(ROOT / "examples" / "profile_g3s.json"))
    t = res.table.set_index("target")
    for inst in ("p4d.24xlarge", "p5.48xlarge"):
        assert t.loc[inst, "configuration"].startswith("1 x ")
        assert t.loc[inst, "usd_per_hour"] < cat.loc[inst, "usd_per_hour"] / 4
    whole = [n for n in res.price_notes if "the whole instance's" in n]
    assert len(whole) == 1 and "8 GPUs" in whole[0]
    every = p.predict(
        "g3s.xlarge", read_profile(ROOT / "examples" / "profile_g3s.json"), gpus="all"
    ).table
    eight = every[(every["target"] == "p5.48xlarge") & (every["gpus"] == 8)]
    assert (
        len(eight) == 1 and eight["usd_per_hour"].iloc[0] <= cat.loc["p5.48xlarge", "usd_per_hour"]
    )
