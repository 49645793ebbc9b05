"""The one write rule (the cases that lost a user's files): `add-instance` checks its spec lines and data
before writing and holds the artifacts' lock; `train --out` refuses paths it cannot swap and
folders it cannot fully read; `validate --out` writes only new folders or its own; owner records
are read bounded; a killed portable swap is found by the loader."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from profet_core import load_artifacts
from profet_core.errors import ArtifactError, ProfetValueError
from profet_core.inputs import _outputs
from profet_core.training import _swap
from tests._cli import run_cli, start_cli
from tests._utils import ROOT
from tests.core.training.test_swap import cli, snapshot

# Real `profet` processes per case: seconds each.
pytestmark = pytest.mark.slow


def _art_and_data(tmp_path, src, instances=("gpu-d",), factor=1.0) -> tuple[Path, Path]:
    """A copy of the cross-instance artifacts and a data folder with ``instances``' runs of one
    architecture (their latencies times ``factor``) and the measured instances'."""
    from tests.core.crossgpu._utils import make_multi_gpu

    art = tmp_path / "art"
    shutil.copytree(src, art)
    prof, lat = make_multi_gpu(n_arch=3)
    keep = ["gpu-a", "gpu-b", "gpu-c", *instances]
    few = lambda t: t[t["instance"].isin(keep) & t["model"].eq("Net0")]  # noqa: E731
    lat = few(lat).copy()
    new = lat["instance"].isin(instances)
    lat.loc[new, "batch_latency_s"] *= factor
    data = tmp_path / "data"
    data.mkdir()
    few(prof).to_parquet(data / "profiles.parquet")
    lat.to_parquet(data / "latencies.parquet")
    return art, data


@pytest.fixture(scope="module")
def cross_src(tmp_path_factory) -> Path:
    from tests.core.crossgpu._utils import make_multi_gpu, train_cross

    prof, lat = make_multi_gpu(n_arch=3)
    out = tmp_path_factory.mktemp("cross") / "artifacts"
    return train_cross(prof, lat, out, trees=(10, 10), measured=["gpu-a", "gpu-b", "gpu-c"])


def _specs_file(tmp_path, **changes) -> Path:
    from tests.core.crossgpu._utils import spec_table

    specs = spec_table()
    specs = specs[specs["instance"] == changes.pop("base", "gpu-d")].copy()
    for col, value in changes.items():
        specs[col] = value
    path = tmp_path / "specs.csv"
    specs.to_csv(path, index=False)
    return path


SPEC_CASES = {
    "name-with-spaces": ({"instance": "my a100 box"}, "instance name 'my a100 box'"),
    "name-html": ({"instance": "<b>x</b>"}, "is not allowed"),
    "name-formula": ({"instance": "=1+1"}, "is not allowed"),
    "redefines-trained": (
        {"base": "gpu-a", "fp32_tflops": 999.0},
        "changes fp32_tflops (4.0 -> 999.0) of an instance the artifacts were trained on",
    ),
}


@pytest.mark.parametrize("case", list(SPEC_CASES), ids=list(SPEC_CASES))
def test_add_instance_spec_lines_are_checked_before_writing(case, cross_src, tmp_path):
    art, data = _art_and_data(tmp_path, cross_src)
    changes, match = SPEC_CASES[case]
    specs = _specs_file(tmp_path, **changes)
    before = snapshot(tmp_path)
    argv = ["add-instance", "--instance", "gpu-d", "--data", data, "--artifacts", art]
    proc = cli(*argv, "--specs", specs)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert match in proc.stderr
    assert snapshot(tmp_path) == before
    load_artifacts(art)  # still loads


def test_add_instance_accepts_a_trained_line_unchanged(cross_src, tmp_path):
    art, data = _art_and_data(tmp_path, cross_src)
    from tests.core.crossgpu._utils import spec_table

    spec_table().to_csv(tmp_path / "all.csv", index=False)  # the whole catalog, unchanged
    argv = ["add-instance", "--instance", "gpu-d", "--data", data, "--artifacts", art]
    proc = cli(*argv, "--specs", tmp_path / "all.csv")
    assert proc.returncode == 0, proc.stderr


def test_add_instance_refuses_data_far_off_its_gpu_with_the_ratio(cross_src, tmp_path):
    art, data = _art_and_data(tmp_path, cross_src, factor=1e5)
    before = snapshot(tmp_path)
    proc = cli("add-instance", "--instance", "gpu-d", "--data", data, "--artifacts", art)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert re.search(r"take 1\.0\de\+05x what its GPU's specs predict", proc.stderr)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["add-instance", "predict"])
