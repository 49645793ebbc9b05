"""A small leave-one-GPU-out slice on the shared data (skips without it)."""

import pytest

from profet_core import load_dataset
from profet_core._specs import load_specs
from profet_core.crossgpu import median_table
from profet_core.crossgpu._validate import logo_runs, summarize
from tests.conftest import SHARED, requires_shared

pytestmark = [requires_shared, pytest.mark.realdata]


def test_logo_slice_t4_specs_and_calibration():
    medians = median_table(load_dataset(SHARED))
    oof = logo_runs(medians, load_specs(), ks=(0, 1), gpus=["g4dn.xlarge"], archs=["VGG16"])
    # The T4 is predicted on all 6 pairs involving it, for both k.
    assert set(zip(oof["anchor"], oof["target"], strict=True)) >= {
        ("g4dn.xlarge", "p2.xlarge"),
        ("p3.2xlarge", "g4dn.xlarge"),
    }
    s = summarize(oof).set_index(["k", "left_out", "direction"])
    specs_only, calibrated = s.loc[(0, "all", "both")], s.loc[(1, "all", "both")]
    # Full-run numbers (bench/crossgpu.py): the T4 is the GPU its specs describe best.
    assert specs_only["mape_cross"] < specs_only["mape_fp32-ratio"]
    assert calibrated["mape_cross"] < 25.0
    assert calibrated["r2_cross"] > 0.8
