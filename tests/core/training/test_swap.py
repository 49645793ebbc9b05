"""`profet train --out` and `profet add-instance` replace only folders PROFET wrote, and a kill at
any step loses nothing (the data-loss cases D1-D6 of the audit). Real processes, killed for real by
``PROFET_TEST_STOP_AT`` (the process SIGKILLs itself at that step)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from profet_core import load_artifacts, make_dataset, train
from tests._cli import run_cli
from tests._utils import make_synthetic, synthetic_catalog

# Real `profet train` processes, killed at each step: seconds each.
pytestmark = pytest.mark.slow


def cli(*argv, stop=None, portable=False):
    """``profet *argv`` in a process of its own (tests/_cli.py), SIGKILLed at ``stop``."""
    env = dict(os.environ)
    env.pop("PROFET_TEST_STOP_AT", None)
    env.pop("PROFET_TEST_NO_EXCHANGE", None)
    if stop:
        env["PROFET_TEST_STOP_AT"] = stop
    if portable:
        env["PROFET_TEST_NO_EXCHANGE"] = "1"
    return run_cli(*argv, env=env)


def snapshot(folder: Path) -> dict:
    """Every entry under ``folder`` (and its bytes, for files)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    prof, lat = make_synthetic(n_arch=2, n_exp=2)
    d = tmp_path_factory.mktemp("swapdata")
    prof.to_parquet(d / "profiles.parquet")
    lat.to_csv(d / "latencies.csv", index=False)
    synthetic_catalog().to_csv(d / "instances.csv", index=False)
    return d


@pytest.fixture(scope="module")
def old_art(tmp_path_factory) -> Path:
    """Artifacts trained with threshold 6 (the runs under test train with threshold 5)."""
    out = tmp_path_factory.mktemp("oldart") / "artifacts"
    dataset = make_dataset(*make_synthetic(n_arch=2, n_exp=2))
    train(dataset, synthetic_catalog(), out, methods=["hybrid"], intervals=False, threshold=6.0)
    return out


def _train(data, out, **kw):
    # Three trees per ensemble: what is under test is the folder, not the model (a third less
    # CPU per run).
    argv = ["train", "--data", data, "--out", out, "--methods", "hybrid", "--no-intervals"]
    return cli(*argv, "--threshold", 5, "--trees", 3, **kw)


def _threshold(art: Path) -> float:
    return json.loads((art / "manifest.json").read_text())["threshold"]


def _ours(parent: Path) -> list:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".profet-"))


def _user_folder(tmp_path) -> Path:
    out = tmp_path / "mine"
    (out / "sub").mkdir(parents=True)
    (out / "thesis.tex").write_text("years of work")
    (out / "sub" / "data.csv").write_text("a,b\n1,2\n")
    return out


def _artifacts_plus_notes(tmp_path, old_art) -> Path:
    out = tmp_path / "art"
    shutil.copytree(old_art, out)
    (out / "notes.txt").write_text("my notes")
    return out


def _a_file(tmp_path) -> Path:
    out = tmp_path / "results.csv"
    out.write_text("precious\n")
    return out


def _a_link(tmp_path, old_art) -> Path:
    out = tmp_path / "link"
    out.symlink_to(old_art)
    return out


OUTS = {
    "user-folder": (lambda tmp, art: _user_folder(tmp), "no readable manifest.json"),
    "artifacts-with-user-file": (_artifacts_plus_notes, "'notes.txt', which the manifest"),
    "a-file": (lambda tmp, art: _a_file(tmp), "it is not a folder"),
    "a-symlink": (_a_link, "symbolic link"),
}


@pytest.mark.parametrize("case", list(OUTS), ids=list(OUTS))
def test_d1_d4_out_that_is_not_ours_is_refused_first_and_kept(
    case, tmp_path, old_art, unreadable_data
):
    make, match = OUTS[case]
    out = make(tmp_path, old_art)
    before, around = snapshot(tmp_path), sorted(os.listdir(tmp_path))
    art_before = snapshot(old_art)
    proc = _train(unreadable_data, out)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("profet: error: output folder")
    assert match in proc.stderr and "profiles" not in proc.stderr  # before reading the data
    assert snapshot(tmp_path) == before and sorted(os.listdir(tmp_path)) == around
    assert snapshot(old_art) == art_before


@pytest.mark.parametrize("where", ["equal", "inside", "containing"])
def test_d3_out_overlapping_the_data_is_refused(where, tmp_path, data):
    d = tmp_path / "outer" / "data"
    shutil.copytree(data, d)
    out = {"equal": d, "inside": d / "artifacts", "containing": d.parent}[where]
    before = snapshot(tmp_path)
    proc = _train(d, out)
    assert proc.returncode == 2
    assert "overlaps the dataset folder" in proc.stderr and proc.stderr.count("\n") == 1
    assert snapshot(tmp_path) == before


