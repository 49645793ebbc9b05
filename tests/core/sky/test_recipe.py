"""The recipe for ``sky.launch`` users (docs/sky.md) runs as written: from a folder laid out as the
repository (``examples/``, with ``../shared/data/skypilot-catalog`` the tests' own catalog), with
``sky.launch`` recording the task it is given and no network, it hands SkyPilot the candidates
in order, PROFET's pick first."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.core.sky._utils import ROOT, needs_sky, write_catalog

pytestmark = [needs_sky, pytest.mark.slow]  # SkyPilot's optimizer in a child process: seconds each

#: Run before the recipe: no network, and ``sky.launch`` records instead of launching.
PRELUDE = """
import json, sys
from profet_core.sky._child import guard_network
tried = guard_network()
import sky
launched = []
def launch(task, **kwargs):
    launched.append([r.to_yaml_config() for r in task.resources])
    launched.append(isinstance(task.resources, list))
sky.launch = launch
"""
AFTER = """
order = plan.table["candidate"].tolist()
print(json.dumps({"launched": launched, "order": order, "tried": tried}))
"""


def _recipe() -> str:
    blocks = re.findall(r"```py\n(.*?)```", (ROOT / "docs" / "sky.md").read_text(), flags=re.S)
    (recipe,) = [b for b in blocks if "sky.launch(" in b]
    return recipe


def test_the_recipe_launches_profets_order(tmp_path):
    # the repository's layout: the repository beside ../shared (here the tests' small catalog)
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", repo / "examples")
    write_catalog(tmp_path / "shared" / "data" / "skypilot-catalog")
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),  # sky's import writes ~/.sky: never the user's
        "SKY_RUNTIME_DIR": str(tmp_path / "home"),
        "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
        "PYTHONPATH": str(ROOT),
    }
    code = PRELUDE + _recipe() + AFTER
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    resources, ordered = got["launched"]
    assert ordered and len(resources) == 7  # the example task's candidates, as a list
    labels = [":".join(map(str, *r["accelerators"].items())) for r in resources]
    assert labels == got["order"]  # the plan's order: PROFET's objective, best first
    assert got["tried"] == []


def test_skypilot_drops_a_time_estimator_on_its_way_to_the_api_server(tmp_path):
    # Why the recipe orders the candidates: sky.launch and sky.optimize send the task as YAML
    # (dag_utils.dump_chain_dag_to_yaml_str), which keeps no estimator.
    write_catalog(tmp_path / ".sky" / "catalogs" / "v8")
    code = (
        "import sky\n"
        "from sky.utils import dag_utils\n"
        "task = sky.Task(run='echo')\n"
        "task.set_resources({sky.Resources(accelerators='T4:1')})\n"
        "task.set_time_estimator(lambda r: 60.0)\n"
        "dag = sky.Dag()\n"
        "dag.add(task)\n"
        "back = dag_utils.load_chain_dag_from_yaml_str(dag_utils.dump_chain_dag_to_yaml_str(dag))\n"
        "print(task.time_estimator_func is not None, back.tasks[0].time_estimator_func is None)\n"
    )
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "SKY_RUNTIME_DIR": str(tmp_path),
        "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
    }
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "True"]