def test_empty_artifacts_path_is_refused(command, tmp_path):
    shipped = snapshot(ROOT / "artifacts")
    if command == "add-instance":
        proc = cli(command, "--instance", "gpu-d", "--data", tmp_path, "--artifacts", "")
    else:
        profile = ROOT / "examples" / "profile_g3s.json"
        proc = cli(command, "--profile", profile, "--artifacts", "")
    # the CLI's own check or the library's type check: either names the empty artifacts path
    assert proc.returncode == 2
    assert re.search(r"artifacts (folder )?path('')? (''|is) ", proc.stderr), proc.stderr
    assert snapshot(ROOT / "artifacts") == shipped


def test_concurrent_add_instance_runs_all_land(cross_src, tmp_path):
    art, data = _art_and_data(tmp_path, cross_src, instances=("gpu-d", "gpu-e"))
    env = {**os.environ, "PROFET_LOCK_WAIT_S": "120"}
    env.pop("PROFET_TEST_STOP_AT", None)
    procs = [
        start_cli("add-instance", "--instance", name, "--data", data, "--artifacts", art, env=env)
        for name in ("gpu-d", "gpu-e")
    ]  # two processes at once
    for p in procs:
        done = p.wait(timeout=300)
        assert done.returncode == 0, done.stderr
    cross = load_artifacts(art).cross
    assert cross.basis("gpu-d").startswith("calibrated")
    assert cross.basis("gpu-e").startswith("calibrated")
    assert not list(tmp_path.glob(".profet-*"))


def test_lock_makes_a_second_writer_wait_then_refuses_it(tmp_path):
    folder = tmp_path / "art"
    folder.mkdir()
    with _outputs.folder_lock(folder) as path:
        assert path.read_text() == f"profet-lock pid {os.getpid()}\n"
        t0 = time.monotonic()
        with pytest.raises(ProfetValueError, match=rf"another PROFET process \(pid {os.getpid()}"):
            with _outputs.folder_lock(folder, wait_s=0.3):
                pass
        assert time.monotonic() - t0 >= 0.3
    assert not path.exists()
    with _outputs.folder_lock(folder, wait_s=0):  # free again
        pass


def test_lock_serialises_read_modify_write(tmp_path):
    folder = tmp_path / "art"
    folder.mkdir()
    (folder / "n").write_text("0")

    def bump():
        with _outputs.folder_lock(folder, wait_s=30):
            n = int((folder / "n").read_text())
            time.sleep(0.01)
            (folder / "n").write_text(str(n + 1))

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (folder / "n").read_text() == "8"


def test_lock_never_uses_a_users_file_of_its_name(tmp_path):
    folder = tmp_path / "art"
    folder.mkdir()
    mine = _outputs.lock_path(folder)
    mine.write_text("my notes")
    with pytest.raises(ProfetValueError, match="is not a lock file of PROFET"):
        with _outputs.folder_lock(folder, wait_s=0):
            pass
    assert mine.read_text() == "my notes"


@pytest.fixture()
def art(tmp_path, cross_src) -> Path:
    out = tmp_path / "art"
    shutil.copytree(cross_src, out)
    return out


