"""Every example in the README and in docs/ runs as written: each `profet ...` line of their
```sh blocks exits 0 from a copy of the repository's examples (and prints the lines of an
```output block that follows it), and their ```python blocks execute. The README stays a front
page: short, its two commands the ones CI runs, the first prediction on its first screen; and
docs/development.md's Layout section matches the tree."""

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
#: The pages whose examples run: the README and every page of docs/ (the benches' and studies'
#: own pages show output, not commands).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DEVELOPMENT = (ROOT / "docs" / "development.md").read_text()


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def _commands(text: str) -> list[str]:
    """The `profet` lines of ``text``'s ```sh blocks (a line ending in a backslash continues)."""
    out = []
    for block in _blocks(text, "sh"):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip().startswith("profet "):
                out.append(" ".join(line.split()))
    return out


def _outputs(text: str) -> dict[str, list[str]]:
    """``{command: lines it prints}`` for each ```output block: the last command before it."""
    found = {}
    for m in re.finditer(r"```output\n(.*?)```", text, flags=re.S):
        before = _commands(text[: m.start()])
        assert before, "an ```output block follows no command"
        found[before[-1]] = [x for x in m.group(1).splitlines() if x.strip()]
    return found


EXAMPLES = [(page, c) for page in PAGES for c in _commands(page.read_text())]
OUTPUTS = {c: lines for page in PAGES for c, lines in _outputs(page.read_text()).items()}


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


def test_the_pages_have_examples():
    readme = [c for p, c in EXAMPLES if p.name == "README.md"]
    assert len(readme) >= 2 and len(EXAMPLES) >= 20
    assert any(_blocks(p.read_text(), "python") for p in PAGES)


#: Examples that train, validate, plan with SkyPilot or profile: seconds to about a minute each.
SLOW = ("profet train ", "profet validate ", "profet sky-plan ", "profet profile ")


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(c, marks=[pytest.mark.slow] if c.startswith(SLOW) else [])
        for c in dict.fromkeys(c for _, c in EXAMPLES)
    ],
    ids=[c[:60] for c in dict.fromkeys(c for _, c in EXAMPLES)],
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
    for expected in OUTPUTS.get(command, ()):  # the page shows what the command prints today
        assert expected in out.stdout, (expected, out.stdout[-3000:])


def test_python_examples_run(workdir, monkeypatch, capsys):
    monkeypatch.chdir(workdir)
    ran = 0
    for page in PAGES:
        for block in _blocks(page.read_text(), "python"):
            exec(compile(block, str(page.relative_to(ROOT)), "exec"), {})
            ran += 1
    assert ran >= 2 and "run_usd" in capsys.readouterr().out


def test_the_readme_is_a_front_page():
    """851 lines and 10,814 words (about 54 minutes) before; the first prediction now on its
    first screen (what someone who reads only that needs), every reference in docs/."""
    lines = README.splitlines()
    assert len(lines) <= 200, len(lines)
    first_screen = "\n".join(lines[:45])
    for needed in (
        "requirements.txt",
        "streamlit run app.py",
        "http://localhost:8501",
        "**Predict**",
    ):
        assert needed in first_screen, needed
    assert "second" in README and "profet predict --profile examples/profile_g3s.json" in README
    for word in ("spec line", "offering", "configuration", "basis", "the front", "picks"):
        assert f"**{word}**" in README, f"the README does not define {word!r}"
    assert not re.search(r"\bissue \d+|fixed beforehand", README)
    for link in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / link).exists(), link


def test_the_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    commands = re.findall(r"^    (python3 -m venv .*)$", README, flags=re.M)
    assert len(commands) == 2, commands
    start, tests = commands
    assert tests == ci, (tests, ci)
    assert "-r requirements.txt" in start and "streamlit run app.py" in start
    assert "-r requirements-dev.txt" in tests and tests.endswith("python -m pytest -q")


def test_docs_links_resolve():
    for page in PAGES:
        for link in re.findall(r"\]\(([^)#:]+\.(?:md|png))", page.read_text()):
            assert (page.parent / link).exists(), f"{page.name}: {link}"


def _layout_named() -> set[str]:
    """Module paths (from the repository root) that the Layout section of docs/development.md
    names.

    A bullet that opens with a subpackage (`` `inputs/` ``) names its modules bare
    (`` `_profile.py` ``); the root's bullet opens with `` `profet_core/` ``, the app package's
    with `` `profet_app/` `` and the pages' with `` `app.py` `` (their files bare after the first,
    ``pages/``-prefixed one). A path with a folder in it counts in any bullet.
    """
    section = DEVELOPMENT[DEVELOPMENT.index("## Layout") :]
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
    assert not modules - named, f"modules the Layout omits: {sorted(modules - named)}"
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
    "CHANGELOG.md",
}


def test_the_top_level_holds_what_the_layout_says():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: the tracked files are unknown")
    top = {f.split("/")[0] for f in tracked if not f.startswith(".")}
    assert top == TOP_LEVEL, f"extra: {sorted(top - TOP_LEVEL)}, missing: {sorted(TOP_LEVEL - top)}"
    said = DEVELOPMENT[DEVELOPMENT.index("The top level holds nothing else") :]
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
