"""The CLI's edges: every flag checked before any work, argparse errors in the one-line
format, closed pipes and full disks without a traceback, and Parquet reads that start no Arrow
thread (whose teardown at exit aborted the process: exit 134)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profet_core.cli._main import main
from tests._utils import ROOT


def run(argv, capsys) -> tuple[int, str]:
    """``main(argv)``: exit code and stderr (argparse exits by SystemExit)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


FLAGS = {
    "dnn-epochs-0": (["train", "--dnn-epochs", "0"], "--dnn-epochs: 0 is not allowed"),
    "dnn-epochs-huge": (["train", "--dnn-epochs", "1" + "0" * 400], "--dnn-epochs: 1000"),
    "trees-0": (["train", "--trees", "0"], "--trees: 0 is not allowed"),
    "validate-trees-neg": (["validate", "--trees", "-3"], "--trees: -3"),
    "threshold-nan": (["train", "--threshold", "nan"], "--threshold: 'nan' is not allowed"),
    "threshold-inf": (["train", "--threshold", "-inf"], "--threshold: '-inf' is not allowed"),
    "threshold-negative": (["train", "--threshold", "-1"], "--threshold: -1 is not allowed"),
    "validate-dnn-epochs": (["validate", "--dnn-epochs", "-3"], "--dnn-epochs: -3"),
    "profile-classes-1": (
        ["profile", "m.py", "--batch-size", "8", "--input-size", "32", "--classes", "1"],
        "--classes: 1 is not allowed",
    ),
    "collect-timeout-0": (
        ["collect", "--instance", "x", "--out", "o", "--timeout", "0"],
        "--timeout: 0 is not allowed",
    ),
    "collect-price-negative": (
        ["collect", "--instance", "x", "--out", "o", "--gpu", "T4", "--usd-per-hour", "-1"],
        "--usd-per-hour: -1 is not allowed",
    ),
    "collect-price-nan": (
        ["collect", "--instance", "x", "--out", "o", "--gpu", "T4", "--usd-per-hour", "nan"],
        "--usd-per-hour: 'nan'",
    ),
}


@pytest.mark.parametrize("case", list(FLAGS), ids=list(FLAGS))
def test_bad_flags_are_refused_at_parse_time(case, capsys, unreadable_data, tmp_path):
    argv, match = FLAGS[case]
    if argv[0] in ("train", "validate"):
        argv = [*argv, "--data", unreadable_data]
    code, err = run(argv, capsys)
    assert code == 2 and err.startswith("profet: error: argument ") and err.count("\n") == 1
    assert match in err and len(err) < 300  # no 400-digit number echoed


def test_file_flags_are_checked_before_the_data_are_read(capsys, unreadable_data, tmp_path):
    base = ["train", "--data", unreadable_data, "--out", tmp_path / "art"]
    code, err = run([*base, "--catalog", tmp_path / "none.csv"], capsys)
    assert code == 2 and "instance catalog" in err and "none.csv" in err
    code, err = run([*base, "--validation", tmp_path / "noval"], capsys)
    assert code == 2 and "--validation" in err and "run.json" in err
    cal = ["add-instance", "--instance", "x", "--data", unreadable_data, "--specs"]
    code, err = run([*cal, tmp_path / "none.csv", "--artifacts", tmp_path / "a"], capsys)
    assert code == 2 and "none.csv" in err
    code, err = run(["validate", "--data", unreadable_data, "--cross", "--specs", "/no"], capsys)
    assert code == 2 and "'/no'" in err
    assert not (tmp_path / "art").exists()


USAGE = {
    "no-command": [],
    "unknown-command": ["fly"],
    "predict-missing-profile": ["predict"],
    "train-unknown-flag": ["train", "--bogus"],
    "bad-choice": ["predict", "--profile", "p", "--format", "xml"],
    "doe-missing-subcommand": ["doe"],
    "doe-design-bad": ["doe", "design", "--bogus"],
    "profile-missing-model": ["profile"],
    "collect-missing-out": ["collect", "--instance", "x"],
    "bad-int": ["predict", "--profile", "p", "--steps", "two"],
}


@pytest.mark.parametrize("case", list(USAGE), ids=list(USAGE))
def test_argparse_errors_are_one_line(case, capsys):
    code, err = run(USAGE[case], capsys)
    assert code == 2
    assert err.startswith("profet: error: ") and err.count("\n") == 1, err
    assert "usage:" not in err and err.count("error:") == 1


def _cli(argv, **kw):
    cmd = [sys.executable, "-m", "profet_core", *map(str, argv)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, env=env, cwd=ROOT, timeout=120, **kw)


@pytest.fixture(scope="module")
def profile_csv(tmp_path_factory, synthetic_dataset) -> Path:
    prof = synthetic_dataset.profiles
    path = tmp_path_factory.mktemp("prof") / "profiles.csv"
    prof[prof["instance"] == "gpu-a"][synthetic_dataset.ops].to_csv(path, index=False)
    return path


def _commands(trained, profile_csv):
    return {
        "instances": ["instances", "--artifacts", trained],
        "predict-table": ["predict", "--anchor", "gpu-a", "--profile", profile_csv, "--artifacts"]
        + [trained],
        "predict-csv": ["predict", "--anchor", "gpu-a", "--profile", profile_csv, "--format"]
        + ["csv", "--artifacts", trained],
    }


@pytest.mark.parametrize("command", ["instances", "predict-table", "predict-csv"])
def test_a_closed_pipe_ends_quietly(command, trained, profile_csv):
    """`profet ... | head -1`, with the reader gone before the first write."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = _cli(_commands(trained, profile_csv)[command], stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    err = proc.stderr.decode()
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert not [
        line
        for line in err.splitlines()
        if not line.startswith(("profet: warning:", "profet: note:"))
    ]
    assert proc.returncode == 141


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("command", ["instances", "predict-csv"])
def test_a_full_disk_is_one_line(command, trained, profile_csv):
    with open("/dev/full", "w") as full:
        proc = _cli(_commands(trained, profile_csv)[command], stdout=full, stderr=subprocess.PIPE)
    err = [
        ln
        for ln in proc.stderr.decode().splitlines()
        if not ln.startswith(("profet: warning", "profet: note"))
    ]
    assert proc.returncode == 2
    assert err == ["profet: error: cannot write: No space left on device"]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_parquet_profiles_start_no_arrow_thread(tmp_path):
    """Arrow's I/O pool thread, torn down at exit, aborted 31 of 160 runs on an empty Parquet
    profile ("terminate called without an active exception", exit 134)."""
    empty, full = tmp_path / "empty.parquet", tmp_path / "one.parquet"
    pd.DataFrame({"Device_Conv2D": pd.Series([], dtype=float)}).to_parquet(empty)
    pd.DataFrame({"Device_Conv2D": [5.0], "Host_IDLE": [1.0]}).to_parquet(full)
    code = f"""
import os
from profet_core import read_profile
import pyarrow.parquet
before = len(os.listdir('/proc/self/task'))
for path in ({str(empty)!r}, {str(full)!r}):
    try:
        read_profile(path)
    except ValueError:
        pass
print(len(os.listdir('/proc/self/task')) - before)
"""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"
