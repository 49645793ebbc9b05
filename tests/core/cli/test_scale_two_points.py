"""``profet scale`` from two points on the shipped artifacts: every instance
``profet instances`` lists is accepted, and the line names the target and its (missing) interval."""

import pytest

from profet_core import load_artifacts
from tests._utils import run

TWO = ["scale", "--by", "batch", "--latency-min-ms", 20, "--latency-max-ms", 210, "--size", 64]


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.mark.parametrize("target", ["p5.48xlarge", "g6.xlarge"], ids=["p5", "l4"])
def test_an_instance_never_measured_at_several_sizes_is_scaled_with_a_note(predictor, target):
    assert target in predictor.all_instances and target not in predictor.instances
    code, out, err = run(*TWO, "--target", target)
    assert code == 0, err
    assert out.startswith("58.000 ms per training step at batch size 64 images on " + target)
    assert "no interval: the two-point scaler is not calibrated" in out
    # what the curve rests on is a note, not a warning
    assert f"profet: note: {target} was never measured at several batch sizes" in err
    assert "profet: warning:" not in err


def test_a_measured_target_is_named_with_its_left_out_error(predictor):
    code, out, err = run(*TWO, "--target", "p3.2xlarge")
    assert code == 0 and err == ""
    assert " on p3.2xlarge (no interval: " in out
    assert out.rstrip().endswith("%)")


def test_without_target_the_line_says_the_curve_is_the_same_everywhere():
    code, out, _ = run(*TWO)
    assert code == 0 and "on any instance (the curve is the same on every one)" in out


def test_an_unknown_target_is_still_refused():
    code, _, err = run(*TWO, "--target", "nope.xlarge")
    assert code == 2 and "unknown target instance 'nope.xlarge'; known:" in err


def test_core_scale_accepts_every_listed_instance(predictor):
    for target in predictor.all_instances:
        got = float(predictor.scale(target, "input", {32: 5.0, 256: 69.0}, 128))
        assert got == pytest.approx(
            float(predictor.scale(None, "input", {32: 5.0, 256: 69.0}, 128))
        )
