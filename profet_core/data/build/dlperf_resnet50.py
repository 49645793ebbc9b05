"""OneFlow's DLPerf ResNet-50 tables (8x V100-SXM2-16GB, seven implementations), as
``published.csv`` rows.

Candidate set S1 of docs/new_sources_rule.md. DLPerf measured ResNet-50 training on one node of
8 Tesla V100-SXM2-16GB (NVLink; driver 440.33.01, CUDA 10.2, cuDNN 7.6.5) with real ImageNet data,
in FP32 and FP16 mixed precision, on 1 to 4 nodes. Each README's tables give the median
throughput (samples/s) of 5 runs per GPU count. One table per implementation, precision and XLA
setting is read (the first of its main configuration; :data:`TABLES` names its line and heading,
checked against the file), and of it only the one-node lines (1, 2, 4 or 8 GPUs).

Needs a mirror of the repository (the ``fetch`` tool: ``github:Oneflow-Inc/DLPerf``). Prints the
rows as CSV (with --append FILE, appends them to FILE, refusing rows it already has).

    python profet_core/data/build/dlperf_resnet50.py --git-dir /work/.mirror/Oneflow-Inc+DLPerf/repo
"""

from __future__ import annotations

import re

from _rows import git_show, main_for

REPO = "Oneflow-Inc/DLPerf"
COMMIT = "c89430bac64f64caabb0445ff7eb80175641454c"
GPU = "Tesla V100-SXM2-16GB"
CATALOG = "NVIDIA V100 SXM2 16GB"
V15 = "ResNet-50 v1.5"
HW = "DLPerf: one node of 8x V100-SXM2-16GB (NVLink), real ImageNet data, median of 5 runs"


def _impl(readme, framework, version, model, data_note):
    return {
        "readme": readme,
        "framework": framework,
        "version": version,
        "model": model,
        "note": f"{data_note}; {HW}",
    }


#: (implementation, table header line (1-based), heading above it, precision, xla, batch per GPU).
_PT = _impl(
    "NVIDIADeepLearningExamples/PyTorch/resnet50v1.5/README.md",
    "PyTorch",
    "NGC pytorch:20.03-py3 (PyTorch 1.5.0a0+8f84ded)",
    V15,
    "NVIDIA DeepLearningExamples' PyTorch ResNet-50 v1.5 (DALI); AMP with dynamic loss scale",
)
_TF1 = _impl(
    "NVIDIADeepLearningExamples/TensorFlow/Classification/ConvNets/resnet50v1.5/README.md",
    "TensorFlow",
    "NGC tensorflow:20.03-tf1-py3",
    V15,
    "NVIDIA DeepLearningExamples' TensorFlow 1 ResNet-50 v1.5",
)
_MX = _impl(
    "NVIDIADeepLearningExamples/MxNet/Classification/RN50v1.5/README.md",
    "MXNet",
    "NGC mxnet:20.03-py3 (MXNet 1.6.0)",
    V15,
    "NVIDIA DeepLearningExamples' MXNet ResNet-50 v1.5 (DALI); AMP: --amp (dynamic loss scale)",
)
_TF2 = _impl(
    "TensorFlow/resnet50v1.5/README.md",
    "TensorFlow",
    "TensorFlow 2.3.0",
    "resnet50",
    "TensorFlow 2 official models' ResNet50 v1.5 (tensorflow/models), named resnet50 here to "
    "keep it apart from NVIDIA's TensorFlow ResNet-50 v1.5 of the same repository",
)
_GLUON = _impl(
    "MxNet/Classification/RN50v1b/README.md",
    "MXNet",
    "MXNet 1.6.0 (GluonCV, Horovod 0.19.5)",
    "resnet50",
    "GluonCV's ResNet50 v1b (stride on the 3x3 conv, as v1.5), named resnet50 here to keep it "
    "apart from NVIDIA's MXNet ResNet-50 v1.5 of the same repository",
)
_PADDLE = _impl(
    "PaddlePaddle/resnet50v1.5/README.md",
    "PaddlePaddle",
    "PaddlePaddle 1.8.3.post107",
    V15,
    "PaddlePaddle models' ResNet50 v1.5 (PaddleCV image_classification); AMP with dynamic loss "
    "scaling",
)
_MS = _impl(
    "MindSpore/resnet50v1.5/README.md",
    "MindSpore",
    "MindSpore 1.1.0",
    V15,
    "MindSpore model zoo's ResNet50 v1.5",
)
TABLES = [
    (_PT, 486, "ResNet50 v1.5 batch_size = 128", "FP32", "off", 128),
    (_PT, 504, "ResNet50 v1.5 batch_size = 256", "AMP", "off", 256),
    (_TF1, 391, "batch size = 128 & without xla", "FP32", "off", 128),
    (_TF1, 403, "batch size = 224 & without xla", "AMP", "off", 224),
    (_TF1, 413, "batch size = 224 & with xla", "AMP", "on", 224),
    (_MX, 294, "batch_size = 128 & without xla", "FP32", "off", 128),
    (_MX, 307, "batch_size = 256 & with amp & without xla", "AMP", "off", 256),
    (_TF2, 253, "batch size = 128 & without xla", "FP32", "off", 128),
    (_TF2, 268, "batch size = 128 & without xla", "AMP", "off", 128),
    (_GLUON, 228, "batch_size = 128 & without xla", "FP32", "off", 128),
    (_GLUON, 241, "batch_size = 256 & without xla", "AMP", "off", 256),
    (_PADDLE, 280, "batch size = 128 & without xla", "FP32", "off", 128),
    (_PADDLE, 295, "batch size = 224 & without xla", "AMP", "off", 224),
    (_MS, 375, "batch size=128", "FP32", "off", 128),
    (_MS, 390, "batch size=256", "AMP", "off", 256),
]
#: The section each table sits in must say its precision (FP16 = mixed precision in DLPerf).
SECTION = {"FP32": "FP32", "AMP": ("FP16", "AMP")}
CELL = re.compile(r"^\|(.*)\|\s*$")


