"""The scripts that build rows of ``published.csv`` (``profet_core/data/build/``) reproduce the
shipped rows when run again on their source, at the commit they pin.

Each script reads a git mirror of its source repository, which the project does not ship (the
source's files are not ours to commit). Point ``PROFET_MIRRORS`` at a folder holding
``<owner>+<name>/repo`` git directories to run these tests; without it they skip, saying so.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "profet_core" / "data" / "build"
TABLE = ROOT / "profet_core" / "data" / "published.csv"
#: Rows of sets docs/new_sources_rule.md did not adopt: an independent check, never fitted.
CHECK = ROOT / "profet_core" / "data" / "published_check.csv"


def _script(name: str):
    sys.path.insert(0, str(BUILD))  # the scripts import their shared helpers (_rows) by name
    try:
        spec = importlib.util.spec_from_file_location(f"build_{name}", BUILD / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BUILD))
    return module


def _mirror(repo: str) -> str:
    folder = os.environ.get("PROFET_MIRRORS")
    if not folder:
        pytest.skip(f"PROFET_MIRRORS is not set: re-building needs a git mirror of {repo}")
    git_dir = Path(folder) / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"no mirror of {repo} at {git_dir}")
    return str(git_dir)


def _table(path: Path = TABLE) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize(
    ("name", "mine", "path"),
    [
        ("lambda_xla_off", lambda r: "round 4 D1" in r["notes"], TABLE),
        ("dle_efficientnet", lambda r: r["model"].startswith("efficientnet-"), TABLE),
        ("dle_mxnet_rn50", lambda r: ":MxNet/Classification/RN50v1.5/" in r["source"], CHECK),
        ("dlperf_resnet50", lambda r: r["source"].startswith("Oneflow-Inc/DLPerf@"), CHECK),
    ],
    ids=["lambda-xla-off", "dle-efficientnet", "dle-mxnet-rn50", "dlperf-resnet50"],
)
def test_a_builder_reproduces_its_shipped_rows(name, mine, path):
    script = _script(name)
    git_dir = _mirror(script.REPO)
    table = _table(path)
    shipped = [r for r in table if mine(r)]
    assert shipped, f"{path.name} has no rows of {name}"
    rebuilt = script.rows(git_dir, [r for r in table if not mine(r)])
    assert rebuilt == shipped


def test_a_builder_refuses_rows_the_table_has(tmp_path):
    # Running a builder twice must not append its rows twice.
    script = _script("lambda_xla_off")
    git_dir = _mirror(script.REPO)
    done = subprocess.run(
        [sys.executable, str(BUILD / "lambda_xla_off.py"), "--git-dir", git_dir, "--table", TABLE],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "already has these rows" in done.stderr


def test_the_check_rows_are_valid_and_never_in_the_fitted_table():
    # published_check.csv holds the sets the rule did not adopt (docs/new_sources_rule.md): it
    # must validate like published.csv, and none of its measurements may reach the fits.
    from profet_core.crossgpu._published import load_published

    check, table = load_published(CHECK), load_published()
    assert len(check) == 75
    assert not set(check["source"]) & set(table["source"])
    documents = table["source"].str.replace(r":\d+$", "", regex=True)
    assert not documents.str.contains("Oneflow-Inc/DLPerf@|:MxNet/Classification/RN50v1.5/").any()
