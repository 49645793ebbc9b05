"""Every option checked with its neighbours: a GPU count no offering has, empty or
wordless filters, a filter that matches nothing, the AMP latency and --params out of sense,
options that cannot apply; each refused in one line (exit 2) that says what exists, or noted."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout

import pytest

from tests._utils import ROOT, run

PROFILE = ROOT / "examples" / "profile_g3s.json"
PREDICT = ("predict", "--profile", PROFILE)
DIGITS = "1" * 400

REFUSED = {
    # the most GPUs an offering rents (gcp a2-megagpu-16g: 16 x A100), in both views
    "gpus-17": ((*PREDICT, "--gpus", "17"), "no target has that many GPUs; the most any .* is 16"),
    "gpus-17-offerings": ((*PREDICT, "--offerings", "--gpus", "17"), "the most any has is 16"),
    "gpus-64-json": ((*PREDICT, "--gpus", "64", "--format", "json"), "the most any .* is 16"),
    "gpus-1_0": ((*PREDICT, "--gpus", "1_0"), r"--gpus '1_0' is not allowed"),
    "cloud-empty": ((*PREDICT, "--cloud", ""), "--cloud '' names nothing"),
    "gpu-dash": ((*PREDICT, "--gpu", "-"), "--gpu '-' names nothing"),
    "gpu-bangs": ((*PREDICT, "--gpu", "!!!"), "--gpu '!!!' names nothing"),
    "cloud-foo": (
        (*PREDICT, "--cloud", "foo"),
        "no offering matches cloud 'foo'; clouds offered: 'aws'",
    ),
    "gpu-unknown": ((*PREDICT, "--gpu", "Z99"), "matches GPU 'Z99'; GPUs offered: "),
    "region-unknown": ((*PREDICT, "--region", "mars"), "matches region 'mars'; regions offered"),
    "lambda-spot": ((*PREDICT, "--cloud", "lambda", "--spot"), "'lambda' has a spot price in"),
    "price-cap": ((*PREDICT, "--max-usd-per-hour", "0.001"), "the cheapest costs"),
    "no-spec-model": ((*PREDICT, "--gpu", "MI300X"), "'MI300X' have no spec model"),
    "instances-cloud-foo": (("instances", "--cloud", "foo"), "no offering matches cloud 'foo'"),
    "instances-targets-filter": (("instances", "--targets", "--cloud", "aws"), "--targets lists"),
    "params-half": ((*PREDICT, "--params", "0.5"), "params 0.5 is not allowed; .* 1 to 1e\\+12"),
    "params-huge": ((*PREDICT, "--params", "1e30"), "params 1e\\+30 is not allowed"),
    "amp-latency-absurd": (
        (*PREDICT, "--precision", "amp", "--anchor-amp-latency-ms", "5800"),
        "AMP latency 5800 ms is .*x the anchor's FP32 step",
    ),
    "latency-400-digits": (
        (*PREDICT, "--anchor-latency-ms", DIGITS),
        "400-digit number\\) ms is not",
    ),
    "amp-400-digits": (
        (*PREDICT, "--anchor-amp-latency-ms", DIGITS),
        "400-digit number\\) ms is not",
    ),
    "size-400-digits": (
        (
            "scale",
            "--target",
            "p3.2xlarge",
            "--by",
            "batch",
            "--latency-ms",
            "10",
            "--size-from",
            "32",
            "--size",
            DIGITS,
            "--other-size",
            "32",
        ),
        "--size: 1{40}\\.\\.\\. is out of range",
    ),
    "scale-latency-400-digits": (
        (
            "scale",
            "--target",
            "p3.2xlarge",
            "--by",
            "batch",
            "--latency-ms",
            DIGITS,
            "--size-from",
            "32",
            "--size",
            "64",
            "--other-size",
            "32",
        ),
        "400-digit number\\); it must be a number of ms",
    ),
    "refresh-out-empty": (
        ("offerings", "refresh", "--catalog", ROOT, "--out", ""),
        "--out '' is empty",
    ),
    "refresh-catalog-file": (
        ("offerings", "refresh", "--catalog", PROFILE),
        "is not a folder",
    ),
}


def _run(*argv):
    """:func:`run`, with the parser's own refusals (SystemExit 2) kept as an exit code."""
    from profet_core.cli._main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(map(str, argv)))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", list(REFUSED), ids=list(REFUSED))
def test_refused_in_one_line_saying_what_exists(case):
    argv, match = REFUSED[case]
    code, out, err = _run(*argv)
    assert code == 2, (code, err[-500:])
    assert err.count("\n") == 1 and "targets is empty" not in err, err
    assert re.search(match, err), err


NOTED = {
    "params-one-gpu": ((*PREDICT, "--params", "1e6"), "params is used only for several GPUs"),
    "amp-anchor-without-tensor-cores": (
        (*PREDICT, "--precision", "amp", "--anchor-amp-latency-ms", "60"),
        "is not used: the anchor's GPU has no FP16 tensor cores",
    ),
    "batch-at-odds": ((*PREDICT, "--batch-size", "64"), "the profile was taken at batch 32"),
    "run-without-batch": (
        (*PREDICT, "--dataset-images", "50000", "--epochs", "2", "--format", "csv"),
        None,
    ),
}


@pytest.mark.parametrize("case", list(NOTED), ids=list(NOTED))
def test_answered_with_a_note(case):
    argv, note = NOTED[case]
    code, out, err = run(*argv)
    assert code == 0, err[-500:]
    if note is None:  # the profile's batch size (32) is used
        assert "run_usd" in out.splitlines()[0]
    else:
        assert note in err, err