def _heading(lines: list[str], header: int) -> tuple[str, str]:
    """The nearest heading above table line ``header`` and the nearest one naming a precision."""
    near, section = None, None
    for text in reversed(lines[: header - 1]):
        m = re.match(r"^\s*(?:- )?#+\s*(.*?)\s*$", text)
        if not m:
            continue
        near = near if near is not None else m.group(1)
        if any(p in m.group(1) for p in ("FP32", "FP16", "AMP")):
            section = m.group(1)
            break
    return near or "", section or ""


def table_rows(text: str, header: int) -> list[tuple[int, int, str, int | None]]:
    """One-node lines of the table whose header is line ``header``: (line, GPUs, samples/s as
    printed, batch per GPU where the table gives it)."""
    lines = text.splitlines()
    cols = [c.strip() for c in CELL.match(lines[header - 1]).group(1).split("|")]
    out = []
    for no in range(header + 2, len(lines) + 1):
        m = CELL.match(lines[no - 1])
        if not m:
            break
        cell = dict(zip(cols, (c.strip() for c in m.group(1).split("|")), strict=True))
        nodes = int(cell.get("node_num", cell.get("num_nodes")))
        gpus = int(cell.get("gpu_num_per_node", cell.get("gpu_num")))
        speed = next(v for k, v in cell.items() if k.startswith("samples/s"))
        batch = cell.get("batch_size_per_device")
        if nodes == 1:
            out.append((no, gpus, speed, int(batch) if batch else None))
    return out


def rows(git_dir: str, _table: list[dict] | None = None) -> list[dict]:
    out, texts = [], {}
    for impl, header, heading, precision, xla, batch in TABLES:
        path = impl["readme"]
        text = texts.setdefault(path, git_show(git_dir, COMMIT, path))
        near, section = _heading(text.splitlines(), header)
        wanted = SECTION[precision]
        if near != heading or not any(w in section for w in wanted):
            raise SystemExit(
                f"{path}:{header}: heading {near!r} in {section!r}, expected {heading!r}"
            )
        m = re.search(r"batch[ _]size\s*=\s*(\d+)", heading)
        if not m or int(m.group(1)) != batch:
            raise SystemExit(f"{path}:{header}: heading {heading!r} does not give batch {batch}")
        for no, gpus, speed, table_batch in table_rows(text, header):
            if table_batch not in (None, batch):
                raise SystemExit(f"{path}:{no}: batch {table_batch}, heading says {batch}")
            out.append(
                {
                    "source": f"{REPO}@{COMMIT}:{path}:{no}",
                    "framework": impl["framework"],
                    "framework_version": impl["version"],
                    "precision": precision,
                    "xla": xla,
                    "gpu_published": GPU,
                    "catalog_gpu": CATALOG,
                    "variant_note": "same variant",
                    "gpu_count": str(gpus),
                    "model": impl["model"],
                    "data_model": "ResNet50",
                    "profile_proxy": "",
                    "batch_size": str(batch),
                    "image_size": "224",
                    "images_per_s": speed,
                    "notes": f"{impl['note']}; table heading '{heading}'",
                }
            )
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
