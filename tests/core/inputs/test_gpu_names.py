"""The GPU a trace names (``deviceProperties``) -> the spec sheet's line."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core.inputs._gpu_names import _NAMES, gpu_key
from profet_core.inputs._gpu_specs import load_specs


@pytest.mark.parametrize(
    ("name", "memory_gib", "sms", "want"),
    [
        # names as the CUDA driver reports them, memory as totalGlobalMem / 2**30
        ("NVIDIA A100-SXM4-40GB", 39.4, 108, "NVIDIA A100 SXM4 40GB"),
        ("NVIDIA A100-SXM4-80GB", 79.2, 108, "NVIDIA A100 SXM4 80GB"),
        ("NVIDIA A100 80GB PCIe", 79.2, 108, "NVIDIA A100 PCIe 80GB"),
        ("NVIDIA A100-PCIE-40GB", 39.4, 108, "NVIDIA A100 PCIe 40GB"),
        ("NVIDIA A100-PG509-200", 39.4, 108, "NVIDIA A100 SXM4 40GB"),
        ("NVIDIA H100 80GB HBM3", 79.2, 132, "NVIDIA H100 SXM5 80GB"),
        ("NVIDIA H100 PCIe", 79.2, 114, "NVIDIA H100 PCIe 80GB"),
        ("NVIDIA H100 NVL", 93.6, 132, "NVIDIA H100 NVL 94GB"),
        ("NVIDIA H200", 139.8, 132, "NVIDIA H200 SXM 141GB"),
        ("NVIDIA GH200 480GB", 94.5, 132, "NVIDIA GH200 (H100 96GB)"),
        ("NVIDIA L4", 22.0, 58, "NVIDIA L4"),
        ("NVIDIA A10G", 22.0, 80, "NVIDIA A10G"),
        ("NVIDIA A10", 22.0, 72, "NVIDIA A10"),
        ("NVIDIA L40S", 44.4, 142, "NVIDIA L40S"),
        ("Tesla T4", 14.7, 40, "NVIDIA T4"),
        ("Tesla V100-SXM2-16GB", 15.8, 80, "NVIDIA V100 SXM2 16GB"),
        ("Tesla V100-SXM2-32GB", 31.7, 80, "NVIDIA V100 SXM2 32GB"),
        ("Tesla V100-PCIE-16GB", 15.8, 80, "NVIDIA V100 PCIe 16GB"),
        ("NVIDIA GeForce RTX 4090", 23.6, 128, "NVIDIA GeForce RTX 4090"),
        ("NVIDIA GeForce RTX 3090", 23.7, 82, "NVIDIA GeForce RTX 3090"),
        ("NVIDIA RTX A6000", 47.5, 84, "NVIDIA RTX A6000"),
        ("NVIDIA RTX 6000 Ada Generation", 47.5, 142, "NVIDIA RTX 6000 Ada"),
        ("Quadro RTX 6000", 23.6, 72, "NVIDIA Quadro RTX 6000"),
        ("Tesla P100-PCIE-16GB", 15.9, 56, "NVIDIA Tesla P100 PCIe 16GB"),
        ("NVIDIA B200", 178.4, 148, "NVIDIA B200"),
        # memory and SMs not given: the name alone
        ("NVIDIA H100 80GB HBM3", None, None, "NVIDIA H100 SXM5 80GB"),
        # no spec line, or the name does not say which variant
        ("NVIDIA H100", 95.1, 132, ""),  # SXM5, NVL or a 96 GB part
        ("Tesla V100-DGXS-32GB", 31.7, 80, ""),
        ("NVIDIA H200 NVL", 139.8, 132, ""),
        ("AMD Instinct MI300X", 192.0, 304, ""),
        ("", None, None, ""),
        # the card contradicts the name: a MIG slice, or another part under the name
        ("NVIDIA A100-SXM4-40GB", 9.5, 14, ""),
        ("NVIDIA H100 80GB HBM3", 79.2, 114, ""),
        ("NVIDIA A100-SXM4-80GB", 39.4, 108, ""),
    ],
)
def test_gpu_key(name, memory_gib, sms, want):
    assert gpu_key(name, memory_gib, sms) == want


def test_the_table_repeats_the_spec_sheet():
    specs = load_specs().drop_duplicates("gpu").set_index("gpu")
    for _, gpu, memory_gb, sms in _NAMES:
        assert gpu in specs.index, gpu
        assert specs.loc[gpu, "gpu_memory_gb"] == memory_gb, gpu
        assert specs.loc[gpu, "sm_count"] == sms, gpu


def test_every_spec_line_has_a_name():
    specs = pd.Series(load_specs()["gpu"].unique())
    assert set(specs) == {gpu for _, gpu, _, _ in _NAMES}
