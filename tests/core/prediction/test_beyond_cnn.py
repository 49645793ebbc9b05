"""Profiles beyond TensorFlow CNNs, answered by the spec family model: text-model profiles
(recurrent layers, attention, embeddings), PyTorch traces, and what is refused, in the library
and the CLI; CNN profiles keep the trained models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core import PredictRequest, ProfetValueError, load_artifacts, read_profile
from profet_core.prediction._asked import asked
from tests._utils import ROOT, SHARED, requires_shared

TRACES = ROOT / "tests" / "core" / "inputs" / "data" / "torch_traces"
V100_TRACE = TRACES / "resnet50_v100_train.pt.trace.json.gz"
#: A BiLSTM text classifier's step as the notebook's generator profiles it (us over 2 steps).
BILSTM = {
    "Device_CudnnRNNBackprop": 10673.5,
    "Device_CudnnRNN": 7366.5,
    "Device_Transpose": 873.6,
    "Device_Unique": 347.6,
    "Device_ResourceGather": 40.6,
    "Device_UnsortedSegmentSum": 118.3,
    "Device_ResourceSparseApplyAdadelta": 33.4,
    "Device_ResourceApplyAdadelta": 178.5,
    "Device_AddN": 339.5,
    "Device_MatMul": 42.5,
    "Device_Softmax": 17.7,
    "Device_IDLE": 34864.9,
    "Host_Dataset": 464.7,
    "Host_IteratorGetNext": 501.4,
    "Host_IDLE": 143080.6,
}


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


def _bilstm(**more) -> pd.DataFrame:
    return pd.DataFrame([{**BILSTM, **more}])


def test_cnn_profiles_keep_the_trained_models(predictor):
    profile = read_profile(ROOT / "examples" / "profile_g3s.json")
    question = asked(predictor, "g3s.xlarge", profile, PredictRequest())[0].question
    assert question.kind == "cnn" and question.parts is None
    table = predictor.predict("g3s.xlarge", profile).table
    assert "spec family model" not in " ".join(map(str, table["basis"].unique()))


def test_a_recurrent_text_model_is_answered_not_refused(predictor):
    result = predictor.predict("g4dn.xlarge", _bilstm(), anchor_latency_s=0.015138)
    t = result.table.drop_duplicates("target").set_index("target")
    assert t["basis"].str.startswith("spec family model").all()
    notes = " ".join(result.warnings())
    assert "recurrent" in notes and "Never measured" in notes
    assert np.isfinite(t["batch_latency_ms"]).all() and (t["low_ms"] < t["high_ms"]).all()
    # a faster GPU runs it faster, by less than its rates: the step's host time stays
    a10g, h100 = t.at["g5.xlarge", "batch_latency_ms"], t.at["p5.48xlarge", "batch_latency_ms"]
    assert h100 < a10g < 15.138 and h100 > 15.138 * 0.3


def test_a_generic_loop_is_launch_bound(predictor):
    loop = {
        "Device_MatMul": 22084.0,
        "Device_AddN": 8416.0,
        "Device_TanhGrad": 1789.0,
        "Device_TensorListStack": 246.0,
        "Device_TensorListFromTensor": 512.0,
        "Device_IDLE": 200107.0,
    }
    t = predictor.predict("g4dn.xlarge", pd.DataFrame([loop]), anchor_latency_s=0.0793).table
    steps = t.drop_duplicates("target")["batch_latency_ms"].to_numpy()
    # launch-bound on every GPU: the host's step, within the spec model's moves of the rest
    assert np.all(np.abs(steps / 79.3 - 1) < 0.3)


def test_most_time_in_unnamed_ops_is_refused_naming_them(predictor):
    profile = pd.DataFrame([{"Device_FooKernelA": 900.0, "Device_MatMul": 100.0}])
    with pytest.raises(ProfetValueError, match=r"no family rule names \(FooKernelA 90%"):
        predictor.predict("g4dn.xlarge", profile, anchor_latency_s=0.001)


def test_a_few_unnamed_ops_are_said(predictor):
    profile = _bilstm(Device_FooKernelA=1000.0)
    result = predictor.predict("g4dn.xlarge", profile, anchor_latency_s=0.016)
    assert any("FooKernelA" in w and "elementwise" in w for w in result.warnings())


def test_a_pytorch_trace_is_answered_from_its_own_gpu(predictor):
    profile = read_profile(V100_TRACE)
    result = predictor.predict(None, profile)
    assert result.anchor == "gpu-v100-sxm2-32gb"
    t = result.table.drop_duplicates("target").set_index("target")
    assert t["basis"].str.startswith("spec family model").all()
    # the same silicon under another spec line: the trace's own step
    assert t.at["p3.2xlarge", "batch_latency_ms"] == pytest.approx(1000 * 0.095717, rel=0.01)
    assert "PyTorch" in " ".join(result.warnings())
    amp = predictor.predict(None, profile, precision="amp").table.set_index("target")
    assert amp.at["p3.2xlarge", "batch_latency_ms"] < t.at["p3.2xlarge", "batch_latency_ms"]


def test_a_trace_refuses_an_anchor_of_another_gpu(predictor):
    with pytest.raises(ProfetValueError, match="trace was taken on 'Tesla V100-SXM2-32GB'"):
        predictor.predict("g4dn.xlarge", read_profile(V100_TRACE))
    # the V100 SXM2 16 GB line is the same silicon: taken
    predictor.predict("p3.2xlarge", read_profile(V100_TRACE), targets=["g4dn.xlarge"])


def test_a_trace_of_a_gpu_without_a_spec_line_is_refused_naming_it(predictor):
    profile = read_profile(TRACES / "resnet50_v100_torch19.pt.trace.json.gz")
    with pytest.raises(ProfetValueError, match="'Tesla V100-DGXS-32GB' has no spec line"):
        predictor.predict(None, profile)


def test_an_autocast_trace_is_read_as_the_fp32_step_it_stands_for(predictor):
    profile = read_profile(V100_TRACE)
    plain = predictor.predict(None, profile, targets=["p3.2xlarge"]).table
    amp = predictor.predict(None, profile.assign(autocast="fp16"), targets=["p3.2xlarge"])
    # the traced step was a mixed-precision one: FP32 on the same GPU is slower than it
    ratio = amp.table["batch_latency_ms"].iloc[0] / plain["batch_latency_ms"].iloc[0]
    assert ratio > 1.2
    assert any("autocast (fp16)" in w for w in amp.warnings())


def test_the_cli_answers_a_gzipped_trace():
    from tests._cli import run_cli

    done = run_cli("predict", "--profile", V100_TRACE, "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert "spec family model" in done.stdout and "PyTorch step" in done.stderr


@requires_shared
def test_the_notebooks_reuters_rows_land_within_10_percent_inside_their_interval(predictor):
    rows = pd.read_csv(SHARED.parent / "seed-rnn" / "reuters_g4dn_g5.csv")
    ops = rows[[c for c in rows.columns if c.startswith(("Host_", "Device_"))]]
    lat = rows["batch_latency_s"].to_numpy()
    table = predictor.predict("g4dn.xlarge", ops, anchor_latency_s=lat, targets=["g5.xlarge"]).table
    measured = rows["g5_xlarge_batch_latency_s"].to_numpy() * 1e3
    p = table["batch_latency_ms"].to_numpy()
    assert np.all(np.abs(p / measured - 1) < 0.10), p / measured
    assert np.all((table["low_ms"] <= measured) & (measured <= table["high_ms"]))


def test_a_traces_family_shares_are_the_hand_computed_ones():
    """Per step the made-up CNN launches conv 100 + 120 + 80 us, matmul 50 + 60 us and an SGD
    kernel of 20 us (tests/core/inputs/_traces.py): its family times are exactly those."""
    from profet_core import parse_profile
    from profet_core.features._families import fine_family_times
    from tests.core.inputs._traces import Builder, dump, training_step

    b = Builder()
    for n in range(3):
        training_step(b, n + 1, 2000.0 * n)
    profile = parse_profile(dump(b.trace()), "t.pt.trace.json")
    steps = int(profile["steps"].iloc[0])
    fam = fine_family_times(profile).iloc[0] / steps
    assert fam["conv"] == pytest.approx(300.0)
    assert fam["matmul"] == pytest.approx(110.0)
    assert fam["optimizer"] == pytest.approx(20.0)
    others = fam.drop(["conv", "matmul", "optimizer", "idle"])
    assert others.sum() == 0.0  # every kernel counted once, in its family


def test_pytorch_amp_on_several_gpus_has_no_tensorflow_sync_term(predictor):
    """TensorFlow's AMP without XLA synchronises loss scaling across replicas each step (the
    data-parallel model's k0_amp term); a PyTorch trace's AMP answer on several GPUs does not."""
    kw = dict(precision="amp", gpus=[1, 8], targets=["p4d.24xlarge"])
    torch = predictor.predict(None, read_profile(V100_TRACE), **kw)
    tf = predictor.predict("g3s.xlarge", read_profile(ROOT / "examples" / "profile_g3s.json"), **kw)
    said = "includes the extra synchronisation"
    assert any(said in w for w in tf.warnings())
    assert not any(said in w for w in torch.warnings())


@pytest.mark.parametrize(
    ("name", "memory", "sms", "anchor"),
    [
        ("Tesla V100-SXM2-16GB", 15.8, 80, "p3.2xlarge"),
        ("Tesla T4", 14.7, 40, "g4dn.xlarge"),
        ("NVIDIA A10G", 22.0, 80, "g5.xlarge"),
        ("NVIDIA A100-SXM4-40GB", 39.4, 108, "p4d.24xlarge"),
        ("NVIDIA H100 80GB HBM3", 79.1, 132, "p5.48xlarge"),
    ],
)
def test_a_traces_gpu_name_picks_its_anchor(predictor, name, memory, sms, anchor):
    profile = read_profile(V100_TRACE).assign(
        gpu_name=name, gpu_memory_gib=memory, gpu_sm_count=sms
    )
    assert predictor.anchor_of_gpu(profile) == anchor
    # without the memory and SM columns the name alone says it
    assert (
        predictor.anchor_of_gpu(profile.drop(columns=["gpu_memory_gib", "gpu_sm_count"])) == anchor
    )
