"""torch.profiler ``key_averages()`` exports (CSV and JSON) and the torch keys of PROFET JSON."""

from __future__ import annotations

import json

import pytest

from profet_core.errors import ProfetValueError
from profet_core.inputs._profile import parse_profile

CSV = """name,device_type,count,self_device_time_total
ProfilerStep*,DeviceType.CPU,3,0.0
aten::cudnn_convolution,DeviceType.CPU,159,6000.5
aten::convolution_backward,DeviceType.CPU,159,12000.0
aten::addmm,DeviceType.CPU,3,40.0
aten::addmm,DeviceType.CPU,3,2.0
aten::relu_,DeviceType.CPU,147,0.0
volta_scudnn_128x64_relu_interior_nn_v1,DeviceType.CUDA,159,6000.5
"""


def test_csv_export_counts_op_rows_only_and_takes_steps_from_profiler_step():
    table = parse_profile(CSV, "key_averages.csv")
    assert table.iloc[0].to_dict() == {
        "Device_aten::convolution_backward": 12000.0,
        "Device_aten::cudnn_convolution": 6000.5,
        "Device_aten::addmm": 42.0,  # rows of one name summed
        "framework": "pytorch",
        "steps": 3,  # the ProfilerStep* row's count
    }
    assert "innermost op" in table.attrs["profile_notes"][0]


def test_json_export_with_steps_and_latency_and_the_old_time_column():
    rows = [
        {"name": "aten::mm", "device_type": "CPU", "count": 10, "self_cuda_time_total": 500},
        {"name": "aten::mm", "device_type": "CUDA", "count": 10, "self_cuda_time_total": 500},
    ]
    doc = {"key_averages": rows, "steps": 5, "batch_latency_s": 0.02}
    table = parse_profile(json.dumps(doc), "ka.json")
    assert table.iloc[0].to_dict() == {
        "Device_aten::mm": 500.0,
        "batch_latency_s": 0.02,
        "framework": "pytorch",
        "steps": 5,
    }


def test_without_steps_the_house_default_is_assumed_and_said():
    text = CSV.replace("ProfilerStep*", "Other*")
    table = parse_profile(text, "ka.csv")
    assert table["steps"].iloc[0] == 2 and table.attrs["steps_assumed_rows"] == (0,)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("name,count,self_device_time_total\naten::mm,1,5\n", "needs the column.*'device_type'"),
        (CSV.replace("12000.0", "-1"), "negative"),
        (CSV.replace("12000.0", "nan"), "allowed: numbers"),
        ("name,device_type,count,self_device_time_total\nx,CUDA,1,5\n", "no op has device time"),
    ],
)
def test_bad_exports_are_refused(text, match):
    with pytest.raises(ProfetValueError, match=match):
        parse_profile(text, "ka.csv")


def test_json_export_refuses_unknown_keys():
    doc = {"key_averages": [], "stepz": 3}
    with pytest.raises(ProfetValueError, match="unknown key.*'stepz'"):
        parse_profile(json.dumps(doc), "ka.json")


TORCH_META = {
    "framework": "pytorch",
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "gpu_memory_gib": 79.2,
    "gpu_sm_count": 132,
    "gpu_compute_capability": "9.0",
    "world_size": 1,
    "kernels": 1200,
    "autocast": "bf16",
    "channels_last": True,
    "host_launch_us": 1500.5,
}


def test_profet_json_carries_the_torch_meta_keys():
    doc = {"ops": {"Device_aten::conv2d": 10.0}, "steps": 4, **TORCH_META}
    row = parse_profile(json.dumps(doc), "p.json").iloc[0].to_dict()
    assert row == {"Device_aten::conv2d": 10.0, **TORCH_META, "steps": 4}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("framework", "jax"),
        ("autocast", "fp8"),
        ("gpu_sm_count", 1.5),
        ("world_size", 0),
        ("channels_last", "yes"),
        ("host_launch_us", -1),
        ("gpu_compute_capability", "sm_90"),
        ("gpu_name", "x" * 81),
    ],
)
def test_profet_json_refuses_bad_torch_meta(key, value):
    doc = {"ops": {"Device_A": 1.0}, key: value}
    with pytest.raises(ProfetValueError, match=f"{key} is .*; allowed"):
        parse_profile(json.dumps(doc), "p.json")
