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


def _lambdal_v1(r: dict) -> bool:
    # the v1 table lines the first Lambda PyTorch rows left out (lambdal_pytorch_v1.LINES)
    if not r["source"].startswith("lambdal/deeplearning-benchmark@"):
        return False
    path, line = r["source"].rsplit(":", 2)[-2:]
    prec = {"pytorch/pytorch-train-throughput-fp32.csv": "fp32"}.get(path, "fp16")
    return "-v2-" not in path and int(line) in _script("lambdal_pytorch_v1").LINES[prec]


@pytest.mark.parametrize(
    ("name", "mine", "path"),
    [
        ("lambda_xla_off", lambda r: "round 4 D1" in r["notes"], TABLE),
        ("dle_efficientnet", lambda r: r["model"].startswith("efficientnet-"), TABLE),
        ("dle_mxnet_rn50", lambda r: ":MxNet/Classification/RN50v1.5/" in r["source"], CHECK),
        ("dlperf_resnet50", lambda r: r["source"].startswith("Oneflow-Inc/DLPerf@"), CHECK),
        ("lambdal_pytorch_v1", _lambdal_v1, TABLE),
        ("lambdal_pytorch_v2", lambda r: "pytorch-train-throughput-v2-" in r["source"], CHECK),
        ("flagperf_a100", lambda r: r["source"].startswith("FlagOpen/FlagPerf@"), CHECK),
        ("sia_imagenet", lambda r: r["source"].startswith("siasosp23/artifacts@"), CHECK),
    ],
    ids=[
        "lambda-xla-off",
        "dle-efficientnet",
        "dle-mxnet-rn50",
        "dlperf-resnet50",
        "lambdal-pytorch-v1",
        "lambdal-pytorch-v2",
        "flagperf-a100",
        "sia-imagenet",
    ],
)
def test_a_builder_reproduces_its_shipped_rows(name, mine, path):
    script = _script(name)
    git_dir = _mirror(script.REPO)
    table = _table(path)
    shipped = [r for r in table if mine(r)]
    assert shipped, f"{path.name} has no rows of {name}"
    rebuilt = script.rows(git_dir, [r for r in table if not mine(r)])
    assert rebuilt == shipped


def test_the_mlcommons_builder_reproduces_its_rows_round_by_round():
    # One builder, three repositories (MLPerf Training v3.0, v3.1, v4.0), run oldest first: a
    # later round's system whose logs repeat an earlier round's is read once.
    script = _script("mlcommons_resnet")
    mirrors = [_mirror(repo) for repo in script.REPOS]
    table = _table(CHECK)
    mine = [r for r in table if r["source"].startswith("mlcommons/training_results_v")]
    assert mine, "published_check.csv has no MLPerf rows"
    others = [r for r in table if r not in mine]
    rebuilt = []
    for git_dir in mirrors:
        rebuilt += script.rows(git_dir, others + rebuilt)
    assert rebuilt == mine


def test_new_lambda_rows_repeat_no_line_of_the_fitted_table():
    # Lambda's PyTorch v1 tables were partly in published.csv already: the builder of the rest
    # writes only lines (and CNN columns) the first rows do not hold, and none twice.
    script = _script("lambdal_pytorch_v1")
    git_dir = _mirror(script.REPO)
    first = {(r["source"], r["model"]) for r in _table(TABLE) if not _lambdal_v1(r)}
    new = [(r["source"], r["model"]) for r in script.rows(git_dir)]
    assert new and not first & set(new) and len(set(new)) == len(new)


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
    from profet_core.crossgpu.spec._published import load_published

    check, table = load_published(CHECK), load_published()
    assert len(check) == 553
    assert not set(check["source"]) & set(table["source"])
    documents = table["source"].str.replace(r":\d+$", "", regex=True)
    assert not documents.str.contains("Oneflow-Inc/DLPerf@|:MxNet/Classification/RN50v1.5/").any()


def test_the_non_cnn_lambda_columns_are_rebuilt_and_never_fitted():
    """``published_text.csv`` (Lambda's BERT, GNMT, ... columns) is rebuilt from the mirror, and
    no fitted table holds a row of it (the spec family model's check, never its fit)."""
    text = ROOT / "profet_core" / "data" / "published_text.csv"
    shipped = _table(text)
    assert {r["gpu_count"] for r in shipped} == {"1"} and len(shipped) > 200
    assert not {r["source"] + r["model"] for r in shipped} & {
        r["source"] + r["model"] for r in _table()
    }
    script = _script("lambdal_text")
    git_dir = _mirror(script.REPO)
    assert script.rows(git_dir, _table()) == shipped
