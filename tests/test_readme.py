"""Every example in the README runs as written: each `profet ...` line of its ```sh
blocks exits 0 from a copy of the repository's examples, and its ```python blocks execute."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._utils import SHARED

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


COMMANDS = [
    line.strip()
    for block in _blocks("sh")
    for line in block.splitlines()
    if line.strip().startswith("profet ")
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder laid out like the repository root, with ../shared beside it (a link)."""
    parent = tmp_path_factory.mktemp("clone")
    repo = parent / "repo"
    repo.mkdir()
    shutil.copytree(ROOT / "examples", repo / "examples")
    if SHARED.is_dir():
        (parent / "shared").symlink_to(SHARED.parent.parent)
    return repo


def test_readme_has_examples():
    assert len(COMMANDS) >= 8 and _blocks("python")


#: Examples that train or validate on the whole shared data: about a minute each.
SLOW = ("profet train ", "profet validate ", "profet sky-plan ", "profet profile ")


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=[pytest.mark.slow] if c.startswith(SLOW) else []) for c in COMMANDS],
    ids=[c[:60] for c in COMMANDS],
)
def test_cli_example_runs_as_written(command, workdir):
    if "../shared" in command and not SHARED.is_dir():
        pytest.skip(f"needs the shared data at {SHARED} (CI has it)")
    # `profet` is the venv's entry point; run it through this interpreter for the same code.
    line = command.replace("profet ", f"{shlex.quote(sys.executable)} -m profet_core ", 1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        line, shell=True, cwd=workdir, capture_output=True, text=True, env=env, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr


def test_python_example_runs(workdir, monkeypatch, capsys):
    monkeypatch.chdir(workdir)
    for block in _blocks("python"):
        exec(compile(block, "README.md", "exec"), {})
    assert "run_usd" in capsys.readouterr().out


def _layout_named() -> set[str]:
    """Module paths (from the repository root) that the README's Layout section names.

    A bullet that opens with a subpackage (`` `inputs/` ``) names its modules bare
    (`` `_profile.py` ``); the root's bullet opens with `` `profet_core/` ``, the app package's
    with `` `profet_app/` `` and the pages' with `` `app.py` `` (their files bare after the first,
    ``pages/``-prefixed one). A path with a folder in it counts in any bullet.
    """
    section = README[README.index("## Layout") :]
    named = set()
    for bullet in re.split(r"\n- ", section)[1:]:
        tokens = re.findall(r"`([^`]+)`", bullet)
        first = tokens[0] if tokens else ""
        if first == "app.py":
            base = "pages/"
        elif first in ("profet_core/", "profet_app/"):
            base = first
        elif (ROOT / "profet_core" / first).is_dir():
            base = f"profet_core/{first}"
        else:
            base = None
        for name in tokens:
            if name == "app.py" or not name.endswith(".py"):
                continue
            if "/" in name:
                named.add(name)
            elif base:
                named.add(base + name)
    return named


def test_layout_section_lists_every_module():
    modules = {
        str(p.relative_to(ROOT))
        for p in [
            *(ROOT / "profet_core").rglob("*.py"),
            *(ROOT / "pages").glob("*.py"),
            *(ROOT / "profet_app").glob("*.py"),
        ]
        if not (p.name == "__init__.py" and p.parent.name != "profet_core")
    }
    named = _layout_named()
    assert not modules - named, f"modules the README's Layout omits: {sorted(modules - named)}"
    assert not named - modules, (
        f"the Layout names modules that do not exist: {sorted(named - modules)}"
    )


#: What the Layout section says the top level holds, dot-files aside.
TOP_LEVEL = {
    "app.py",
    "pages",
    "profet_app",
    "profet_core",
    "artifacts",
    "tests",
    "bench",
    "docs",
    "examples",
    "deploy",
    "requirements.txt",
    "requirements-dev.txt",
    "pyproject.toml",
    "Dockerfile",
    "README.md",
}


def test_the_top_level_holds_what_the_layout_says():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: the tracked files are unknown")
    top = {f.split("/")[0] for f in tracked if not f.startswith(".")}
    assert top == TOP_LEVEL, f"extra: {sorted(top - TOP_LEVEL)}, missing: {sorted(TOP_LEVEL - top)}"
    said = README[README.index("The top level holds nothing else") :]
    for name in TOP_LEVEL:
        assert f"`{name}" in said, f"the Layout section does not name {name}"


def test_ci_runs_the_readme_test_command_verbatim_and_prints_the_slowest_tests():
    command = next(
        line.strip()
        for line in README.splitlines()
        if line.strip().startswith("python3 -m venv .venv") and "pytest" in line
    )
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert lines[-1] == command  # the README's test command, as the README gives it
    # the 25 slowest tests after the run: pytest's PYTEST_ADDOPTS, set before the command
    assert any("PYTEST_ADDOPTS" in x and "--durations=25" in x for x in lines[:-1])
