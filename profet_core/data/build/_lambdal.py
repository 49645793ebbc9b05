"""What the two builders of lambdal/deeplearning-benchmark's PyTorch rows share: the repository,
its commit, the two CNNs of its tables and how a row of theirs is written.

Lambda runs NVIDIA DeepLearningExamples' PyTorch scripts (their fork) in an NGC PyTorch container
on synthetic data; the AMP batch is twice the FP32 batch. Only the CNN columns are read: ``resnet50``
(the data's ResNet50) and ``ssd`` (SSD300 with a ResNet-50 backbone at 300 px: no data CNN
matches, the ResNet50 profile stands in, as in the table's other Lambda PyTorch rows). The other
columns (BERT, GNMT, NCF, Tacotron2, TransformerXL, WaveGlow) are not CNNs: the data has no
profile that could stand in for them. The repository has no licence file: its numbers are taken
as measurements with their provenance, none of its code.
"""

from __future__ import annotations

import re

from _rows import git_show

REPO = "lambdal/deeplearning-benchmark"
COMMIT = "aa5addb6a53675a649a80036dad548f1c27cbcc4"
#: Table column -> (model, data_model, profile_proxy, image size, results folder's task name).
CNNS = {
    "resnet50": ("resnet50", "ResNet50", "", 224, "resnet50"),
    "ssd": ("ssd", "", "ResNet50", 300, "SSD"),
}
SSD_NOTE = (
    "SSD300 detector (ResNet-50 backbone, 300 px): no data CNN matches; the ResNet50 profile "
    "stands in"
)
TF32_NOTE = "PyTorch FP32 mode: TF32 convolutions on Ampere and newer by default"


def version(git_dir: str, sys_path: str) -> tuple[str, str]:
    """``framework_version`` (PyTorch and CUDA versions) and the GPU's name as the driver gives
    it, from a run's ``sys_pytorch.txt``."""
    text = git_show(git_dir, COMMIT, sys_path)
    torch = re.search(r"^PyTorch Version: (\S+)", text, re.M)
    cuda = re.search(r"^CUDA Version: V(\d+\.\d+)", text, re.M)
    device = re.search(r"^GPU: (\S+)", text, re.M)
    if not torch or not cuda or not device:
        raise SystemExit(f"cannot read the versions of {sys_path}")
    fw = f"NGC PyTorch container, PyTorch {torch.group(1)}, CUDA {cuda.group(1)} ({sys_path})"
    return fw, device.group(1)


def row(
    source: str,
    fw: str,
    precision: str,
    published: str,
    catalog: str,
    variant: str,
    count: int,
    column: str,
    batch: int | str,
    value: str,
    notes: list[str],
) -> dict:
    """One ``published.csv`` row of a CNN column (``precision``: ``AMP`` or ``TF32``, Lambda's
    FP32 mode)."""
    model, data_model, proxy, px, _ = CNNS[column]
    notes = ([SSD_NOTE] if proxy else []) + notes
    if precision == "TF32":
        notes.append(TF32_NOTE)
    return {
        "source": source,
        "framework": "PyTorch",
        "framework_version": fw,
        "precision": precision,
        "xla": "off",
        "gpu_published": published,
        "catalog_gpu": catalog,
        "variant_note": variant,
        "gpu_count": str(count),
        "model": model,
        "data_model": data_model,
        "profile_proxy": proxy,
        "batch_size": str(batch),
        "image_size": str(px),
        "images_per_s": value,
        "notes": "; ".join(notes),
    }


def number(text: str) -> str:
    """A table value as the CSV prints it, without a trailing ``.0`` (``1893.0`` -> ``1893``)."""
    v = float(text)
    return str(int(v)) if v == int(v) else text
