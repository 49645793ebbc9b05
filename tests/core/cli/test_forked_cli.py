"""tests/_cli.py's forked commands behave as ``python -m profet_core`` does: the same exit code,
stdout and stderr, their own environment and folder, and a SIGKILL reported as -9."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests._cli import run_cli
from tests._utils import ROOT

CASES = {
    "help": ["train", "--help"],
    "usage-error": ["predict", "--no-such-flag"],
    "refusal": ["predict", "--profile", "no-such-profile.json"],
}


@pytest.mark.parametrize("argv", list(CASES.values()), ids=list(CASES))
def test_a_forked_command_answers_as_the_interpreter_does(argv, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    real = subprocess.run(
        [sys.executable, "-m", "profet_core", *argv],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    forked = run_cli(*argv, env=env, cwd=tmp_path, timeout=120)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def test_a_forked_command_has_its_own_environment_and_folder(tmp_path):
    # PROFET_ARTIFACTS is read when the command runs: a folder that is not there is refused
    # by name, relative to the command's own working folder.
    env = {**os.environ, "PROFET_ARTIFACTS": "missing-artifacts"}
    done = run_cli(
        "predict", "--profile", ROOT / "examples" / "profile_g3s.json", env=env, cwd=tmp_path
    )
    assert done.returncode == 2 and "missing-artifacts" in done.stderr, done.stderr
    assert "PROFET_ARTIFACTS" not in os.environ
    assert os.getcwd() != str(tmp_path)


def test_a_command_killed_at_a_step_reports_the_signal(tmp_path):
    from tests._utils import make_synthetic, synthetic_catalog

    data = tmp_path / "data"
    data.mkdir()
    prof, lat = make_synthetic(n_arch=2, n_exp=2)
    prof.to_parquet(data / "profiles.parquet")
    lat.to_csv(data / "latencies.csv", index=False)
    synthetic_catalog().to_csv(data / "instances.csv", index=False)
    env = {**os.environ, "PROFET_TEST_STOP_AT": "temp-created"}
    argv = ["train", "--data", data, "--out", tmp_path / "art", "--methods", "hybrid"]
    done = run_cli(*argv, "--no-intervals", "--trees", 3, env=env)
    assert done.returncode == -9 and not (tmp_path / "art").exists()
