"""Text models without TensorFlow: the zoo's names and grid, what ``profet profile``/``collect``
refuse for them, the profile document and the collected rows that say "text", and the
conformance rules for text-layer op types."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from profet_core import read_profile
from profet_core.capture import _textzoo, _zoo
from profet_core.capture._check import check_capture_args
from profet_core.capture._collect import _grid, check_models
from profet_core.capture._conformance import conformance, text_layers
from profet_core.capture._profile import ProfileMeta, write_profile
from profet_core.capture._tables import record
from profet_core.cli._main import main
from profet_core.errors import ProfetValueError

TEXT = ("TextRNN", "TextLSTM", "TextLSTMDropout", "TextGRU", "TextBiLSTM", "TextTransformer")


def test_the_text_zoo_is_apart_from_the_cnn_zoo():
    assert set(_textzoo.TEXT_ZOO) == set(TEXT)
    assert not set(TEXT) & set(_zoo.ZOO)  # the CNN zoo stays the shared data's names
    assert {_zoo.zoo_kind(m) for m in TEXT} == {"text"}
    assert _zoo.zoo_kind("LeNet5") == "cnn" and _zoo.zoo_kind("nope.py") is None
    assert check_models(["text"]) == list(TEXT)
    assert check_models(["LeNet5", "text", "TextGRU"]) == ["LeNet5", *TEXT]


def test_each_kind_gets_its_own_default_sizes():
    models = ["LeNet5", "TextLSTM"]
    grid = _grid(models, ["cnn", "text"], None, [16], 2, quick=False)
    text = [w for w in grid if w.model == "TextLSTM"]
    assert sorted({w.input_size for w in text}) == list(_textzoo.SEQ_LENS)
    assert {w.input_size for w in grid if w.model == "LeNet5"} == set(_zoo.INPUT_SIZES)
    assert {w.kind for w in text} == {"text"}
    # repetition by repetition, as the CNN grid: exp01 of both kinds before exp02
    assert [w.exp for w in grid] == sorted(w.exp for w in grid)
    quick = _grid(["TextLSTM"], ["text"], None, None, 1, quick=True)
    assert [(w.input_size, w.batch_size) for w in quick] == [(200, 32), (200, 128)]
    assert _zoo.steps_per_epoch(200, 128, kind="text") == 71  # ceil(8,982 / 128)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"input_size": 1}, "sequence length .* 1 is not allowed"),
        ({"input_size": 20_000}, r"sequence length .* 20000 is not allowed.*2\.\.16,384"),
        ({"batch_size": 8_982}, "8,982 sequences"),
        ({"vocab_size": 1}, "vocabulary size 1 is not allowed"),
    ],
    ids=["seq-1", "seq-20000", "batch-beyond-dataset", "vocab-1"],
)
def test_text_workloads_beyond_the_capture_are_refused(kwargs, match):
    args = {"batch_size": 128, "input_size": 200, "model_kind": "text", **kwargs}
    with pytest.raises(ProfetValueError, match=match):
        check_capture_args(**args)


def test_a_long_sequence_is_no_image_size():
    # 2,000 tokens are fine for a text model; as pixels they would be refused
    check_capture_args(16, 2_000, model_kind="text")
    with pytest.raises(ProfetValueError, match="input size 2000"):
        check_capture_args(16, 2_000)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["TextLSTM", "--model-kind", "cnn"], "is a text model, not --model-kind cnn"),
        (["LeNet5", "--model-kind", "text"], "is a cnn model, not --model-kind text"),
        (["TextLSTM", "--input-size", "1"], "sequence length"),
        (["TextLSTM", "--vocab-size", "1"], "--vocab-size"),
        (["TextLSTM", "--optimizer", "rmsprop"], "--optimizer"),
    ],
    ids=["text-as-cnn", "cnn-as-text", "seq-1", "vocab-1", "unknown-optimizer"],
)
def test_profile_refuses_before_any_work(tmp_path, capsys, argv, match):
    out = tmp_path / "p.json"
    base = ["profile", "--batch-size", "16", "--input-size", "200", "--out", str(out)]
    try:
        code = main([*base, *argv])
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(("profet: error:", "usage:")) or "error:" in err[-1]
    assert pytest.importorskip("re").search(match, err[-1]), err
    assert not out.exists()


def _meta(kind="text", differs=()):
    text = kind == "text"
    return ProfileMeta(
        model="TextLSTM" if text else "LeNet5", batch_size=128, input_size=200, classes=46,
        steps_per_epoch=71, traced_steps=(106, 107), steps_traced=2, batch_latency_s=0.02,
        latency_steps=20, epoch_latency_s=2.0, instance="g4dn.xlarge", gpu_name=None,
        gpu_memory_bytes=None, tensorflow_version="x", keras_version="x", profiler_version="x",
        convention={"differs": list(differs)}, model_kind=kind, seq_len=200 if text else None,
        vocab_size=10_000 if text else None,
    )  # fmt: skip


PROFILE = pd.DataFrame([{"Device_CudnnRNN": 900.0, "Device_MatMul": 100.0, "Host_IDLE": 5.0}])


def test_a_text_profile_never_shows_its_tokens_as_pixels(tmp_path):
    adadelta = "optimizer legacy Adadelta instead of the legacy SGD"
    path, meta_path = write_profile(PROFILE, _meta(differs=[adadelta]), tmp_path / "p.json")
    doc = json.loads(path.read_text())
    assert "input_size" not in doc  # readers take input_size as pixels
    assert (doc["batch_size"], doc["steps"], doc["convention_differs"]) == (128, 2, adadelta)
    meta = json.loads(meta_path.read_text())
    assert (meta["model_kind"], meta["seq_len"], meta["vocab_size"]) == ("text", 200, 10_000)
    assert meta["input_size"] == 200  # the sequence length, as in the collected rows' key
    back = read_profile(path)
    assert back["Device_CudnnRNN"].tolist() == [900.0] and "input_size" not in back
    cnn_path, cnn_meta = write_profile(PROFILE, _meta("cnn"), tmp_path / "c.json")
    assert json.loads(cnn_path.read_text())["input_size"] == 200
    assert json.loads(cnn_meta.read_text())["model_kind"] == "cnn"


def test_collected_rows_say_text_and_their_sequence_length(tmp_path):
    """``record`` of a finished text workload, a failed one and a CNN's (no TensorFlow)."""
    ok = {"ok": True, "profile": {"Device_MatMul": 5.0, "Host_IDLE": 1.0}}
    ok["meta"] = {"batch_latency_s": 0.02, "epoch_latency_s": 2.0, "model_kind": "text"}
    ok["meta"]["vocab_size"] = 10_000
    failed = {"ok": False, "error_kind": "oom", "message": "boom"}
    cnn = {**ok, "meta": {**ok["meta"], "model_kind": "cnn", "vocab_size": None}}
    record(tmp_path, _zoo.Workload("TextLSTM", 200, 128, kind="text"), "box", ok, 1.0)
    record(tmp_path, _zoo.Workload("TextGRU", 400, 128, kind="text"), "box", failed, 1.0)
    record(tmp_path, _zoo.Workload("LeNet5", 32, 128), "box", cnn, 1.0)
    lat = pd.read_parquet(tmp_path / "latencies.parquet").set_index("model")
    assert lat.loc["TextLSTM", ["model_kind", "seq_len", "vocab_size"]].tolist() == [
        "text",
        200,
        10_000,
    ]
    assert lat.loc["LeNet5", "model_kind"] == "cnn" and pd.isna(lat.loc["LeNet5", "seq_len"])
    assert str(lat["seq_len"].dtype) == "Int64"  # whole tokens, empty for a CNN
    status = pd.read_csv(tmp_path / "status.csv").set_index("model")
    assert status.loc["TextGRU", ["status", "model_kind", "seq_len"]].tolist() == [
        "failed",
        "text",
        400,
    ]
    prof = pd.read_parquet(tmp_path / "profiles.parquet")
    assert list(prof.columns) == [*_collect_key(), "Device_MatMul", "Host_IDLE"]


