"""torch.profiler traces -> the profile table: the attribution rules on traces built here, and
real GPU traces (``data/torch_traces``, trimmed from other people's runs) checked against sums
computed here from their raw events."""

from __future__ import annotations

import gzip
import json
import math

import pandas as pd
import pytest

from profet_core.errors import ProfetValueError
from profet_core.inputs import _torch_events
from profet_core.inputs._gpu_names import gpu_key
from profet_core.inputs._profile import parse_profile, read_profile
from profet_core.inputs._torch_trace import read_document, read_trace, trace_table
from tests.core.inputs._traces import DATA, TRAINING, Builder, dump, load, training_step

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
CALL_CATS = {"cuda_runtime", "cuda_driver", "runtime"}


def _three_steps(**kw) -> Builder:
    b = Builder(**kw)
    for i in range(3):
        training_step(b, i + 1, i * 1000.0)
    return b


def _ops(trace: dict, **kw) -> dict:
    return dict(read_document(trace, "t", **kw).ops)


# --- the rules, on traces built here ---------------------------------------------------------


def test_each_kernel_goes_to_the_first_level_op_node_or_optimizer():
    ops = _ops(_three_steps().trace())
    # 2 counted steps (the first is warm-up); conv_fwd is 100 us a step, under aten::conv2d
    assert ops["Device_aten::conv2d"] == 200
    assert ops["Device_aten::linear"] == 100  # not aten::addmm: the outermost op
    assert ops["Device_AddmmBackward0"] == 120  # the node, not aten::mm inside it
    assert ops["Device_ConvolutionBackward0"] == 400
    assert ops["Device_optimizer:SGD"] == 40  # the foreach kernel inside Optimizer.step#SGD.step
    assert not any(k.startswith("Device_aten::addmm") or "foreach" in k for k in ops)


def test_gpu_idle_is_the_window_less_the_union_of_all_streams():
    b = Builder()
    for n, t0 in ((1, 0.0), (2, 1000.0)):
        b.step(n, t0, 500).frame("aten::add", t0 + 1, 50)
        b.launch(t0 + 2, "k1", t0 + 100, 30).launch(t0 + 3, "k2", t0 + 120, 30)  # overlap
        b.launch(t0 + 4, "k3", t0 + 170, 30)
    b.frame("autograd::engine::evaluate_function: AddBackward0", 1600, 1)
    ops = _ops(b.trace())
    # window 100..200 = 100 us; busy [100, 150] and [170, 200] = 80 us
    assert ops["Device_IDLE"] == pytest.approx(20)
    assert ops["Device_aten::add"] == pytest.approx(90)


def test_gpu_work_after_the_host_step_ends_stays_with_the_step_that_launched_it():
    b = _three_steps()
    b.frame("aten::mul", 2990, 5).launch(2991, "late_kernel", 3500, 40)  # runs in "step 4"
    b.step(4, 3000, 1000).frame("aten::mul", 3010, 5).launch(3011, "next_kernel", 3600, 7)
    profile = read_document(b.trace(), "t")
    assert dict(profile.ops)["Device_aten::mul"] == 47
    assert profile.step_ids == (2, 3, 4)
    # step 3's GPU window now runs to 3540: longer than its host span
    assert profile.step_us[1] == pytest.approx(3540 - 2100)


def test_warm_up_steps_are_dropped_and_said():
    b = _three_steps()
    profile = read_document(b.trace(), "t")
    assert (profile.steps, profile.step_ids, profile.warmup_steps) == (2, (2, 3), 1)
    assert "first 1 profiled step(s) dropped as warm-up" in profile.notes[0]
    kept = read_document(b.trace(), "t", warmup_steps=0)
    assert kept.steps == 3 and dict(kept.ops)["Device_aten::conv2d"] == 300


