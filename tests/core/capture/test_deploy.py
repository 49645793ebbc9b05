"""The collection task file and image validate offline (SkyPilot's loader when installed)."""

from __future__ import annotations

from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="pyyaml is needed to read the task file")
DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


@pytest.fixture(scope="module")
def task():
    return yaml.safe_load((DEPLOY / "collect-sky.yaml").read_text())


def test_task_has_the_required_keys(task):
    assert {"name", "resources", "setup", "run", "envs", "workdir"} <= set(task)
    assert task["resources"]["instance_type"]
    assert {"INSTANCE", "GPU", "USD_PER_HOUR", "OUT"} <= set(task["envs"])
    assert all(isinstance(v, str) for v in task["envs"].values())  # SkyPilot wants strings


def test_task_runs_collect_into_the_folder_it_brings_back(task):
    run = " ".join(task["run"].split())
    assert 'profet_core collect --instance "$INSTANCE" --out "$OUT/$INSTANCE"' in run
    assert '--gpu "$GPU" --usd-per-hour "$USD_PER_HOUR"' in run
    assert "xprof" in task["setup"] and "tensorboard" in task["setup"]
    assert "tf-keras~=2.16.0" in task["setup"]  # Keras 2 (the convention), for the image's TF
    header = (DEPLOY / "collect-sky.yaml").read_text()
    assert "rsync" in header and "sky launch" in header


@pytest.mark.slow  # starts SkyPilot: about 20 s
def test_skypilot_loads_the_task():
    sky = pytest.importorskip("sky", reason="skypilot is not installed (optional)")
    loaded = sky.Task.from_yaml(str(DEPLOY / "collect-sky.yaml"))
    assert loaded.name == "profet-collect"


def test_image_builds_on_a_tensorflow_gpu_base():
    text = (DEPLOY / "collect.Dockerfile").read_text()
    base = next(line for line in text.splitlines() if line.startswith("FROM "))
    assert base.startswith("FROM tensorflow/tensorflow:") and base.endswith("-gpu")
    assert 'ENTRYPOINT ["python", "-m", "profet_core"]' in text
    assert base.split(":")[1].startswith("2.16") and "tf-keras~=2.16.0" in text
