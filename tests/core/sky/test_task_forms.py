"""Every task form SkyPilot accepts is planned (``ordered``, accelerator lists), TPUs are named as
TPUs, and what SkyPilot refuses or a catalog gets wrong reaches the user as one line: SkyPilot's
errors as ``profet: error:`` (its traceback for ``--verbose``), a catalog's absurd prices left
out and said, its terminal escapes never printed, a year-long run warned about."""

from __future__ import annotations

from pathlib import Path

import pytest

from profet_core import ProfetValueError, read_profile
from profet_core._messages import CONTROL
from profet_core.sky import sky_plan
from tests._utils import run
from tests.core.sky._utils import AWS, ROOT, needs_sky, task_yaml, write_catalog

pytestmark = [needs_sky, pytest.mark.slow]  # SkyPilot's optimizer in a child process: seconds each
PROFILE = ROOT / "examples" / "profile_g3s.json"
RUN = {"dataset_images": 50_000, "epochs": 10}


@pytest.fixture(scope="module")
def profile():
    return read_profile(PROFILE)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return write_catalog(tmp_path_factory.mktemp("catalogs") / "v8")


def _task(tmp_path, resources: str):
    (tmp_path / "t.yaml").write_text(f"name: forms\nresources:\n{resources}run: echo\n")
    return tmp_path / "t.yaml"


def test_an_ordered_task_is_planned(tmp_path, profile, catalog):
    # SkyPilot deep-copies a task with ordered resources, and the estimator with it
    path = _task(tmp_path, "  ordered:\n    - accelerators: H100:1\n    - accelerators: T4:1\n")
    plan = sky_plan(path, profile, catalog=catalog, **RUN)
    assert sorted(plan.table["candidate"]) == ["H100:1", "T4:1"]
    assert set(plan.table["reason"]) == {""}
    assert any("lists its resources in order" in n for n in plan.notes)
    assert plan.profet_pick is not None
    assert not any("more than a year" in w for w in plan.warnings)  # 2 h or so: nothing said


def test_an_accelerator_list_is_planned_and_a_year_long_run_is_said(tmp_path, profile, catalog):
    path = _task(tmp_path, "  accelerators: [T4, A100]\n")
    plan = sky_plan(path, profile, catalog=catalog, dataset_images=10**11, epochs=10**5)
    assert sorted(plan.table["candidate"]) == ["A100:1", "T4:1"]
    assert (plan.table["run_hours"] > 8766 * 1000).all()  # thousands of years: said
    (said,) = [w for w in plan.warnings if "more than a year" in w]
    assert "on 2 of 2 candidate(s)" in said and "years" in said


def test_a_tpu_is_named_as_a_tpu(tmp_path, profile, catalog):
    path = _task(tmp_path, "  any_of:\n    - accelerators: tpu-v4-8\n    - accelerators: T4:1\n")
    plan = sky_plan(path, profile, catalog=catalog, **RUN)
    tpu = plan.table.set_index("accelerator").loc["tpu-v4-8"]  # SkyPilot pins it to GCP
    assert "'tpu-v4-8' is a TPU: PROFET predicts NVIDIA GPUs only" in tpu["reason"]
    assert plan.profet_pick["candidate"] == "T4:1"


def test_skypilots_refusal_is_one_line_with_its_traceback_kept(tmp_path, profile, catalog):
    path = _task(tmp_path, "  instance_type: p99.huge\n")
    with pytest.raises(ProfetValueError) as got:
        sky_plan(path, profile, catalog=catalog, **RUN)
    assert str(got.value).startswith("SkyPilot cannot plan the task: Invalid instance type")
    assert "\n" not in str(got.value)
    assert "Traceback" in got.value.detail


def test_the_command_prints_skypilots_traceback_only_with_verbose(tmp_path, catalog):
    path = _task(tmp_path, "  accelerators: T4\n  region: mars-1\n")
    args = ("sky-plan", path, "--profile", PROFILE, "--dataset-images", "5000", "--epochs", "1")
    code, _, err = run(*args, "--catalog", catalog, "--verbose")
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" in err
    assert lines[-1].startswith("profet: error: SkyPilot cannot plan the task: Invalid (region")


def test_a_catalogs_bad_prices_and_escapes_never_reach_the_plan(tmp_path):
    # g4dn.xlarge is renamed with a terminal escape (it stays the cheapest T4); other AWS rows
    # priced -1, 0, 1e308 and "cheap", which SkyPilot would plan at as given
    folder = write_catalog(tmp_path / "v8")
    rows = AWS.replace("g4dn.xlarge,", "g4dn.\x1b]8;;http://evil.example\x07xlarge,")
    rows = rows.replace(",0.8048,", ",-1,").replace(",1.006,", ",0,")
    rows = rows.replace(",6.88,", ",1e308,").replace(",21.957642,", ",cheap,")
    (folder / "aws" / "vms.csv").write_text(rows)
    task = task_yaml(tmp_path / "t.yaml", ["T4:1", "L4:1", "A10G:1", "H100:1", "A100:8"])
    args = ("sky-plan", task, "--profile", PROFILE, "--dataset-images", "50000", "--epochs", "10")
    code, out, err = run(*args, "--catalog", folder)
    assert code == 0, err
    assert not CONTROL.search(out + err)  # nothing of the escape is live
    assert "g4dn.]8;;http://evil.examplexlarge" in out  # shown as text
    (said,) = [line for line in err.splitlines() if "aws/vms.csv" in line]
    assert "4 of 10 row(s) left out of what SkyPilot reads" in said
    for kind in ("absurd price 2", "text in a number column 1", "no price 4"):
        assert kind in said
    for gone in ("L4:1", "A10G:1", "H100:1"):  # their only AWS offerings were priced wrong
        line = next(x for x in out.splitlines() if x.lstrip().startswith(gone))
        assert "not offered" in out and " - " in line
    assert "1e+308" not in out and "cheap" not in out


@pytest.mark.parametrize(
    ("recipe", "planned"), [("basic_cluster", True), ("basic_managed_job", False)]
)
def test_skypilots_own_example_tasks_are_planned_or_refused_in_one_line(
    tmp_path, catalog, recipe, planned
):
    """The task files SkyPilot ships (``sky/recipes/examples``): 8 x A100 is planned; a job that
    asks for no GPU (its accelerators commented out) is refused in one line, exit 2."""
    import sky

    path = Path(sky.__file__).parent / "recipes" / "examples" / f"{recipe}.yaml"
    if not path.is_file():
        pytest.skip(f"this SkyPilot ({sky.__version__}) ships no {path.name}")
    argv = ["--dataset-images", "50000", "--epochs", "10", "--catalog", catalog]
    code, out, err = run("sky-plan", path, "--profile", PROFILE, *argv)
    if planned:
        assert code == 0, err
        assert "picks A100:8" in out
    else:
        assert code == 2 and "Traceback" not in err
        assert err.count("profet: error:") == 1 and "asks for no GPU" in err
