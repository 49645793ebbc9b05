"""Property tests (hypothesis): whatever the input, experiment design gives a result with finite
numbers or a ProfetError; the CLI exits 0, or 2 with one ``profet: error:`` line."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profet_core.cli._main import main as profet_main
from profet_core.doe import analyze, read_results
from profet_core.errors import ProfetError

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Cells that have broken readers before, mixed with ordinary levels and numbers.
TOKENS = [
    "-1", "1", "0", "lo", "hi", "low", "high", "+", "-", "750m", "1500m", "1.5Gi", "3Gi",
    "", " ", "nan", "NaN", "null", "inf", "-inf", "1e308", "-1e308", "1e15", "1e16", "9" * 400,
    "-" + "9" * 400, "True", "false", "abc", '"a,b"', '"', "1_000", "0x10", "\u00e9", "\ud800",
]  # fmt: skip
NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(TOKENS),
)


GOOD_LEVELS = [("-1", "1"), ("lo", "hi"), ("750m", "1500m"), ("+", "-"), ("cnn", "resnet")]


def _mostly(draw, good, bad):
    """A draw from ``good`` 4 times in 5, else from ``bad``: deep paths and edge cases both."""
    return draw(good if draw(st.integers(0, 4)) else bad)


@st.composite
def tables(draw) -> bytes:
    """CSV bytes: a few factor columns and a response or two, with edge-case cells mixed in."""
    if draw(st.integers(0, 9)) == 0:  # sometimes plain noise
        return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    n_factors = draw(st.integers(1, 3))
    odd_name = st.sampled_from(["", "run", "y", "a:b", "x y", "C", "\u00e9"])
    header = [_mostly(draw, st.just("ABC"[i]), odd_name) for i in range(n_factors)]
    header += ["y", *draw(st.lists(st.sampled_from(["z", "y", "run"]), max_size=1))]
    pairs = [
        _mostly(draw, st.sampled_from(GOOD_LEVELS), st.tuples(*[st.sampled_from(TOKENS)] * 2))
        for _ in range(n_factors)
    ]
    value = st.floats(-1e3, 1e3).map(lambda v: f"{v:.6g}")
    lines = [",".join(header)]
    for _ in range(_mostly(draw, st.integers(4, 12), st.integers(0, 3))):
        cells = [draw(st.sampled_from(pair)) for pair in pairs]
        cells += [_mostly(draw, value, NUMBER) for _ in header[n_factors:]]
        lines.append(",".join(cells))
    sep = draw(st.sampled_from(["\n", "\r\n"]))
    return sep.join(lines).encode("utf-8", "surrogatepass")


def _assert_finite(result) -> None:
    for values in (
        result.effects["effect"],
        result.coefficients["coef"],
        result.residuals["fitted"],
        result.residuals["residual"],
        result.anova["sum_sq"],
    ):
        assert np.isfinite(values.to_numpy(dtype=float)).all(), values


@FUZZ
@given(data=tables(), which=st.integers(0, 3))
def test_read_results_and_analyze_give_finite_numbers_or_profet_error(data, which):
    try:
        df = read_results(data)
    except ProfetError:
        return
    columns = [str(c) for c in df.columns]
    response = "y" if which and "y" in columns else columns[which % len(columns)]
    try:
        result = analyze(df, response)
    except ProfetError:
        return
    _assert_finite(result)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = profet_main(argv)
    return code, out.getvalue(), err.getvalue()


LABEL = st.one_of(st.sampled_from(TOKENS), st.text(max_size=12))
ODD_FACTOR = st.one_of(
    st.tuples(LABEL, LABEL, LABEL).map(lambda t: f"{t[0]}={t[1]},{t[2]}"),
    st.text(max_size=20),
)
GENERATOR = st.builds(
    "{}={}{}".format,
    st.sampled_from("ABCDEFZ"),
    st.sampled_from(["", "-", "+"]),
    st.text(alphabet="ABCDEFabc", min_size=0, max_size=5),
)
WHOLE = st.integers(-(2**80), 2**80)


@st.composite
def design_argv(draw) -> list[str]:
    """Arguments of ``profet doe design``: mostly sensible, with odd values mixed in."""
    argv = ["doe", "design"]
    for i in range(draw(st.integers(1, 6))):
        lo, hi = draw(st.sampled_from(GOOD_LEVELS))
        # NAME=VALUE form: a value starting with '-' must not look like an option to argparse
        argv.append("--factor=" + _mostly(draw, st.just(f"f{i}={lo},{hi}"), ODD_FACTOR))
    for _ in range(draw(st.integers(0, 2))):
        argv.append("--generator=" + _mostly(draw, GENERATOR, st.text(max_size=12)))
    if draw(st.booleans()):
        argv.append(f"--replicates={_mostly(draw, st.integers(1, 4), WHOLE)}")
    if draw(st.booleans()):
        argv.append(f"--seed={_mostly(draw, st.integers(0, 2**32 - 1), WHOLE)}")
    if draw(st.booleans()):
        argv.append("--no-randomize")
    return argv


@FUZZ
@given(argv=design_argv())
def test_profet_doe_design_exits_0_or_2_with_one_error_line(argv):
    code, out, err = _run(argv)
    if code == 0:
        assert err == "" and "Run sheet:" in out
    else:
        assert code == 2
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("profet: error: "), err


@pytest.mark.parametrize(
    "argv",
    [
        ["doe", "design", "--factor=a=0,1", "--seed=4294967295"],
        ["doe", "design", "--factor=a=0,1", "--factor=b=x,y", "--replicates=3", "--seed=0"],
    ],
    ids=["largest-seed", "replicated"],
)
def test_design_edge_values_succeed(argv):
    code, out, err = _run(argv)
    assert (code, err) == (0, "") and "Run sheet:" in out
