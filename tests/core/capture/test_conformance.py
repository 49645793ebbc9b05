"""Conformance on CPU: a capture speaks the training data's op vocabulary.

With oneDNN off (``TF_ENABLE_ONEDNN_OPTS=0``, set before TensorFlow is imported, hence one
subprocess for all captures) TensorFlow runs its plain kernels, the op types it places on a GPU.
ResNet18, MobileNetV2, VGG11 and LeNet5 are captured once at 32 px, batch 32 (2 steps per epoch:
the op types do not depend on the epoch's length). The real-data part compares them with the
shared data's rows of the same CNN (``profet_core.capture._conformance``); ``python
bench/studies/conformance.py`` prints the Jaccard overlaps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profet_core.capture._conformance import conformance, type_times
from tests._utils import SHARED, requires_shared
from tests.core.capture._utils import requires_tf

pytestmark = [requires_tf, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]
MODELS = ("ResNet18", "MobileNetV2", "VGG11", "LeNet5")
# The latency run after the trace is not what this module checks (test_profile.py and the
# README's `profet profile` example time it): one timed step without the 5 warm-up steps spares
# a third of the capture's CPU time (VGG11: 31 -> 22 s, ResNet18: 14 -> 11 s).
CAPTURE = """
import json, sys
from profet_core.capture._profile import profile_model
out = {}
for name in sys.argv[2:]:
    profile, meta = profile_model(
        name, 32, 32, steps_per_epoch=2, latency_steps=1, warmup_steps=0
    )
    out[name] = {"ops": profile.iloc[0].to_dict(), "convention": meta.convention}
open(sys.argv[1], "w").write(json.dumps(out))
"""


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> dict:
    result = tmp_path_factory.mktemp("conformance") / "captures.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_ENABLE_ONEDNN_OPTS": "0"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    cmd = [sys.executable, "-c", CAPTURE, str(result), *MODELS]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(result.read_text())


@pytest.mark.parametrize("model", MODELS, ids=MODELS)
def test_capture_has_the_conventions_op_types(captures, model):
    types = set(type_times(pd.Series(captures[model]["ops"])).index)
    # Legacy SGD and the accuracy metric (Keras 3: AssignSubVariableOp, no metric ops). Only the
    # metric's largest op is required: its few-microsecond ops (Equal, Cast, DivNoNan) were seen
    # to fall outside the two traced steps in one run of several under load.
    assert {"ResourceApplyGradientDescent", "ArgMax"} <= types
    assert not types & {"AssignSubVariableOp", "SquaredDifference"}
    if model in ("ResNet18", "MobileNetV2"):  # Keras 2's fused batch normalisation
        assert {"FusedBatchNormV3", "FusedBatchNormGradV3"} <= types
    assert captures[model]["convention"]["convention"] == "profet-2021"


@requires_shared
@pytest.mark.parametrize("model", MODELS, ids=MODELS)
def test_capture_matches_the_datas_vocabulary(captures, model):
    data = pd.read_parquet(SHARED / "profiles.parquet")
    rows = data[(data["model"] == model) & (data["input_size"] == 32) & (data["batch_size"] == 32)]
    assert len(rows) > 0
    found = conformance(pd.Series(captures[model]["ops"]), rows)
    # Every device op type with >= 1% median share in the data is there, and nothing with
    # >= 1% of the capture's time is foreign to the data.
    assert (found["missing"], found["foreign"]) == ([], [])
