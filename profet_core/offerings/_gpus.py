"""Catalog accelerator names to the spec sheet's ``gpu`` strings, and what SkyPilot's catalog
leaves to code: the GPUs built into GCP machine types and the N1 host of an attachable GPU.

One table says which GPU an offering rents. An accelerator without a line here, or mapped to
``""``, is a GPU PROFET has no spec model for (AMD cards, Blackwell RTX PRO, B300): its offerings
are listed as "no spec model", never dropped and never predicted. An accelerator of
:data:`OTHER_HOST` is a modelled GPU on a host the predictions do not carry to: listed
unpredicted the same way, with its reason.
"""

from __future__ import annotations

import functools
import re

#: ``accelerator -> spec gpu`` for every cloud (catalog names are canonical across clouds).
GPU_OF_ACCELERATOR = {
    "T4": "NVIDIA T4",
    "T4g": "",  # a T4 on an Arm host: see OTHER_HOST
    "L4": "NVIDIA L4",
    "A10G": "NVIDIA A10G",
    "A10": "NVIDIA A10",
    "L40": "NVIDIA L40",
    "L40S": "NVIDIA L40S",
    "V100": "NVIDIA V100 SXM2 16GB",
    "V100-32GB": "NVIDIA V100 SXM2 32GB",
    "P100": "NVIDIA Tesla P100 PCIe 16GB",
    "P4": "NVIDIA Tesla P4",
    "K80": "NVIDIA K80 (one GK210)",
    "A100": "NVIDIA A100 SXM4 40GB",
    "A100-80GB": "NVIDIA A100 SXM4 80GB",
    "A100-80GB-SXM": "NVIDIA A100 SXM4 80GB",
    "H100": "NVIDIA H100 SXM5 80GB",
    "H100-SXM": "NVIDIA H100 SXM5 80GB",
    "H100-MEGA": "NVIDIA H100 SXM5 80GB",
    "H100-NVL": "NVIDIA H100 NVL 94GB",
    "H200": "NVIDIA H200 SXM 141GB",
    "H200-SXM": "NVIDIA H200 SXM 141GB",
    "GH200": "NVIDIA GH200 (H100 96GB)",
    "B200": "NVIDIA B200",
    "A40": "NVIDIA A40",
    "A6000": "NVIDIA RTX A6000",
    "RTXA6000": "NVIDIA RTX A6000",
    "RTXA5000": "NVIDIA RTX A5000",
    "RTXA4500": "NVIDIA RTX A4500",
    "RTXA4000": "NVIDIA RTX A4000",
    "RTX6000": "NVIDIA Quadro RTX 6000",
    "RTX6000-Ada": "NVIDIA RTX 6000 Ada",
    "RTX4000-Ada": "NVIDIA RTX 4000 Ada",
    "RTX3090": "NVIDIA GeForce RTX 3090",
    "RTX4090": "NVIDIA GeForce RTX 4090",
    "M60": "NVIDIA Tesla M60 (one GM204)",
}

#: ``accelerator -> why it is listed unpredicted``: a GPU PROFET models, on a host its
#: predictions do not carry to. AWS g5g's T4G is the T4's silicon and clocks, but on an Arm
#: (Graviton2) host: a profile's x86 TensorFlow pipeline (its wheels, container images and
#: input pipeline) does not run there unchanged, and its host-side time (the Host_ ops every
#: prediction includes) was never measured on such a host. Counted as a T4 it priced "1 x T4"
#: (0.42 USD/h, the cheapest T4) with g4dn.xlarge's x86 measurement as its basis.
OTHER_HOST = {
    "T4g": "T4G on an Arm (Graviton2) host: not predicted as a T4 (an x86 TensorFlow pipeline "
    "does not run there unchanged, and its host-side time was measured on x86 hosts only)",
}

#: ``(cloud, instance regex) -> spec gpu`` where one accelerator name covers two variants.
GPU_OF_INSTANCE = (
    ("lambda", r"gpu_1x_a100", "NVIDIA A100 PCIe 40GB"),  # gpu_1x_a100_sxm4 is the SXM4 one
    ("lambda", r"gpu_1x_h100_pcie", "NVIDIA H100 PCIe 80GB"),
    ("runpod", r"\d+x_A100-80GB_SECURE", "NVIDIA A100 PCIe 80GB"),
    ("runpod", r"\d+x_H100_SECURE", "NVIDIA H100 PCIe 80GB"),
    ("azure", r"Standard_NC\d+ads_A100_v4", "NVIDIA A100 PCIe 80GB"),
    ("azure", r"Standard_NC\d+ad[i]?s_H100_v5", "NVIDIA H100 NVL 94GB"),
    # NCv3 (NC6s/12s/24s/24rs_v3) rents PCIe V100s; ND40rs_v2 the SXM2 32GB (V100-32GB)
    ("azure", r"Standard_NC\d+r?s_v3", "NVIDIA V100 PCIe 16GB"),
)

