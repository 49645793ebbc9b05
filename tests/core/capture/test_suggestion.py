"""``profet profile`` suggests only a ``profet predict`` command that works:
none for a CPU profile, which prediction refuses."""

from __future__ import annotations

import json
import shlex
from types import SimpleNamespace

import pandas as pd
import pytest

from profet_core.capture import _profile
from profet_core.capture._check import predict_suggestion
from tests._utils import run

GPU_OPS = json.loads(open("examples/profile_g3s.json").read())["ops"]
CPU_OPS = {k.replace("Device_", "Host_"): v for k, v in GPU_OPS.items()}


@pytest.fixture
def fake_profiler(monkeypatch, tmp_path):
    """``profile_model``/``write_profile`` without TensorFlow: the profile given, 113 ms."""

    def use(ops):
        profile = pd.DataFrame([ops])
        meta = SimpleNamespace(
            steps_traced=2, batch_latency_s=0.113, model_kind="cnn", seq_len=None
        )
        monkeypatch.setattr(_profile, "profile_model", lambda *a, **k: (profile, meta))

        def write(profile, meta, out, model=None):
            out = tmp_path / "p.json"
            out.write_text(json.dumps([ops]))
            return out, tmp_path / "p.meta.json"

        monkeypatch.setattr(_profile, "write_profile", write)
        return tmp_path / "p.json"

    return use


@pytest.mark.parametrize(
    ("ops", "instance"),
    [
        (GPU_OPS, ["--instance", "g3s.xlarge"]),
        (CPU_OPS, ["--instance", "g3s.xlarge"]),
        (CPU_OPS, []),
    ],
    ids=["gpu", "cpu", "cpu-no-instance"],
)
def test_the_suggested_predict_command_works_or_is_not_given(
    fake_profiler, tmp_path, ops, instance
):
    fake_profiler(ops)
    code, out, err = run("profile", "LeNet5", "--batch-size", "32", "--input-size", "32",
                         "--out", tmp_path / "p.json", *instance)  # fmt: skip
    assert code == 0, err
    suggested = [x for x in out.splitlines() if x.startswith("predict with: ")]
    if ops is CPU_OPS:
        assert not suggested and "profet predict" not in out
        assert "profet: warning: no `profet predict` command to suggest" in err
        return
    assert len(suggested) == 1
    argv = shlex.split(suggested[0].removeprefix("predict with: profet "))
    code, out, err = run(*argv)
    assert code == 0, err
    assert "g4dn.xlarge" in out


def test_without_the_instance_the_command_says_what_to_fill_in(tmp_path):
    text = predict_suggestion(pd.DataFrame([GPU_OPS]), tmp_path / "p.json", None, 0.113)
    assert "--anchor ANCHOR" in text and "ANCHOR: the instance this ran on" in text
    assert "--anchor-latency-ms 113.000" in text
