"""``profet sky-plan``: the plan of a task YAML printed, and every bad input refused in one line
(exit 2). The catalog is the small folder the SkyPilot tests write."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests._utils import run
from tests.core.sky._utils import ROOT, needs_sky, task_yaml, write_catalog

pytestmark = pytest.mark.slow  # SkyPilot's optimizer in a child process: seconds each

PROFILE = str(ROOT / "examples" / "profile_g3s.json")
RUN = ("--dataset-images", "50000", "--epochs", "100")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return write_catalog(tmp_path_factory.mktemp("catalogs") / "v8")


def _refused(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("profet: error: "), err
    return lines[0]


@needs_sky
def test_plan_of_the_example_task(catalog):
    code, out, err = run(
        "sky-plan",
        ROOT / "examples" / "sky_task.yaml",
        "--profile",
        PROFILE,
        *RUN,
        "--catalog",
        catalog,
    )
    assert code == 0, err
    assert "SkyPilot's optimizer with its 1-hour default picks" in out
    assert "SkyPilot's optimizer with PROFET's run times picks" in out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("candidate"))
    for unit in ("usd_per_hour", "run_hours", "run_usd", "usd_1h_default"):
        assert unit in header


@needs_sky
def test_plan_as_json(catalog, tmp_path):
    task = task_yaml(tmp_path / "t.yaml", ["T4:1", "H100:8"])
    code, out, err = run(
        "sky-plan",
        task,
        "--profile",
        PROFILE,
        *RUN,
        "--catalog",
        catalog,
        "--format",
        "json",
        "--minimize",
        "time",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["minimize"] == "time" and doc["units"]["run time"] == "h"
    assert doc["profet_pick"]["candidate"] == "H100:8"
    assert [c["candidate"] for c in doc["candidates"]] == ["H100:8", "T4:1"]


@needs_sky
@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("resources:\n  acelerators: T4\n", "did you mean 'accelerators'"),
        ("resources:\n  accelerators: A100X\n", "accelerator 'A100X' is unknown"),
        ("resources:\n  cpus: 4\nrun: echo\n", "the task asks for no GPU"),
    ],
    ids=["misspelt-key", "unknown-accelerator", "no-gpu"],
)
def test_bad_tasks_are_refused_in_one_line(catalog, tmp_path, text, match):
    (tmp_path / "t.yaml").write_text(text)
    code, _, err = run(
        "sky-plan", tmp_path / "t.yaml", "--profile", PROFILE, *RUN, "--catalog", catalog
    )
    assert code == 2 and match in _refused(err)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("--catalog", "{tmp}/none"), "does not exist"),
        (("--catalog", "{tmp}"), "no <cloud>/vms.csv"),
        (("--catalog", "{catalog}", "--cloud", "oracle"), "cloud 'oracle' is not allowed"),
        (("--catalog", "{catalog}", "--cloud", "gcp"), "cloud 'gcp' has no vms.csv"),
    ],
    ids=["no-folder", "empty-folder", "unknown-cloud", "cloud-not-in-catalog"],
)
def test_bad_catalogs_are_refused_before_skypilot_runs(catalog, tmp_path, args, match):
    args = [a.format(tmp=tmp_path, catalog=catalog) for a in args]
    task = task_yaml(tmp_path / "t.yaml", ["T4:1"])
    code, _, err = run("sky-plan", task, "--profile", PROFILE, *RUN, *args)
    assert code == 2 and match in _refused(err)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("--epochs", "3"), "go together"),
        (RUN + ("--run-steps", "100"), "not both"),
        ((), "the run's length"),
    ],
    ids=["half-a-run", "two-runs", "no-run"],
)
def test_bad_runs_are_refused(catalog, tmp_path, args, match):
    task = task_yaml(tmp_path / "t.yaml", ["T4:1"])
    code, _, err = run("sky-plan", task, "--profile", PROFILE, "--catalog", catalog, *args)
    assert code == 2 and match in _refused(err)


def test_a_missing_task_file_is_refused(catalog, tmp_path):
    code, _, err = run(
        "sky-plan", tmp_path / "none.yaml", "--profile", PROFILE, *RUN, "--catalog", catalog
    )
    assert code == 2 and "does not exist" in _refused(err)


def test_without_skypilot_it_says_how_to_install_it(catalog, tmp_path, monkeypatch):
    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "sky" else find(n, *a)
    )
    task = task_yaml(tmp_path / "t.yaml", ["T4:1"])
    code, _, err = run("sky-plan", task, "--profile", PROFILE, *RUN, "--catalog", catalog)
    assert code == 2 and "pip install -e '.[sky]'" in _refused(err)


@needs_sky
@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"resources: [accelerators: {\n", "is not a SkyPilot task"),
        (b"- just\n- a list\n", "it holds a list, not a mapping"),
        (b"42\n", "it holds a number"),
        (b"", "it holds nothing"),
        (b"\xff\xfe r\x00", "is not a SkyPilot task"),
        (b"#" * 1_000_001, "the limit is 1 MB"),
    ],
    ids=["syntax", "a-list", "a-number", "empty", "not-utf8", "too-long"],
)
def test_a_task_that_is_no_yaml_mapping_is_refused_before_skypilot_starts(
    catalog, tmp_path, monkeypatch, data, match
):
    """Refused in the parent: the child (SkyPilot's imports, seconds) never starts."""
    from profet_core.sky import _offline

    def never(*_args, **_kwargs):
        raise AssertionError("the SkyPilot child was started")

    monkeypatch.setattr(_offline, "run_child", never)
    monkeypatch.setattr("profet_core.sky._plan.run_child", never)
    (tmp_path / "t.yaml").write_bytes(data)
    code, _, err = run(
        "sky-plan", tmp_path / "t.yaml", "--profile", PROFILE, *RUN, "--catalog", catalog
    )
    assert code == 2 and match in _refused(err)