def _collect_key():
    from profet_core._schema import KEY

    return list(KEY)


# The authors' generic-loop LSTM row, shortened: cuDNN absent, the loop's ops, Adadelta.
LSTM_ROW = pd.DataFrame(
    {
        "Device_MatMul": [870.0],
        "Device_Mul": [580.0],
        "Device_RandomUniform": [180.0],
        "Device_TensorListStack": [25.0],
        "Device_ResourceApplyAdadelta": [20.0],
        "Host_IDLE": [9000.0],
    }
)
BILSTM_ROW = pd.DataFrame({"Device_CudnnRNNBackprop": [1070.0], "Device_CudnnRNN": [740.0]})


def _capture(**ops):
    return pd.Series({f"Host_{k}": float(v) for k, v in ops.items()})


def test_text_layer_ops_are_named_by_family_not_called_foreign():
    cap = _capture(MatMul=800, Mul=500, RandomUniform=150, TensorListStack=40,
                   TensorListPopBack=60, ResourceSparseApplyAdadelta=50,
                   ResourceApplyAdadelta=30, Einsum=40)  # fmt: skip
    as_cnn = conformance(cap, LSTM_ROW)
    assert as_cnn["foreign"] == ["Einsum", "ResourceSparseApplyAdadelta", "TensorListPopBack"]
    found = conformance(cap, LSTM_ROW, model_kind="text")
    assert (found["missing"], found["foreign"]) == ([], [])
    assert found["text_layers"] == {
        "attention": ["Einsum"],
        "dropout": ["RandomUniform"],
        "embedding and its sparse update": ["ResourceSparseApplyAdadelta"],
        "recurrent, generic loop": ["TensorListPopBack", "TensorListStack"],
    }
    # an optimizer the data did not run is no text layer: still foreign
    sgd = conformance(_capture(MatMul=800, ResourceApplyGradientDescent=30), LSTM_ROW, "text")
    assert sgd["foreign"] == ["ResourceApplyGradientDescent"]


def test_cudnn_counts_as_present_only_where_the_capture_ran_the_loop():
    loop = _capture(MatMul=800, TensorListFromTensor=10, Sigmoid=50)
    assert conformance(loop, BILSTM_ROW, "text")["missing"] == []
    assert conformance(loop, BILSTM_ROW)["missing"] == ["CudnnRNN", "CudnnRNNBackprop"]
    no_loop = conformance(_capture(MatMul=800), BILSTM_ROW, "text")
    assert no_loop["missing"] == ["CudnnRNN", "CudnnRNNBackprop"]
    assert text_layers(["CudnnRNNV3", "Conv2D"]) == {
        "recurrent, cuDNN kernel (GPU)": ["CudnnRNNV3"]
    }