#: What differs between a measured GPU and the same accelerator name on another host.
VARIANT_NOTES = {
    ("aws", "T4g"): OTHER_HOST["T4g"],
    ("gcp", "H100-MEGA"): "a3-megagpu: the same H100 SXM5 with faster networking between machines",
}

#: ``(cloud, instance regex) -> note``: offerings the catalogs disagree about.
INSTANCE_NOTES = (
    (
        "gcp",
        r"a3-highgpu-[124]g",
        "on-demand availability disputed: gpuhunt lists no on-demand "
        "a3-highgpu with fewer than 8 GPUs (SkyPilot prices them); check before relying on it",
    ),
)

#: Accelerators that are not GPUs (left out of the offerings) and series a cloud has retired.
NOT_GPUS = re.compile(r"^tpu-|Inferentia|Trainium|Virtex|Gaudi|Qualcomm|U250", re.IGNORECASE)
RETIRED = {
    ("azure", "K80"): "Azure retired the NC (K80) series in 2023",
    ("azure", "M60"): "Azure retired the NV and NVv3 (M60) series in 2023",
}

#: GCP machine types with GPUs built in (SkyPilot's ``_ACC_INSTANCE_TYPE_DICTS``, gcp_catalog.py).
GCP_BUILT_IN = {
    **{f"a2-highgpu-{n}g": ("A100", n) for n in (1, 2, 4, 8)},
    "a2-megagpu-16g": ("A100", 16),
    **{f"a2-ultragpu-{n}g": ("A100-80GB", n) for n in (1, 2, 4, 8)},
    **{f"a3-highgpu-{n}g": ("H100", n) for n in (1, 2, 4, 8)},
    "a3-megagpu-8g": ("H100-MEGA", 8),
    "a3-ultragpu-8g": ("H200", 8),
    "a4-highgpu-8g": ("B200", 8),
    **{f"g2-standard-{c}": ("L4", 1) for c in (4, 8, 12, 16, 32)},
    "g2-standard-24": ("L4", 2),
    "g2-standard-48": ("L4", 4),
    "g2-standard-96": ("L4", 8),
}
#: vCPUs of the N1 host SkyPilot attaches N GPUs to (``_NUM_ACC_TO_NUM_CPU``); memory >= 4x.
GCP_HOST_CPUS = {
    "K80": {1: 4, 2: 8, 4: 16, 8: 32, 16: 64},
    "V100": {1: 8, 2: 16, 4: 32, 8: 64},
    "T4": {1: 4, 2: 8, 4: 48},
    "P100": {1: 8, 2: 16, 4: 32, 8: 64},
    "DEFAULT": {1: 8, 2: 16, 4: 32, 8: 64, 16: 128},
}
GCP_HOST_MEMORY_PER_CPU = 4


def spec_gpu(cloud: str, instance: str, accelerator: str) -> str:
    """The spec sheet's ``gpu`` string an offering rents, or ``""`` (no spec model)."""
    for c, pattern, gpu in GPU_OF_INSTANCE:
        if c == cloud and re.fullmatch(pattern, instance):
            return gpu
    return GPU_OF_ACCELERATOR.get(accelerator, "")


def count_in_name(cloud: str, instance: str) -> int | None:
    """The GPU count an instance type's name states (Lambda ``gpu_8x_``, RunPod ``8x_``, Nebius
    ``_8gpu-``, GCP ``-8g``), or None where the name does not say."""
    patterns = {
        "lambda": r"gpu_(\d+)x_",
        "runpod": r"(\d+)x_",
        "nebius": r"_(\d+)gpu-",
        "gcp": r"a\d-\w+-(\d+)g(?:-|$)",
    }
    m = re.match(patterns[cloud], instance) if cloud in patterns else None
    return int(m.group(1)) if m else None


@functools.lru_cache(maxsize=1)
def spec_sheet_counts() -> dict:
    """``{AWS instance type: GPUs}`` of the shipped spec sheet (its lines named by instance)."""
    import pandas as pd

    from ..inputs._gpu_specs import load_specs

    specs = load_specs()
    counts = pd.to_numeric(specs["gpu_count"], errors="coerce")
    return {i: float(c) for i, c in zip(specs["instance"], counts, strict=True) if c == c}
