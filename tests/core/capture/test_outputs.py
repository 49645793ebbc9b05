"""`profet profile --out` and `profet collect --out` follow the one write rule: never
over the model file, never replacing a file PROFET did not write, temporary names that no
user's file has; checked before anything runs (TensorFlow is never imported here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from profet_core.capture._collect import check_collect_out
from profet_core.capture._profile import check_profile_out, meta_path_of
from profet_core.errors import ProfetValueError
from profet_core.inputs._convention import write_folder_convention
from profet_core.inputs._outputs import write_atomic
from tests._utils import ROOT
from tests.core.training.test_swap import snapshot


def _cli(*argv, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "profet_core", *map(str, argv)]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("target", ["model", "meta"], ids=["out-is-model", "meta-is-model"])
def test_profile_out_never_replaces_the_model_file(target, tmp_path):
    model = tmp_path / ("model.py" if target == "model" else "r.meta.json")
    model.write_text("def build_model(input_shape, classes):\n    raise SystemExit\n")
    out = model if target == "model" else tmp_path / "r.json"
    before = snapshot(tmp_path)
    proc = _cli("profile", model, "--batch-size", 8, "--input-size", 32, "--out", out, cwd=tmp_path)
    assert proc.returncode == 2 and "overlaps the input" in proc.stderr, proc.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("which", ["profile", "meta"])
def test_profile_out_refuses_a_users_file(which, tmp_path):
    out = tmp_path / "results.json"
    (out if which == "profile" else meta_path_of(out)).write_text('{"mine": 1}')
    before = snapshot(tmp_path)
    proc = _cli("profile", "mlp", "--batch-size", 8, "--input-size", 32, "--out", out, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "PROFET did not write it; give --out a new file name" in proc.stderr
    assert snapshot(tmp_path) == before


def test_profile_out_replaces_its_own_untouched_pair(tmp_path):
    import hashlib
    import json

    out = tmp_path / "p.json"
    out.write_text("[]\n")
    record = {"profet_files": {"p.json": hashlib.sha256(b"[]\n").hexdigest()}}
    meta_path_of(out).write_text(json.dumps(record))
    check_profile_out(out)  # ours: may be replaced
    out.write_text("[1]\n")  # edited since
    with pytest.raises(ProfetValueError, match="changed after PROFET wrote it"):
        check_profile_out(out)


def test_temporary_names_never_consume_a_users_file(tmp_path):
    users = {
        ".keep.json.tmp": b"mine 1",
        ".convention.json.tmp": b"mine 2",
        ".profet-tmp-keep.json": b"mine 3",
    }
    for name, data in users.items():
        (tmp_path / name).write_bytes(data)
    write_atomic(tmp_path / "keep.json", b"[]")
    write_folder_convention(tmp_path)
    for name, data in users.items():
        assert (tmp_path / name).read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*users, "keep.json", "convention.json"]
    )


def test_collect_out_refuses_a_folder_it_did_not_make(tmp_path):
    (tmp_path / "thesis.tex").write_text("mine")
    with pytest.raises(ProfetValueError, match="is not a dataset folder `profet collect` made"):
        check_collect_out(tmp_path)
    check_collect_out(tmp_path / "new")
    (tmp_path / "new").mkdir()
    check_collect_out(tmp_path / "new")  # empty
    write_folder_convention(tmp_path / "new")
    check_collect_out(tmp_path / "new")  # collect's
