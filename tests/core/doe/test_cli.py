"""``profet doe design`` and ``profet doe analyze``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profet_core.doe import demo_results, make_design, montgomery_filtration_example
from profet_core.doe._cli import main
from tests.core.doe._utils import STUDY

ROOT = Path(__file__).resolve().parents[3]


def test_cli_design_prints_and_writes(tmp_path, capsys):
    argv = [
        "design",
        *[a for f in STUDY for a in ("--factor", f)],
        "--generator",
        "D=ABC",
        "--replicates",
        "4",
        "--seed",
        "1",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Defining relation: I = ABCD" in out and "Resolution: IV" in out
    assert "AB = CD" in out
    sheet = pd.read_csv(tmp_path / "run_sheet.csv")
    assert len(sheet) == 32
    assert list(sheet.columns) == [
        "run",
        "std_order",
        "replicate",
        "cpu",
        "memory",
        "network",
        "epochs",
    ]
    assert set(sheet["memory"]) == {"1.5Gi", "3Gi"}


def test_cli_analyze_prints_and_writes(tmp_path, capsys):
    path = tmp_path / "mont.csv"
    montgomery_filtration_example().to_csv(path, index=False)
    out_dir = tmp_path / "out"
    assert main(["analyze", str(path), "--response", "filtration_rate", "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "No error term" in out and "AC = BD" in out and "-18.5" in out
    effects = pd.read_csv(out_dir / "filtration_rate_effects.csv")
    assert effects["effect"].tolist() == pytest.approx([19, 1.5, 14, 16.5, -1, -18.5, 19])
    assert (out_dir / "filtration_rate_half_normal.html").is_file()
    assert (out_dir / "plotly.min.js").is_file()


def test_cli_analyze_two_responses_with_factor_list(tmp_path, capsys):
    d = make_design(STUDY, "D=ABC", replicates=2, seed=1)
    path = tmp_path / "r.csv"
    demo_results(d).to_csv(path, index=False)
    code = main(
        [
            "analyze",
            str(path),
            "--response",
            "accuracy",
            "--response",
            "train_time_s",
            "--factors",
            "cpu,memory,network,epochs",
            "--levels",
            "network=FashionMNISTCNN,FashionMNISTResNet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "Response: accuracy" in out and "Response: train_time_s" in out
    assert "ANOVA (type III)" in out and "Shapiro-Wilk" in out
    assert "alphabetically" not in out


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["design", "--factor", "cpu=1"], "'cpu' has 1 level"),
        (
            ["design", "--factor", "a=0,1", "--factor", "b=0,1", "--generator", "C=AB"],
            "only A, B exist",
        ),
        (["analyze", "missing.csv", "--response", "y"], "does not exist"),
    ],
    ids=["one-level", "bad-generator", "missing-file"],
)
def test_cli_errors_exit_2_with_message(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("profet: error:") and match in err


# ------------------------------------------------------------- hardening: exit 2, one line
def _results_file(tmp_path, last: str):
    df = montgomery_filtration_example().astype({"filtration_rate": object})
    df.loc[7, "filtration_rate"] = last
    path = tmp_path / "results.csv"
    df.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize(
    ("make_argv", "match"),
    [
        (
            lambda p: ["analyze", _results_file(p, "inf"), "--response", "filtration_rate"],
            r"row 8: the value inf is not a finite number",
        ),
        (
            lambda p: ["analyze", _results_file(p, "1e308"), "--response", "filtration_rate"],
            r"row 8: the value 1e308 is beyond 1e15",
        ),
        (
            lambda p: ["analyze", _results_file(p, "9" * 400), "--response", "filtration_rate"],
            r"row 8: the value 9{20}\.\.\. \(400 characters\) is not a finite number",
        ),
        (
            lambda p: ["analyze", str(p / ("r" * 300 + ".csv")), "--response", "y"],
            r"results file .* a name in the path is longer than 255 bytes",
        ),
        (lambda p: ["analyze", str(p), "--response", "y"], r"is a folder, not a regular file"),
        (
            lambda p: ["analyze", "/dev/null", "--response", "y"],
            r"'/dev/null' is a character device, not a regular file",
        ),
        (lambda p: ["analyze", "", "--response", "y"], r"results file path is empty"),
        (
            lambda p: ["design", "--factor", "a=0,1", "--seed", "-1"],
            r"seed must be a whole number from 0 to 4294967295; got -1",
        ),
        (
            lambda p: ["design", "--factor", "a=0,1", "--seed", str(2**32)],
            r"seed must be a whole number from 0 to 4294967295; got 4294967296",
        ),
        (
            lambda p: ["design", "--factor", "a=0,1", "--replicates", "-3"],
            r"replicates must be a whole number from 1 to 10000; got -3",
        ),
        (
            # a carriage return in a level is shown escaped, not sent to the terminal
            lambda p: ["design", "--factor=x=,0\r0"],
            r"'x' has 1 level\(s\) \('0\\r0'\)",
        ),
    ],
    ids=[
        "inf",
        "1e308",
        "400-digits",
        "long-name",
        "directory",
        "dev-null",
        "empty-path",
        "seed-negative",
        "seed-too-big",
        "replicates-negative",
        "carriage-return",
    ],
)
def test_profet_doe_bad_input_exits_2_with_one_line(tmp_path, capsys, make_argv, match):
    from profet_core.cli._main import main as profet_main

    assert profet_main(["doe", *make_argv(tmp_path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("profet: error: ")
    assert re.search(match, lines[0])
    assert captured.out == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_results_path_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    # a separate process: were it to block on the pipe, the timeout ends it and the test fails
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "profet_core", "doe", "analyze", fifo.name, "--response", "y"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # a short path: the message quotes it whole
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"profet: error: results file {fifo.name!r} is a named pipe (FIFO), not a regular file"
    ]
