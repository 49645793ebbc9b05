"""``profet profile`` and ``ProfetProfiler`` end to end on CPU with a tiny model."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from profet_core import read_profile
from profet_core.capture import check_gpu_profile, has_gpu_ops
from profet_core.cli._main import main
from profet_core.errors import ProfetValueError
from tests.core.capture._utils import TINY_MODEL, requires_tf

pytestmark = requires_tf


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    d = tmp_path_factory.mktemp("profile")
    (d / "tiny.py").write_text(TINY_MODEL)
    out = d / "p.json"
    argv = ["profile", str(d / "tiny.py"), "--batch-size", "8", "--input-size", "16"]
    argv += ["--classes", "3", "--steps-per-epoch", "6", "--latency-steps", "20"]
    argv += ["--instance", "cpu-box", "--out", str(out)]
    assert main(argv) == 0
    return out


def test_profile_keys_and_metadata(profiled, capsys):
    data = json.loads(profiled.read_text())
    # The object form: the file itself names its instance, steps, sizes and latency.
    assert (data["instance"], data["steps"], data["batch_size"]) == ("cpu-box", 2, 8)
    ops = data["ops"]
    assert ops and all(k.startswith(("Host_", "Device_")) and v >= 0 for k, v in ops.items())
    meta = json.loads(profiled.with_name("p.meta.json").read_text())
    assert meta["steps_traced"] == 2 and meta["traced_steps"] == [9, 10]
    assert (meta["batch_size"], meta["input_size"], meta["instance"]) == (8, 16, "cpu-box")
    assert meta["tensorflow_version"] and meta["profiler_version"].startswith("xprof")
    assert meta["gpu_name"] is None  # no GPU on the test machines
    # The training data's convention, recorded: Keras 2 (the Keras 3 model file is rebuilt
    # under it), legacy SGD, accuracy metric, no XLA, FP32.
    conv = meta["convention"]
    assert (conv["convention"], conv["zoo"], conv["differs"]) == ("profet-2021", "profet-2021", [])
    assert conv["keras"].startswith("tf-keras") and "legacy" in conv["optimizer"]
    assert (conv["xla"], conv["precision"]) == (False, "float32") and conv["tf32"]
    # ... and its op types: the legacy SGD's kernel and the accuracy metric's ops.
    types = {k.split("_", 1)[1] for k in ops}
    assert {"ResourceApplyGradientDescent", "ArgMax", "Equal"} <= types
    assert "AssignSubVariableOp" not in types


def test_profile_totals_match_two_measured_steps(profiled):
    ops = json.loads(profiled.read_text())["ops"]
    meta = json.loads(profiled.with_name("p.meta.json").read_text())
    busy = sum(v for k, v in ops.items() if not k.endswith("_IDLE")) / 1e6
    # On a CPU the host runs the ops, several at once on the intra-op threads, and the trace
    # window adds profiler start/stop time to IDLE: only a loose band is a fair check.
    assert 0.2 * 2 * meta["batch_latency_s"] < busy < 5 * 2 * meta["batch_latency_s"]


def test_predict_reads_it_and_says_it_needs_a_gpu(profiled):
    profiles = read_profile(profiled)
    assert len(profiles) == 1 and not has_gpu_ops(profiles).any()
    with pytest.raises(ProfetValueError, match="predictions need a GPU anchor profile"):
        check_gpu_profile(profiles)


def test_gpu_profile_passes_the_check():
    profiles = pd.DataFrame({"Host_IDLE": [5.0, 1.0], "Device_Conv2D": [3.0, 0.0]})
    assert has_gpu_ops(profiles).tolist() == [True, False]
    with pytest.raises(ProfetValueError, match=r"row\(s\) \[1\]"):
        check_gpu_profile(profiles)
    check_gpu_profile(profiles.iloc[:1])


def test_callback_inside_users_fit(tmp_path):
    import keras
    import numpy as np

    from profet_core.capture import ProfetProfiler

    ns = {}
    exec(TINY_MODEL, ns)
    model = ns["build_model"]((16, 16, 3), 3)
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    x = np.random.default_rng(0).random((48, 16, 16, 3), dtype="float32")
    y = keras.utils.to_categorical(np.arange(48) % 3, 3)
    cb = ProfetProfiler(batch_size=8, input_size=16, out=tmp_path / "cb.json")
    model.fit(x, y, batch_size=8, epochs=2, callbacks=[cb], verbose=0)
    assert cb.meta.traced_steps == (9, 10) and cb.meta.batch_latency_s > 0
    ops = [
        c for c in read_profile(tmp_path / "cb.json").columns if c.startswith(("Host_", "Device_"))
    ]
    assert len(ops) == cb.profile.shape[1] > 3


BROKEN = {
    "does-not-load": "def build_model(:\n",
    "raises": "def build_model(input_shape, classes):\n    raise RuntimeError('nope')\n",
}


@pytest.mark.parametrize(
    "case, extra, match",
    [
        ("does-not-load", [], "does not load"),
        ("raises", [], "build_model in .* raised RuntimeError"),
        ("ok", ["--batch-size", "0"], "batch size 0 is not allowed"),
        ("unwritable", [], "not writable"),
    ],
    ids=["does-not-load", "build-model-raises", "batch-size-0", "unwritable-out"],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, case, extra, match):
    model = tmp_path / "m.py"
    model.write_text(BROKEN.get(case, TINY_MODEL))
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = blocker / "p.json" if case == "unwritable" else tmp_path / "p.json"
    argv = ["profile", str(model), "--batch-size", "8", "--input-size", "16"]
    argv += ["--steps-per-epoch", "2", "--latency-steps", "2", "--out", str(out), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("profet: error:")
    assert pytest.importorskip("re").search(match, err[0])
    assert not out.exists()
