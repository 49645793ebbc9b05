"""``profet NAME ...`` builds only NAME's parser: it must parse (and refuse) exactly as the full
parser does, message for message."""

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from profet_core.cli import _main

FULL_NAMES = sorted(next(a for a in _main.build_parser()._actions if a.dest == "command").choices)
#: Arguments every subcommand is tried with: nothing, unknown flags, a stray positional.
COMMON = ([], ["--nope"], ["stray"], ["--nope=1", "x"], ["--", "x"])
#: A few arguments that parse, and some that fail in the subcommand's own checks.
SAMPLES = {
    "train": [["--data", "d", "--out", "o"], ["--data", "d", "--threshold=-1"]],
    "predict": [
        ["--profile", "p.json", "--offerings"],
        ["--profile", "p.json", "--anchor-latency-ms=-3"],
        ["--profile", "p.json", "--format", "xml"],
        ["--profile", "p.json", "--prof", "q.json"],
    ],
    "add-instance": [["--instance", "i", "--data", "d", "--data", "e"], ["--instance", "i"]],
    "calibrate": [["--instance", "i", "--data", "d"]],
    "instances": [["--artifacts", "a"], ["--format", "json"]],
    "scale": [
        ["--by", "batch", "--size", "64", "--point", "32=20", "--point", "128=80"],
        ["--by", "batch", "--size=-1"],
        ["--point", "64"],
    ],
    "validate": [["--data", "d"], ["--data", "d", "--dnn-epochs", "0"]],
    "offerings": [["refresh", "--catalog", "c"], ["refresh"], ["nope"]],
    "doe": [["design", "--factor", "A"], ["analyze", "r.csv", "--response", "y"], ["nope"]],
    "profile": [["m.py", "--batch-size", "32", "--input-size", "224"], ["m.py", "--classes=-2"]],
    "collect": [["--instance", "i", "--out", "o"], ["--instance", "i", "--timeout=-1"]],
}


def _parse(parser_argv, argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            parsed, code = vars(_main.build_parser(parser_argv).parse_args(argv)), None
        except SystemExit as exc:
            parsed, code = None, exc.code
    return parsed, code, out.getvalue(), err.getvalue()


def test_every_subcommand_has_its_module():
    assert sorted(_main._COMMAND_MODULES) == FULL_NAMES


@pytest.mark.parametrize("name", FULL_NAMES, ids=FULL_NAMES)
def test_lazy_parser_registers_only_the_named_subcommand(name):
    choices = next(a for a in _main.build_parser([name])._actions if a.dest == "command").choices
    assert name in choices and len(choices) < len(FULL_NAMES)


CASES = [
    pytest.param([name, *extra], id=" ".join([name, *extra]))
    for name in FULL_NAMES
    for extra in [*COMMON, *SAMPLES.get(name, [])]
]


@pytest.mark.parametrize("argv", CASES)
def test_lazy_parser_parses_and_refuses_as_the_full_one(argv):
    argv = _main._join_numeric(argv)
    lazy, full = _parse(argv, argv), _parse(None, argv)
    assert lazy == full


@pytest.mark.parametrize(
    "argv",
    [[], ["-h"], ["--help"], ["nope"], ["predict", "-h"], ["predict", "--he"], ["-x", "predict"]],
    ids=["none", "-h", "--help", "unknown", "sub-help", "abbreviated-help", "option-first"],
)
def test_full_parser_when_no_known_command_or_help(argv):
    assert _main._only_module(argv) is None
    assert _parse(argv, argv) == _parse(None, argv)
