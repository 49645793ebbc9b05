"""The app's install leaves TensorFlow out (requirements.txt): each command that needs it says,
in one line and before any work, how to add it; the test install (requirements-dev.txt) has it."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from tests._utils import ROOT, run

TF_MODULES = {"tensorflow", "tf_keras", "tensorboard", "xprof"}
HINT = "pip install -e '.[capture]'"


@pytest.fixture
def without_tensorflow(monkeypatch):
    """``importlib.util.find_spec`` as an install without the capture extra answers it."""
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name.split(".")[0] in TF_MODULES else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    for name in TF_MODULES:  # and an import of them fails at once
        monkeypatch.setitem(sys.modules, name, None)


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("profet: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ("profile", "LeNet5", "--batch-size", "32", "--input-size", "32", "--out", "{tmp}/p.json"),
        ("collect", "--instance", "g5.xlarge", "--out", "{tmp}/collected", "--quick"),
        ("train", "--data", "{tmp}/none", "--out", "{tmp}/artifacts"),
        ("validate", "--data", "{tmp}/none", "--out", "{tmp}/validation"),
    ],
    ids=lambda a: a[0],
)
def test_a_command_that_needs_tensorflow_says_how_to_add_it(argv, tmp_path, without_tensorflow):
    code, out, err = run(*(a.format(tmp=tmp_path) for a in argv))
    line = _one_line(err)
    assert code == 2 and not out
    assert f"profet {argv[0]} needs TensorFlow" in line and HINT in line, line
    assert not any(tmp_path.iterdir()), "nothing is written before the refusal"


def test_training_without_the_reference_method_needs_no_tensorflow(tmp_path, without_tensorflow):
    """--methods hybrid trains without TensorFlow: the refusal is the data's, not the extra's."""
    code, _, err = run(
        "train", "--data", tmp_path / "none", "--methods", "hybrid", "--out", tmp_path / "a"
    )
    assert code == 2 and "TensorFlow" not in _one_line(err)


def test_a_missing_module_met_later_is_one_line(monkeypatch):
    """A module of an extra missing past the early checks (a library path that imports it) still
    ends in one line naming the extra, never a traceback."""
    from profet_core.cli import _instances

    def needs_tf(args):
        raise ModuleNotFoundError("No module named 'tensorflow'", name="tensorflow")

    monkeypatch.setattr(_instances, "run", needs_tf)
    code, _, err = run("instances")
    line = _one_line(err)
    assert code == 2 and "needs TensorFlow" in line and HINT in line


def test_the_app_install_leaves_tensorflow_out_and_the_test_install_has_it():
    def names(path):
        text = (ROOT / path).read_text()
        return {m.group(1).lower() for m in re.finditer(r"^([A-Za-z0-9_.-]+)\s*[<>=]", text, re.M)}

    app, dev = names("requirements.txt"), names("requirements-dev.txt")
    capture = {"tensorflow", "tensorboard", "xprof", "tf-keras"}
    assert not app & capture, app & capture
    assert capture <= dev and {"torch", "skypilot"} <= dev
    assert "-r requirements.txt" in (ROOT / "requirements-dev.txt").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies = \[(.*?)\]", pyproject, re.S | re.M).group(1)
    declared = {n.lower() for n in re.findall(r'"([A-Za-z0-9_.-]+)[<>=]', deps)}
    assert declared == app, "requirements.txt lists pyproject's dependencies, no more"