def test_d2_users_old_folder_beside_out_is_kept(tmp_path, old_art, data):
    out = tmp_path / "art"
    shutil.copytree(old_art, out)
    (tmp_path / "art.old").mkdir()
    (tmp_path / "art.old" / "keep.txt").write_text("mine")
    # A temporary folder of a training still running (this process's pid) is left alone.
    live = tmp_path / ".profet-train-0123456789abcdef"
    live.mkdir()
    record = {"profet": "temporary folder", "pid": os.getpid(), "nonce": "0123456789abcdef"}
    (tmp_path / f"{live.name}.owner").write_text(json.dumps(record))
    inode = out.stat().st_ino
    proc = _train(data, out)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "art.old" / "keep.txt").read_text() == "mine"
    assert _threshold(out) == 5 and load_artifacts(out).instances == ["gpu-a", "gpu-b", "gpu-c"]
    trees = json.loads((out / "manifest.json").read_text())["method_params"]["hybrid"]
    assert trees == {"n_trees_et": 3, "n_trees_gb": 3}
    assert out.is_dir() and not out.is_symlink()
    if sys.platform.startswith("linux"):  # exchanged atomically: a new folder, no rename chain
        assert out.stat().st_ino != inode
    assert _ours(tmp_path) == [live.name, f"{live.name}.owner"]


def test_unwritable_out_is_refused_first(tmp_path, unreadable_data):
    (tmp_path / "a-file").write_text("x")
    proc = _train(unreadable_data, tmp_path / "a-file" / "art")
    assert proc.returncode == 2 and "cannot write the output folder" in proc.stderr
    assert (tmp_path / "a-file").read_text() == "x"


#: Step -> which version a kill there leaves at --out (exchange) / with the portable swap (None:
#: not a step of that swap, or the same code path as the exchange's).
STEPS = {
    "temp-created": ("old", None),
    "before-swap": ("old", None),
    "old-moved": (None, "missing"),
    "after-swap": ("new", "new"),
    "old-removed": ("new", None),
}
CASES = [(step, portable) for step in STEPS for portable in (False, True) if STEPS[step][portable]]


@pytest.mark.parametrize(
    "step,portable", CASES, ids=[f"{s}-{'portable' if p else 'exchange'}" for s, p in CASES]
)
def test_d6_a_kill_at_any_step_leaves_a_complete_folder(step, portable, tmp_path, old_art, data):
    out = tmp_path / "art"
    shutil.copytree(old_art, out)
    (tmp_path / ".profet-train-user").mkdir()  # a look-alike of the user's: no owner file
    (tmp_path / ".profet-train-user" / "x").write_text("mine")
    proc = _train(data, out, stop=step, portable=portable)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    expect = STEPS[step][portable]
    if expect == "missing":  # the portable swap's one moment without --out; restored below
        assert not out.exists()
    else:
        assert _threshold(out) == {"old": 6, "new": 5}[expect]
        load_artifacts(out)  # complete and verified
    # The next run (here one refused in its first second) cleans up after the killed one.
    proc = cli("train", "--data", data, "--out", out, "--validation", tmp_path / "none")
    assert proc.returncode == 2 and "--validation" in proc.stderr
    assert _threshold(out) == (5 if expect == "new" else 6)
    load_artifacts(out)
    assert _ours(tmp_path) == [".profet-train-user"]
    assert (tmp_path / ".profet-train-user" / "x").read_text() == "mine"


@pytest.fixture(scope="module")
def cross_art(tmp_path_factory):
    from tests.core.crossgpu._utils import make_multi_gpu, train_cross

    prof, lat = make_multi_gpu(n_arch=3)
    measured = ["gpu-a", "gpu-b", "gpu-c"]
    out = tmp_path_factory.mktemp("crossart") / "artifacts"
    train_cross(prof, lat, out, trees=(10, 10), measured=measured)
    data = out.parent / "data"
    data.mkdir()
    few = lambda t: t[t["instance"].isin([*measured, "gpu-d"]) & t["model"].eq("Net0")]  # noqa: E731
    few(prof).to_parquet(data / "profiles.parquet")
    few(lat).to_parquet(data / "latencies.parquet")
    return out, data


@pytest.mark.parametrize("stop", [None, "after-swap"], ids=["completes", "killed-after-swap"])
def test_d5_add_instance_keeps_users_old_folder_and_survives_a_kill(stop, cross_art, tmp_path):
    src, data = cross_art
    art = tmp_path / "art"
    shutil.copytree(src, art)
    (tmp_path / "art.old").mkdir()
    (tmp_path / "art.old" / "keep.txt").write_text("mine")
    argv = ["add-instance", "--instance", "gpu-d", "--data", data, "--artifacts", art]
    proc = cli(*argv, stop=stop)
    assert proc.returncode == (-signal.SIGKILL if stop else 0), proc.stderr
    assert (tmp_path / "art.old" / "keep.txt").read_text() == "mine"
    assert load_artifacts(art).cross.basis("gpu-d").startswith("calibrated")
    if not stop:
        assert _ours(tmp_path) == []


def test_add_instance_refuses_artifacts_holding_a_users_file(cross_art, tmp_path):
    src, data = cross_art
    art = tmp_path / "art"
    shutil.copytree(src, art)
    (art / "notes.txt").write_text("mine")
    before = snapshot(tmp_path)
    proc = cli("add-instance", "--instance", "gpu-d", "--data", data, "--artifacts", art)
    assert proc.returncode == 2 and "'notes.txt', which the manifest" in proc.stderr
    assert snapshot(tmp_path) == before