def test_train_out_with_an_unreadable_subfolder_is_refused_and_nothing_moves(art, monkeypatch):
    # Run as root, a mode-700 folder is readable: os.walk's listing of it fails instead.
    (art / "validation" / "theirs").mkdir()
    before = snapshot(art.parent)
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("theirs"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(ProfetValueError, match=r"holds 'validation/theirs', which cannot be read"):
        _swap.check_out_folder(art)
    assert snapshot(art.parent) == before


def test_train_out_over_another_users_artifacts_is_refused(art, monkeypatch):
    before = snapshot(art.parent)
    monkeypatch.setattr(os, "geteuid", lambda: os.lstat(art).st_uid + 1)
    with pytest.raises(ProfetValueError, match="belongs to another user"):
        _swap.check_out_folder(art)
    assert snapshot(art.parent) == before


def test_a_temp_folder_that_cannot_be_removed_keeps_its_owner_record(tmp_path, monkeypatch):
    tmp = _swap.new_temp_folder(tmp_path / "art")
    (tmp / "x").write_text("old version")
    monkeypatch.setattr(_swap, "_rmtree", lambda path: None)  # e.g. another user's files
    _swap.remove_temp(tmp)
    assert (tmp / "x").exists() and tmp.with_name(tmp.name + ".owner").exists()


def _train(data, out, *extra):
    argv = ["train", "--data", data, "--out", out, "--methods", "hybrid", "--no-intervals"]
    argv += ["--trees", "3"]  # the folder is under test, not the model
    return cli(*argv, *extra)


BAD_OUTS = {
    "dot": (".", "is the current folder"),
    "dot-dot": ("..", "is the current folder"),
    "name-256": ("x" * 256, "longer than 255 bytes"),
    "mount-point": ("/proc", "mount point"),
    "loop": ("loop", "symlink loop"),
}


@pytest.mark.parametrize("case", list(BAD_OUTS), ids=list(BAD_OUTS))
def test_train_out_that_cannot_be_swapped_is_refused_before_reading(
    case, tmp_path, unreadable_data
):
    out, match = BAD_OUTS[case]
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    before = snapshot(tmp_path)
    proc = run_cli("train", "--data", unreadable_data, "--out", out, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert match in proc.stderr and "profiles" not in proc.stderr
    assert snapshot(tmp_path) == before


def test_train_validation_holding_a_link_to_dev_zero_is_refused(tmp_path, unreadable_data):
    val = tmp_path / "val"
    val.mkdir()
    (val / "run.json").write_text("{}")
    (val / "metrics.csv").symlink_to("/dev/zero")
    proc = _train(unreadable_data, tmp_path / "new", "--validation", val)
    assert proc.returncode == 2 and "a link or a special file" in proc.stderr
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_owner_record_named_like_ours_is_read_bounded(kind, tmp_path, unreadable_data):
    owner = tmp_path / ".profet-train-x.owner"
    if kind == "fifo":
        os.mkfifo(owner)
    else:
        owner.symlink_to("/dev/zero")
    (tmp_path / ".profet-train-x").mkdir()
    t0 = time.monotonic()
    proc = _train(unreadable_data, tmp_path / "new")  # refused reading the data
    assert proc.returncode == 2 and time.monotonic() - t0 < 60
    assert (tmp_path / ".profet-train-x").is_dir()  # not ours: kept


def test_loading_after_a_kill_between_the_portable_renames_says_where(tmp_path, art):
    tmp = _swap.new_temp_folder(art)
    owner = tmp.with_name(tmp.name + ".owner")
    record = json.loads(owner.read_text())
    owner.write_text(json.dumps({**record, "pid": 2**22 + 1, "out": str(art)}))
    os.rename(art, tmp.with_name(tmp.name + ".old"))  # as a kill after the first rename
    with pytest.raises(ArtifactError, match=r"moved aside to .*\.profet-train-.*\.old"):
        load_artifacts(art)
    _swap.clean_leftovers(art.parent)  # the next train puts it back
    load_artifacts(art)


# ---------------------------------------------------------------------------- validate --out
def _user_folder(tmp_path) -> Path:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "report.md").write_text("my report")
    (out / "metrics.csv").write_text("a\n1\n")
    return out


VALIDATE_OUTS = {
    "users-folder": (_user_folder, "exists and is not one `profet validate` wrote"),
    "equal-to-data": (lambda tmp: tmp / "data", "overlaps the input"),
    "inside-data": (lambda tmp: tmp / "data" / "v", "overlaps the input"),
    "inside-artifacts": (lambda tmp: tmp / "art" / "validation", "inside the artifacts folder"),
}


@pytest.mark.parametrize("case", list(VALIDATE_OUTS), ids=list(VALIDATE_OUTS))
def test_validate_out_is_new_or_its_own(case, tmp_path, cross_src):
    art, data = _art_and_data(tmp_path, cross_src)
    make, match = VALIDATE_OUTS[case]
    out = make(tmp_path)
    before = snapshot(tmp_path)
    proc = cli("validate", "--data", data, "--out", out, "--methods", "hybrid")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert match in proc.stderr
    assert snapshot(tmp_path) == before
    load_artifacts(art)


def test_a_command_folder_is_rewritten_only_while_untouched(tmp_path):
    out = tmp_path / "v"
    for _ in range(2):  # new, then its own
        _swap.check_command_out(out, "validate")
        with _swap.written_beside(out, "validate") as tmp:
            pd.DataFrame({"a": [1]}).to_csv(tmp / "metrics.csv", index=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v"]
    (out / "metrics.csv").write_text("edited\n")
    with pytest.raises(ProfetValueError, match="'metrics.csv' was changed after PROFET wrote it"):
        _swap.check_command_out(out, "validate")
    assert (out / "metrics.csv").read_text() == "edited\n"


def test_swap_errors_are_one_line_and_keep_the_old_folder(tmp_path, monkeypatch):
    out = tmp_path / "v"
    with _swap.written_beside(out, "validate") as tmp:
        (tmp / "a.csv").write_text("old")

    def exdev(*a, **k):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(_swap, "_renameat2", exdev)
    with pytest.raises(ProfetValueError, match="cannot put the new folder at"):
        with _swap.written_beside(out, "validate") as tmp:
            (tmp / "a.csv").write_text("new")
    assert (out / "a.csv").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v"]
