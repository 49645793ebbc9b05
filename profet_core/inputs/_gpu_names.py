"""The GPU a trace names -> the spec sheet's ``gpu`` line (``profet_core/data/gpu_specs.csv``).

A torch.profiler trace names its GPU as the CUDA driver does (``deviceProperties[].name``:
"NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB", "NVIDIA A100 80GB PCIe"), with its memory
(``totalGlobalMem``, bytes) and streaming multiprocessors (``numSms``). Offerings name GPUs by
catalog accelerator (:mod:`profet_core.offerings._gpus`, a layer above the readers, which is why
this table lives here, where the readers and the predictions can both reach it).

A name maps only where it says which variant it is: "NVIDIA H100" alone could be the SXM5, the
NVL or a 96 GB part, so it maps to nothing, and neither does a name whose memory or SM count
contradicts the line it names (a card renamed, or a partition such as MIG).
"""

from __future__ import annotations

import re

__all__ = ["gpu_key"]

#: ``(pattern on the normalised name, spec gpu, spec memory GB, spec SMs)``. The normalised name
#: is upper case without "NVIDIA", "TESLA" and "GEFORCE", "-" and "_" as spaces. The memory and
#: SM count repeat the spec sheet's (a test checks them against it).
_NAMES = (
    (r"K80", "NVIDIA K80 (one GK210)", 12, 13),
    (r"M60", "NVIDIA Tesla M60 (one GM204)", 8, 16),
    (r"T4", "NVIDIA T4", 16, 40),
    (r"P4", "NVIDIA Tesla P4", 8, 20),
    (r"P100 PCIE 16GB", "NVIDIA Tesla P100 PCIe 16GB", 16, 56),
    (r"V100 SXM2 16GB", "NVIDIA V100 SXM2 16GB", 16, 80),
    (r"V100 SXM2 32GB", "NVIDIA V100 SXM2 32GB", 32, 80),
    (r"V100 PCIE 16GB", "NVIDIA V100 PCIe 16GB", 16, 80),
    (r"A10G", "NVIDIA A10G", 24, 80),
    (r"A10", "NVIDIA A10", 24, 72),
    (r"L4", "NVIDIA L4", 24, 58),
    (r"L40S", "NVIDIA L40S", 48, 142),
    (r"L40", "NVIDIA L40", 48, 142),
    (r"A40", "NVIDIA A40", 48, 84),
    (r"A100 SXM4? 40GB", "NVIDIA A100 SXM4 40GB", 40, 108),
    # PG509 is the board of the A100 SXM4 module (the -200 SKU carries 40 GB); Meta's fleet
    # traces name it so. Its 39.4 GiB and 108 SMs agree with the line.
    (r"A100 PG509 200", "NVIDIA A100 SXM4 40GB", 40, 108),
    (r"A100 SXM4? 80GB", "NVIDIA A100 SXM4 80GB", 80, 108),
    (r"A100 PCIE 40GB", "NVIDIA A100 PCIe 40GB", 40, 108),
    (r"A100 (?:80GB PCIE|PCIE 80GB)", "NVIDIA A100 PCIe 80GB", 80, 108),
    (r"H100 (?:80GB HBM3|SXM5? 80GB)", "NVIDIA H100 SXM5 80GB", 80, 132),
    (r"H100 PCIE", "NVIDIA H100 PCIe 80GB", 80, 114),
    (r"H100 NVL", "NVIDIA H100 NVL 94GB", 94, 132),
    (r"H200", "NVIDIA H200 SXM 141GB", 141, 132),
    (r"GH200 480GB", "NVIDIA GH200 (H100 96GB)", 96, 132),
    (r"B200", "NVIDIA B200", 180, 148),
    (r"RTX A6000", "NVIDIA RTX A6000", 48, 84),
    (r"RTX A5000", "NVIDIA RTX A5000", 24, 64),
    (r"RTX A4500", "NVIDIA RTX A4500", 20, 56),
    (r"RTX A4000", "NVIDIA RTX A4000", 16, 48),
    (r"RTX 3090", "NVIDIA GeForce RTX 3090", 24, 82),
    (r"RTX 4090", "NVIDIA GeForce RTX 4090", 24, 128),
    (r"RTX 6000 ADA GENERATION", "NVIDIA RTX 6000 Ada", 48, 142),
    (r"RTX 4000 ADA GENERATION", "NVIDIA RTX 4000 Ada", 20, 48),
    (r"QUADRO RTX 6000", "NVIDIA Quadro RTX 6000", 24, 72),
)
_COMPILED = tuple((re.compile(p), gpu, mem, sms) for p, gpu, mem, sms in _NAMES)
#: The driver reports memory in GiB less what it reserves: 0.92 (T4, L4, A10G) to 0.99 (H200)
#: of the marketed GB. Outside this band the name and the card disagree.
_MEMORY_BAND = (0.85, 1.1)


def normalise_gpu_name(name: str) -> str:
    """Upper case, without vendor and brand words, separators as single spaces."""
    text = re.sub(r"[-_\s]+", " ", str(name).upper())
    text = re.sub(r"\b(?:NVIDIA|TESLA|GEFORCE)\b", " ", text)
    return " ".join(text.split())


def gpu_key(gpu_name: str, memory_gib: float | None = None, sm_count: int | None = None) -> str:
    """The spec sheet's ``gpu`` string for a GPU as a trace names it, or ``""``.

    Parameters
    ----------
    gpu_name : str
        The driver's name (``deviceProperties[].name``), e.g. "NVIDIA H100 80GB HBM3".
    memory_gib : float, optional
        Its memory in GiB (``totalGlobalMem / 2**30``); checked against the line when given.
    sm_count : int, optional
        Its SM count (``numSms``); checked against the line when given.

    Returns
    -------
    str
        The ``gpu`` column's value of the spec line (e.g. "NVIDIA H100 SXM5 80GB"), or ``""``
        where the name names no line, does not say which variant it is, or its memory or SM
        count contradicts the line.
    """
    if not isinstance(gpu_name, str) or not gpu_name.strip():
        return ""
    text = normalise_gpu_name(gpu_name)
    for pattern, gpu, memory_gb, sms in _COMPILED:
        if not pattern.fullmatch(text):
            continue
        if sm_count is not None and int(sm_count) != sms:
            return ""
        if memory_gib is not None:
            ratio = float(memory_gib) / memory_gb
            if not _MEMORY_BAND[0] <= ratio <= _MEMORY_BAND[1]:
                return ""
        return gpu
    return ""
