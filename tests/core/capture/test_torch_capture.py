"""``profile_torch`` and ``profet profile --torch``: a real PyTorch run on this machine's CPU
(the trace's plumbing and the CPU-only refusal; a CPU trace has no kernels to attribute), the
attribution on that real torch-written trace with GPU launches added under its real frames, and
the profile written from a real GPU trace."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys

import pytest

from profet_core.capture import _torch
from profet_core.cli._main import main
from profet_core.errors import ProfetError, ProfetValueError
from profet_core.inputs._profile import parse_profile, read_profile
from profet_core.inputs._torch_trace import read_document, read_trace, trace_table
from tests.core.inputs._traces import TRAINING, load

HAS_TORCH = importlib.util.find_spec("torch") is not None
requires_torch = pytest.mark.skipif(
    not HAS_TORCH,
    reason="torch is not installed (pip install 'profet[torch]'); the reader's tests on real "
    "GPU traces (tests/core/inputs/test_torch_trace.py) run without it",
)


NET = """
import torch
from torch import nn


def make():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),             # dense
        nn.Conv2d(16, 16, 3, padding=1, groups=16), # depthwise
        nn.Conv2d(16, 32, 3, padding=1, groups=4),  # grouped
        nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 4),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = (torch.randn(4, 3, 16, 16), torch.tensor([0, 1, 2, 3]))
    return model, nn.CrossEntropyLoss(), optimizer, batch
"""


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    path = tmp_path_factory.mktemp("net") / "net.py"
    path.write_text(NET)
    return path


@pytest.fixture(scope="module")
def cpu_run(net, tmp_path_factory):
    """One capture on this machine's CPU (channels_last), and what it refused with."""
    if not HAS_TORCH:
        pytest.skip("torch is not installed (pip install 'profet[torch]')")
    out = tmp_path_factory.mktemp("run")
    made = _torch.load_factory(f"{net}:make")
    with pytest.raises(ProfetValueError) as info:
        _torch.profile_torch(
            *made, steps=2, warmup=1, latency_steps=2, channels_last=True, out_dir=out, name="p"
        )
    return out, str(info.value)