def test_nccl_copies_memsets_and_opless_kernels():
    b = Builder(world=4)
    for n, t0 in ((1, 0.0), (2, 1000.0)):
        b.step(n, t0, 900).frame("aten::conv2d", t0 + 1, 9).launch(t0 + 2, "k", t0 + 10, 10)
        b.frame("c10d::allreduce_", t0 + 20, 10)
        b.launch(t0 + 21, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", t0 + 30, 300)
        b.launch(t0 + 40, "ncclKernel_AllGather_RING_LL_Sum_int8_t(x)", t0 + 330, 30)
        b.frame("aten::to", t0 + 50, 10)
        b.launch(t0 + 51, "Memcpy HtoD (Pageable -> Device)", t0 + 400, 5, cat="gpu_memcpy")
        b.launch(t0 + 52, "Memset (Device)", t0 + 410, 2, cat="gpu_memset")
        b.launch(t0 + 70, "void triton_poi_fused_0<float>(float*, int)", t0 + 420, 8)
    b.frame("ConvolutionBackward0", 1800, 1)
    profile = read_document(b.trace(), "t")
    ops = dict(profile.ops)
    assert ops["Device_nccl:AllReduce"] == 300 and ops["Device_nccl:AllGather"] == 30
    assert ops["Device_Memcpy HtoD"] == 5 and ops["Device_Memset"] == 2
    assert ops["Device_kernel:triton_poi_fused_0"] == 8
    assert profile.world_size == 4 and profile.nccl_us == 330
    assert any("world size 4 (nccl)" in n for n in profile.notes)
    assert any("1 kernel(s)" in n and "outside any op" in n for n in profile.notes)


def test_host_synchronize_dataloader_and_launch_time():
    b = _three_steps()
    for t0 in (1000.0, 2000.0):
        b.frame(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            t0 + 1,
            8,
            "user_annotation",
        )
        b.frame("aten::item", t0 + 800, 60).frame("aten::_local_scalar_dense", t0 + 801, 58)
        b.launch(t0 + 802, "Memcpy DtoH (Device -> Pageable)", t0 + 850, 1, cat="gpu_memcpy")
        b.frame("cudaStreamSynchronize", t0 + 820, 50, cat="cuda_runtime")  # overlaps it
    profile = read_document(b.trace(), "t")
    ops = dict(profile.ops)
    assert ops["Host_DataLoader"] == 16
    assert ops["Host_Synchronize"] == pytest.approx(2 * 69)  # union of [801, 859] and [820, 870]
    assert profile.host_launch_us == pytest.approx(2000 - 2 * 69)


def test_a_local_scalar_dense_that_reaches_no_gpu_is_no_wait():
    b = _three_steps()
    b.frame("aten::_local_scalar_dense", 1850, 50)  # a CPU tensor's .item(): no GPU call inside
    assert _ops(b.trace())["Host_Synchronize"] == 0


def _conv(b, t0, dims, seq, kernel, strides=None):
    args = {"Input Dims": dims, "Sequence number": seq}
    if strides:
        args["Input Strides"] = strides
    b.frame("aten::conv2d", t0, 20, **args).launch(t0 + 1, kernel, t0 + 100, 10)
    node = "autograd::engine::evaluate_function: ConvolutionBackward0"
    b.frame(node, t0 + 500, 20, **{"Sequence number": seq})
    b.frame("ConvolutionBackward0", t0 + 501, 18, **{"Sequence number": seq})
    b.launch(t0 + 502, kernel + "_bwd", t0 + 600, 20)


def test_depthwise_and_grouped_convolutions_from_recorded_shapes_forward_and_backward():
    b = Builder()
    for n, t0 in ((1, 0.0), (2, 1000.0)):
        b.step(n, t0, 1000)
        seq = 10 * n
        _conv(b, t0 + 10, [[8, 32, 56, 56], [32, 1, 3, 3], [32], []], seq, "dw")
        _conv(b, t0 + 30, [[8, 32, 56, 56], [64, 8, 3, 3], [], []], seq + 1, "grp")
        _conv(b, t0 + 50, [[8, 32, 56, 56], [64, 32, 1, 1], [], []], seq + 2, "dense")
        _conv(b, t0 + 70, [[8, 1, 28, 28], [16, 1, 5, 5], [], []], seq + 3, "one_channel")
    ops = _ops(b.trace())
    assert ops["Device_aten::conv2d[depthwise]"] == 10
    assert ops["Device_ConvolutionBackward0[depthwise]"] == 20
    assert ops["Device_aten::conv2d[grouped]"] == 10
    assert ops["Device_ConvolutionBackward0[grouped]"] == 20
    # a 1x1 dense conv and a conv on one input channel ([16, 1, 5, 5] but groups == 1): no suffix
    assert ops["Device_aten::conv2d"] == 20 and ops["Device_ConvolutionBackward0"] == 40


def test_without_shapes_no_suffix_and_a_note():
    profile = read_document(_three_steps().trace(), "t")
    assert not any("[" in k for k, _ in profile.ops)
    assert any("shapes not recorded (record_shapes=False)" in n for n in profile.notes)
    assert profile.channels_last is None and "channels_last" not in trace_table(profile)


def test_channels_last_from_recorded_strides():
    for strides, want in (([[100352, 1, 1792, 32], [9, 9, 3, 1]], True), (None, None)):
        b = Builder()
        for n, t0 in ((1, 0.0), (2, 1000.0)):
            b.step(n, t0, 1000)
            dims = [[8, 32, 56, 56], [32, 32, 3, 3]]
            _conv(b, t0 + 10, dims, n, "k", strides=strides)
        assert read_document(b.trace(), "t").channels_last is want
    b = Builder()
    for n, t0 in ((1, 0.0), (2, 1000.0)):
        b.step(n, t0, 1000)
        _conv(b, t0 + 10, [[8, 32, 56, 56], [32, 32, 3, 3]], n, "k", [[100352, 3136, 56, 1]])
    assert read_document(b.trace(), "t").channels_last is False


@pytest.mark.parametrize(
    ("kernels", "casts", "want"),
    [
        (
            ["ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", "sm80_xmma_fprop_f16f16_f32"],
            0,
            "fp16",
        ),
        (["volta_h884gemm_128x128_nt", "turing_h1688gemm_64x64_nn"], 0, "fp16"),
        (
            ["ampere_bf16_s16816gemm_bf16_64x64_nn", "void at::native::k<c10::BFloat16>()"],
            0,
            "bf16",
        ),
        (["sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"], 0, "bf16"),
        (["cutlass_80_tensorop_s1688gemm_256x64_16x4_nn", "ampere_tf32_s1688gemm_tf32"], 0, ""),
        (["volta_sgemm_128x64_nn", "void at::native::k<float>()"], 0, ""),
        # one tiny FP16 kernel: under 5% of kernel time, unless autocast's cast op says so
        (["void at::native::copy<c10::Half>()"], 0, ""),
        (["void at::native::copy<c10::Half>()"], 1, "fp16"),
    ],
)
def test_autocast_told_from_kernel_names(kernels, casts, want):
    b = _three_steps()
    for t0 in (1000.0, 2000.0):
        b.frame("aten::_autocast_to_reduced_precision" if casts else "aten::mm", t0 + 710, 20)
        for i, k in enumerate(kernels):
            b.launch(t0 + 711 + i, k, t0 + 730 + 10 * i, 1 if "copy" in k else 500)
    assert read_document(b.trace(), "t").autocast == want


def test_gpu_properties_of_the_device_the_kernels_ran_on():
    b = _three_steps()
    b.meta["deviceProperties"].insert(0, {"id": 5, "name": "NVIDIA T4", "numSms": 40})
    p = read_document(b.trace(), "t")
    assert (p.gpu_name, p.gpu_sm_count, p.gpu_compute_capability) == (
        "NVIDIA H100 80GB HBM3", 132, "9.0")  # fmt: skip
    assert p.gpu_memory_gib == pytest.approx(79.65, abs=0.01)
    assert gpu_key(p.gpu_name, p.gpu_memory_gib, p.gpu_sm_count) == "NVIDIA H100 SXM5 80GB"


def test_table_schema_and_notes():
    table = trace_table(read_document(_three_steps(world=2).trace(), "t"))
    meta = ["steps", "batch_latency_s", "framework", "gpu_name", "gpu_memory_gib",
            "gpu_sm_count", "gpu_compute_capability", "world_size", "kernels", "autocast",
            "host_launch_us"]  # fmt: skip
    assert list(table.columns[-len(meta) :]) == meta
    ops = list(table.columns[: -len(meta)])
    assert ops[:2] == ["Host_DataLoader", "Host_Synchronize"] and ops[-1] == "Device_IDLE"
    row = table.iloc[0]
    assert (row["steps"], row["kernels"], row["world_size"], row["framework"]) == (
        2,
        12,
        2,
        "pytorch",
    )
    assert row["batch_latency_s"] == pytest.approx(1e-3)
    assert isinstance(table.attrs["profile_notes"], tuple)
    assert any("measured under the profiler" in n for n in table.attrs["profile_notes"])


# --- refusals, one line each -----------------------------------------------------------------


def _refused(data: bytes, match: str, name="t.pt.trace.json"):
    with pytest.raises(ProfetValueError, match=match) as info:
        parse_profile(data, name)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_refuses_a_trace_without_gpu_kernels():
    b = _three_steps()
    b.events = [e for e in b.events if e["cat"] not in ("kernel", "cuda_runtime")]
    _refused(dump(b.trace()), "no GPU kernels: it was taken without a GPU, or with activities")


def test_refuses_a_forward_only_trace():
    b = _three_steps()
    b.events = [e for e in b.events if "Backward" not in e["name"]]
    _refused(dump(b.trace()), "no backward pass .*forward-only \\(inference\\)")


def test_refuses_a_trace_without_step_markers():
    b = _three_steps()
    b.events = [e for e in b.events if not e["name"].startswith("ProfilerStep#")]
    _refused(dump(b.trace()), "no step markers .*call prof.step\\(\\) once per training step")


def test_refuses_a_trace_with_no_step_after_the_warm_up():
    b = Builder()
    training_step(b, 1, 0.0)
    _refused(dump(b.trace()), "has 1 profiled step.*none is left: profile at least 2 steps")


def test_refuses_a_trace_whose_counted_steps_ran_nothing_on_the_gpu():
    b = _three_steps()
    b.step(4, 5000, 100).step(5, 6000, 100)
    with pytest.raises(ProfetValueError, match="launched no GPU work"):
        read_document(b.trace(), "t", warmup_steps=3)


@pytest.mark.parametrize("gz", [False, True], ids=["json", "gzip"])
def test_refuses_a_truncated_trace(gz):
    data = dump(_three_steps().trace())
    cut = gzip.compress(data[: len(data) // 2], mtime=0) if gz else data[: len(data) // 2]
    _refused(cut, "ends early: a trace the profiler did not finish writing")
    if gz:  # the gzip stream itself cut short
        _refused(dump(_three_steps().trace(), gz=True)[:-30], "ends early \\(a truncated gzip")


def test_refuses_malformed_json_saying_so():
    _refused(b'{"traceEvents": [1, 2,, 3]}', "is not valid JSON")


def _gunzip_refused(data: bytes, limit: int, match: str) -> str:
    with pytest.raises(ProfetValueError, match=match) as info:
        _torch_events.gunzip_bounded(data, "trace 't.pt.trace.json.gz'", limit)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_gzip_bomb_is_refused_at_the_decompressed_bound():
    bomb = gzip.compress(b'{"traceEvents": [' + b" " * (2 << 20) + b"]}", mtime=0)
    assert len(bomb) < 10_000
    message = _gunzip_refused(bomb, 1 << 20, "decompresses to more than 1 MiB, the limit")
    assert "4 x the 50 MiB input bound" in message
    # a trailer that understates the size is caught while decompressing
    forged = bomb[:-4] + (100).to_bytes(4, "little")
    _gunzip_refused(forged, 1 << 20, "decompresses to more than 1 MiB")
    # within the bound it decompresses whole; the trace reader applies the real bound
    assert len(_torch_events.gunzip_bounded(bomb, "t", 3 << 20)) == (2 << 20) + 19


def test_the_decompressed_bound_is_4x_the_input_bound():
    from profet_core._schema import MAX_PROFILE_BYTES

    assert _torch_events.MAX_TRACE_JSON_BYTES == 4 * MAX_PROFILE_BYTES


def test_gzip_of_anything_but_a_trace_is_refused():
    data = gzip.compress(b'{"Device_Conv2D": 5}', mtime=0)
    _refused(data, "gzip-compressed but holds no torch.profiler trace", name="p.json.gz")


def test_a_steps_override_that_disagrees_with_the_trace_is_refused():
    data = dump(_three_steps().trace())
    assert parse_profile(data, "t.json", steps=2)["steps"].iloc[0] == 2
    with pytest.raises(ProfetValueError, match="the trace counts its own steps \\(2\\)"):
        parse_profile(data, "t.json", steps=5)


# --- the wire-up: parse_profile and read_profile ---------------------------------------------


@pytest.mark.parametrize("gz", [False, True], ids=["json", "gzip"])
def test_parse_profile_reads_a_trace_plain_or_gzipped(gz, tmp_path):
    data = dump(_three_steps().trace(), gz=gz)
    path = tmp_path / ("run.pt.trace.json.gz" if gz else "run.pt.trace.json")
    path.write_bytes(data)
    table = read_profile(path)
    want = trace_table(read_trace(data, path.name))
    pd.testing.assert_frame_equal(table[want.columns], want)
    assert table.attrs["profile_notes"] == want.attrs["profile_notes"]


def test_profet_json_mentioning_trace_events_is_still_profet_json():
    table = parse_profile(b'{"Device_traceEvents": 5.0, "Host_x": 1}', "p.json")
    assert list(table.columns) == ["Device_traceEvents", "Host_x", "steps"]


def test_other_file_types_are_still_refused_naming_what_is_allowed():
    _refused(b"\x89PNG\r\n", "has type '.png'; allowed: .json, .csv, .parquet", name="p.png")


# --- real GPU traces (trimmed; README.md in data/torch_traces says whose) ---------------------


def _reference(trace: dict) -> dict:
    """From the raw events, independently of the reader: GPU time and kernels launched inside
    the counted steps (all but the first ProfilerStep), and per step the GPU window and union."""
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    steps = sorted(
        (e for e in events if e["name"].startswith("ProfilerStep#")
         and e["cat"].lower() != "gpu_user_annotation"),
        key=lambda e: e["ts"],
    )[1:]  # fmt: skip
    calls = {e["args"]["correlation"]: e for e in events if e["cat"].lower() in CALL_CATS}
    base = math.floor(events[0]["ts"])  # epoch us as floats hold 0.25 us at best; offsets do not
    out = {"us": 0.0, "kernels": 0, "idle": 0.0}
    for s in steps:
        mine = [
            g for g in events
            if g["cat"].lower() in GPU_CATS and g["args"].get("correlation") in calls
            and s["ts"] <= calls[g["args"]["correlation"]]["ts"] <= s["ts"] + s["dur"]
        ]  # fmt: skip
        out["us"] += sum(g["dur"] for g in mine)
        out["kernels"] += sum(g["cat"].lower() == "kernel" for g in mine)
        spans = sorted((g["ts"] - base, g["ts"] - base + g["dur"]) for g in mine)
        covered, end = 0.0, -math.inf
        for a, b in spans:
            covered += max(0.0, b - max(a, end))
            end = max(end, b)
        out["idle"] += spans[-1][1] - spans[0][0] - covered
    return out


def _inside(trace: dict, frame_name: str) -> float:
    """GPU time launched (same thread) inside frames named ``frame_name`` in counted steps,
    NCCL kernels, copies and memsets aside."""
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    steps = sorted(
        (e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"]
    )
    lo, hi = steps[1]["ts"], steps[-1]["ts"] + steps[-1]["dur"]
    frames = [e for e in events if e["name"] == frame_name]
    calls = {e["args"]["correlation"]: e for e in events if e["cat"].lower() in CALL_CATS}
    total = 0.0
    for g in events:
        c = calls.get(g.get("args", {}).get("correlation"))
        if g["cat"] != "kernel" or c is None or not lo <= c["ts"] <= hi or "nccl" in g["name"]:
            continue
        if any(f["tid"] == c["tid"] and f["ts"] <= c["ts"] <= f["ts"] + f["dur"] for f in frames):
            total += g["dur"]
    return total


@pytest.fixture(scope="module")
def real():
    out = {}
    for key, path in TRAINING.items():
        trace = load(path)
        out[key] = (trace, read_document(trace, path.name))
    return out


@pytest.mark.parametrize("key", list(TRAINING))
def test_real_traces_count_every_gpu_event_once(real, key):
    trace, profile = real[key]
    ref = _reference(trace)
    device = {k: v for k, v in profile.ops if k.startswith("Device_")}
    assert sum(v for k, v in device.items() if k != "Device_IDLE") == pytest.approx(
        ref["us"], rel=1e-9
    )
    assert device["Device_IDLE"] == pytest.approx(ref["idle"], rel=1e-9)
    assert profile.kernels == ref["kernels"]


@pytest.mark.parametrize(
    ("key", "steps", "gpu", "spec", "world", "columns"),
    [
        ("resnet50_v100_train", (102, 103), "Tesla V100-SXM2-32GB", "NVIDIA V100 SXM2 32GB", 1,
         ["aten::conv2d", "ConvolutionBackward0", "aten::batch_norm", "CudnnBatchNormBackward0",
          "aten::relu_", "ReluBackward0", "aten::max_pool2d", "AddmmBackward0", "optimizer:SGD",
          "Memcpy DtoD", "torch::autograd::AccumulateGrad"]),
        ("resnet50_a100_ddp", (6,), "NVIDIA A100-PG509-200", "NVIDIA A100 SXM4 40GB", 2,
         ["aten::conv2d", "ConvolutionBackward0", "nccl:AllReduce", "optimizer:SGD"]),
        ("resnet50_v100_torch19", (17, 18), "Tesla V100-DGXS-32GB", "", 1,
         ["aten::conv2d", "CudnnConvolutionBackward", "CudnnBatchNormBackward", "Memcpy HtoD",
          "optimizer:SGD", "torch::autograd::AccumulateGrad"]),
        ("recsys_a100_16ranks", (551, 552), "NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB", 16,
         ["optimizer:FusedAdam", "nccl:SendRecv", "AddmmBackward0", "CompiledFunctionBackward",
          "Memcpy HtoD"]),
    ],
)  # fmt: skip
def test_real_traces_steps_gpu_world_size_and_op_columns(
    real, key, steps, gpu, spec, world, columns
):
    _, profile = real[key]
    assert profile.step_ids == steps and profile.steps == len(steps)
    assert profile.gpu_name == gpu
    assert gpu_key(profile.gpu_name, profile.gpu_memory_gib, profile.gpu_sm_count) == spec
    assert profile.world_size == world
    device = {k for k, v in profile.ops if v > 0}
    assert {f"Device_{c}" for c in columns} <= device
    assert profile.autocast == ""  # none of them ran under AMP (FP32/TF32 kernels)


@pytest.mark.parametrize(
    ("key", "frame", "column"),
    [
        ("resnet50_v100_train", "Optimizer.step#SGD.step", "optimizer:SGD"),
        ("resnet50_v100_train", "aten::conv2d", "aten::conv2d"),
        ("resnet50_a100_ddp", "aten::batch_norm", "aten::batch_norm"),
        ("recsys_a100_16ranks", "Optimizer.step#FusedAdam.step", "optimizer:FusedAdam"),
    ],
)
def test_real_trace_columns_equal_the_time_launched_inside_their_frames(real, key, frame, column):
    trace, profile = real[key]
    assert dict(profile.ops)[f"Device_{column}"] == pytest.approx(_inside(trace, frame), rel=1e-9)


def test_real_ddp_trace_says_its_nccl_time(real):
    _, profile = real["resnet50_a100_ddp"]
    assert profile.nccl_us == dict(profile.ops)["Device_nccl:AllReduce"] + dict(profile.ops).get(
        "Device_nccl:Broadcast", 0.0
    )
    assert any("world size 2 (nccl)" in n for n in profile.notes)


def test_real_torch19_trace_has_shapes_and_a_data_loader(real):
    _, profile = real["resnet50_v100_torch19"]
    assert profile.shapes_recorded and not any("shapes not recorded" in n for n in profile.notes)
    assert not any("[depthwise]" in k or "[grouped]" in k for k, _ in profile.ops)  # ResNet-50
    assert dict(profile.ops)["Host_DataLoader"] > 0


def test_real_trace_refusals():
    for name, match in (
        ("cpu_only_rank34.pt.trace.json.gz", "holds no GPU kernels"),
        ("bert_small_h100_inference.pt.trace.json.gz", "forward-only \\(inference\\)"),
    ):
        _refused((DATA / name).read_bytes(), match, name=name)


def _without_backward(trace: dict) -> dict:
    """The trace with its autograd frames deleted, and the calls and GPU events launched
    inside them: a forward-only trace made from a training one."""
    events = trace["traceEvents"]
    nodes = [
        e for e in events
        if e.get("cat", "").lower() in ("cpu_op", "operator")
        and (e["name"].startswith("autograd::") or "Backward" in e["name"]
             or e["name"].startswith("torch::autograd::"))
    ]  # fmt: skip
    inside = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat", "").lower() in CALL_CATS
        and any(n["tid"] == e["tid"] and n["ts"] <= e["ts"] <= n["ts"] + n["dur"] for n in nodes)
    }
    gone = {id(n) for n in nodes}
    keep = [
        e for e in events
        if id(e) not in gone and e.get("args", {}).get("correlation") not in inside
    ]  # fmt: skip
    return {**trace, "traceEvents": keep}


def test_real_training_trace_without_its_backward_or_its_steps_is_refused(real):
    trace, _ = real["resnet50_v100_train"]
    _refused(json.dumps(_without_backward(trace)).encode(), "forward-only")
    stepless = [e for e in trace["traceEvents"] if not e["name"].startswith("ProfilerStep#")]
    _refused(json.dumps({**trace, "traceEvents": stepless}).encode(), "no step markers")


def test_real_trace_through_parse_profile_keeps_its_numbers(real):
    path = TRAINING["resnet50_a100_ddp"]
    table = read_profile(path)
    _, profile = real["resnet50_a100_ddp"]
    for column, us in profile.ops:
        assert table[column].iloc[0] == us
    assert table["steps"].iloc[0] == 1 and table["world_size"].iloc[0] == 2
