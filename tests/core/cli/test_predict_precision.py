"""``profet predict --precision / --gpus / --anchor-amp-latency-ms / --params``."""

import io

import pandas as pd
import pytest

from tests._utils import run

PROFILE = "examples/profile_g3s.json"


def _csv(*extra) -> pd.DataFrame:
    code, out, err = run("predict", "--profile", PROFILE, "--format", "csv", *extra)
    assert code == 0, err
    return pd.read_csv(io.StringIO(out))


def test_default_output_has_fp32_one_gpu_columns_and_the_same_numbers():
    plain = _csv()
    explicit = _csv("--precision", "fp32", "--gpus", "1")
    pd.testing.assert_frame_equal(plain, explicit)
    assert (plain["precision"] == "fp32").all() and (plain["gpus"] == 1).all()


def test_amp_and_all_gpus_in_the_cli():
    fp32 = _csv().set_index("target")
    amp = _csv("--precision", "amp", "--gpus", "all", "--batch-size", "32")
    # every GPU count the offerings rent, one configuration each
    assert sorted(amp.loc[amp["target"] == "p4d.24xlarge", "gpus"]) == [1, 2, 4, 8, 16]
    assert amp["configuration"].is_unique
    amp = amp.set_index("configuration")
    assert amp.loc["1 x T4", "gpus"] == 1 and amp.loc["8 x A100 SXM4 40GB", "gpus"] == 8
    one_v100 = amp.loc["1 x V100 SXM2 16GB", "batch_latency_ms"]
    assert one_v100 < fp32.loc["p3.2xlarge", "batch_latency_ms"]
    assert (
        amp.loc["1 x K80 (one GK210)", "batch_latency_ms"]
        == fp32.loc["p2.xlarge", "batch_latency_ms"]
    )
    assert amp.loc["8 x A100 SXM4 40GB", "images_per_s"] > 0
    code, out, err = run("predict", "--profile", PROFILE, "--precision", "amp", "--gpus", "all")
    assert code == 0 and "images_per_s" in out and "no FP16 tensor cores" in err


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--gpus", "x"], "--gpus 'x' is not allowed"),
        (["--gpus", "0"], "gpus 0 is not allowed"),
        (["--params", "-5"], "params -5 is not allowed"),
        (["--anchor-amp-latency-ms", "20"], "only used with precision amp"),
    ],
    ids=["text", "zero", "params", "amp-latency-without-amp"],
)
def test_bad_options_exit_2_with_one_line(argv, match):
    code, out, err = run("predict", "--profile", PROFILE, *argv)
    assert code == 2 and err.count("\n") == 1 and match in err
