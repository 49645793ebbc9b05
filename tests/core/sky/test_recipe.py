"""The README's recipe for ``sky.launch`` users runs as written: in a process whose home holds the
tests' catalog (``~/.sky/catalogs/v8``, the plan's default) with ``sky.launch`` recording the task
it is given and no network, it hands SkyPilot the candidates in order, PROFET's pick first."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from tests.core.sky._utils import ROOT, needs_sky, write_catalog

pytestmark = needs_sky

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
    blocks = re.findall(r"```py\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    (recipe,) = [b for b in blocks if "sky.launch(" in b]
    return recipe


def test_the_readme_recipe_launches_profets_order(tmp_path):
    write_catalog(tmp_path / ".sky" / "catalogs" / "v8")
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "SKY_RUNTIME_DIR": str(tmp_path),
        "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
        "PYTHONPATH": str(ROOT),
    }
    code = PRELUDE + _recipe() + AFTER
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    resources, ordered = got["launched"]
    assert ordered and len(resources) == 7  # the example task's candidates, as a list
    labels = [":".join(map(str, *r["accelerators"].items())) for r in resources]
    assert labels == got["order"]  # the plan's order: PROFET's objective, best first
    assert got["tried"] == []
