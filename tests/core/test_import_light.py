"""``import profet_core`` stays light: no scikit-learn, scipy, statsmodels, plotly, pyDOE3,
streamlit, tensorflow or torch; nor does predicting one profile, nor reading a torch
profiler trace.

Checked in a fresh interpreter, since the test process itself has imported them all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sklearn", "scipy", "statsmodels", "plotly", "pyDOE3", "streamlit", "tensorflow", "torch")
TRACE = ROOT / "tests/core/inputs/data/torch_traces/resnet50_a100_ddp_rank0.pt.trace.json.gz"


def _imported_after(code: str) -> list[str]:
    """Heavy top-level packages in sys.modules after running ``code`` in a new interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    return [m for m in HEAVY if m in loaded]


@pytest.mark.parametrize(
    "code",
    [
        "import profet_core",
        # the CLI registers `profet doe` without importing the feature's heavy libraries
        "import profet_core.cli._main as c; c.build_parser()",
        "import profet_core.doe, profet_core.doe._cli",
        "import json, pandas as pd, profet_core as p; a = p.load_artifacts(); i = a.instances[0]; "
        "a.predict(i, pd.DataFrame([a.examples[i]['profile']]), anchor_latency_s=0.1)",
        # a torch.profiler trace is read without torch; the capture package loads it when used
        f"import profet_core as p, profet_core.capture; p.read_profile({str(TRACE)!r})",
    ],
    ids=["package", "cli-parser", "doe-package", "predict-one-profile", "read-torch-trace"],
)
def test_import_is_light(code):
    assert _imported_after(code) == []


@pytest.mark.slow  # about 5 s or more
def test_probe_sees_heavy_imports():
    # the probe itself can fail: using the feature does import its libraries
    assert _imported_after("from profet_core.doe import analyze, doe_figures, make_design") == [
        "scipy",
        "statsmodels",
        "plotly",
        "pyDOE3",
    ]