@requires_torch
@pytest.mark.slow  # importing torch and a profiled run: ~5 s on 2 shared cores
def test_a_cpu_run_writes_the_trace_and_says_it_cannot_be_predicted_from(cpu_run):
    out, message = cpu_run
    assert "on this machine's CPU (no GPU) wrote the raw trace" in message
    assert "holds no GPU kernels" in message and "\n" not in message
    assert not (out / "p.json").exists()  # no profile
    trace = json.loads(gzip.decompress((out / "p.pt.trace.json.gz").read_bytes()))
    steps = [e for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")]
    assert len(steps) == 3  # steps + 1: the reader drops the first
    assert trace["record_shapes"] == 1
    assert any("ConvolutionBackward0" in e.get("name", "") for e in trace["traceEvents"])
    meta = json.loads((out / "p.meta.json").read_text())
    assert meta["device"] == "cpu" and "no GPU kernels" in meta["refused"]
    assert meta["batch_latency_s"] > 0 and "p.pt.trace.json.gz" in meta["profet_files"]


def _with_gpu_launches(trace: dict) -> dict:
    """The torch-written trace with a runtime call and a 10 us kernel added under every
    convolution op and autograd node of it, on their own thread."""
    events = list(trace["traceEvents"])
    corr = 10**9
    for e in trace["traceEvents"]:
        name = e.get("name", "")
        if e.get("ph") != "X" or name not in ("aten::conv2d", "ConvolutionBackward0"):
            continue
        corr += 1
        call = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": e["pid"]}
        events.append(
            {**call, "tid": e["tid"], "ts": e["ts"], "dur": 0, "args": {"correlation": corr}}
        )
        kernel = {"ph": "X", "cat": "kernel", "name": f"k_{name}", "pid": 0, "tid": 7}
        events.append({**kernel, "ts": e["ts"] + 1, "dur": 10, "args": {"correlation": corr}})
    return {**trace, "traceEvents": events}


@requires_torch
@pytest.mark.slow  # importing torch and a profiled run: ~5 s on 2 shared cores
def test_convolution_kinds_and_layout_on_a_real_torch_trace(cpu_run):
    out, _ = cpu_run
    trace = json.loads(gzip.decompress((out / "p.pt.trace.json.gz").read_bytes()))
    profile = read_document(_with_gpu_launches(trace), "cpu+launches")
    ops = dict(profile.ops)
    # 2 counted steps, one dense, one depthwise and one grouped convolution each: the forward op
    # by its own shapes, the backward node by its forward op's Sequence number
    for suffix in ("", "[depthwise]", "[grouped]"):
        assert ops[f"Device_aten::conv2d{suffix}"] == pytest.approx(20)
        assert ops[f"Device_ConvolutionBackward0{suffix}"] == pytest.approx(20)
    assert profile.channels_last is True and profile.shapes_recorded
    assert profile.steps == 2 and profile.kernels == 12


@requires_torch
@pytest.mark.slow  # importing torch and a profiled run: ~5 s on 2 shared cores
def test_the_cli_on_a_cpu_exits_2_keeping_the_trace(net, tmp_path, capsys):
    out = tmp_path / "prof.json"
    argv = ["profile", "--torch", f"{net}:make", "--steps", "1", "--latency-steps", "1"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("profet: error: the run on this machine's CPU (no GPU) wrote the raw")
    assert (tmp_path / "prof.pt.trace.json.gz").is_file() and not out.exists()


@requires_torch
@pytest.mark.slow  # importing torch and a profiled run: ~5 s on 2 shared cores
def test_key_averages_of_a_real_cpu_run_are_refused_for_no_device_time():
    import torch

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        torch.ones(8) @ torch.ones(8)
    rows = [
        {"name": e.key, "device_type": str(e.device_type), "count": e.count,
         "self_device_time_total": e.self_device_time_total}
        for e in prof.key_averages()
    ]  # fmt: skip
    with pytest.raises(ProfetValueError, match="no op has device time"):
        parse_profile(json.dumps({"key_averages": rows}), "ka.json")


# --- without torch ---------------------------------------------------------------------------


def test_without_torch_the_capture_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    with pytest.raises(ProfetError, match="pip install -e '.\\[torch\\]'"):
        _torch.require_torch()


@pytest.mark.parametrize(
    ("spec", "source", "match"),
    [
        ("nocolon", None, "give MODULE:FACTORY"),
        ("{dir}/missing.py:make", None, "does not exist"),
        ("{dir}/m.py:other", "def make():\n    return 1, 2, 3, 4\n", "defines no other\\(\\)"),
        ("{dir}/m.py:make", "def make():\n    raise RuntimeError('boom')\n", "raised RuntimeError"),
        ("{dir}/m.py:make", "def make():\n    return 1, 2\n", "must return \\(model, loss_fn"),
        ("{dir}/m.py:make", "import sys\nsys.exit(3)\n", "the module exits"),
        ("{dir}/m.py:make", "1/0\n", "does not load: ZeroDivisionError"),
    ],
)
def test_factory_mistakes_are_one_line(spec, source, match, tmp_path):
    if source is not None:
        (tmp_path / "m.py").write_text(source)
    with pytest.raises(ProfetValueError, match=match) as info:
        _torch.load_factory(spec.format(dir=tmp_path))
    assert "\n" not in str(info.value)


def test_a_file_profet_did_not_write_is_never_replaced(tmp_path):
    (tmp_path / "p.pt.trace.json.gz").write_bytes(b"mine")
    with pytest.raises(ProfetValueError, match="exists and PROFET did not write it"):
        _torch.check_torch_out(tmp_path, "p")
    assert (tmp_path / "p.pt.trace.json.gz").read_bytes() == b"mine"


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [("steps", 0, "steps 0"), ("warmup", -1, "warmup -1"), ("amp", "fp8", "amp 'fp8'")],
)
def test_bad_options_are_refused_before_any_run(option, value, match, tmp_path):
    with pytest.raises(ProfetValueError, match=match):
        _torch.profile_torch(None, None, None, None, out_dir=tmp_path, **{option: value})
    assert list(tmp_path.iterdir()) == []


def test_cli_options_of_the_other_framework_are_refused(capsys):
    assert main(["profile", "--torch", "m:make", "--batch-size", "8"]) == 2
    assert "leave out --batch-size" in capsys.readouterr().err
    assert (
        main(["profile", "m.keras", "--batch-size", "8", "--input-size", "32", "--amp", "fp16"])
        == 2
    )
    assert "--amp go with --torch" in capsys.readouterr().err
    assert main(["profile"]) == 2
    assert "required: MODEL, --batch-size, --input-size (or --torch" in capsys.readouterr().err


def test_the_profile_written_from_a_real_gpu_trace_reads_back_as_the_trace(tmp_path):
    """What a GPU run writes, from the raw trace of a real one (the A100 DDP fixture): the
    profile JSON reads back with the trace table's op times and meta columns."""
    raw = json.dumps(load(TRAINING["resnet50_a100_ddp"])).encode()
    paths = _torch.check_torch_out(tmp_path, "gpu")
    done = _torch._write(paths, raw, 0.2, "cuda", None, False, "p4d.24xlarge", "2.5.0")
    back = read_profile(done.profile_path)
    want = trace_table(read_trace(gzip.compress(raw), "t"))
    for column in want.columns:
        if column != "batch_latency_s":
            assert back[column].iloc[0] == want[column].iloc[0], column
    assert back["batch_latency_s"].iloc[0] == 0.2  # the unprofiled timing, not the traced one
    assert back["instance"].iloc[0] == "p4d.24xlarge"
    meta = json.loads(done.meta_path.read_text())
    assert set(meta["profet_files"]) == {"gpu.json", "gpu.pt.trace.json.gz"}
    assert meta["profiled_latency_s"] == pytest.approx(want["batch_latency_s"].iloc[0])
    # written again over its own files: allowed; the trace read from disk is the same
    _torch.check_torch_out(tmp_path, "gpu")
    assert read_profile(done.trace_path)["kernels"].iloc[0] == want["kernels"].iloc[0]
