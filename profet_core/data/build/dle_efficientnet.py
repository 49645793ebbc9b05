"""DeepLearningExamples' PyTorch EfficientNet training tables, as ``published.csv`` rows.

Round 8's D2 (docs/amp_decision_rule.md): the three training performance tables of
``PyTorch/Classification/ConvNets/efficientnet/README.md`` (DGX A100 80GB, DGX-1 V100 16GB and
32GB). Each line with 1 or 8 GPUs (more are several nodes) gives two rows, the TF32 (A100) or
FP32 (V100) column and the mixed-precision column (AMP), images/s as printed. The batch per GPU
and the image size come from ``PyTorch/Classification/ConvNets/configs.yml`` for the table's
platform, precision and model. A model whose 8-GPU strong scaling exceeds 8 in either precision
(its 1-GPU line cannot be right) is left out of that table, both lines, and said so on stderr.

Needs a mirror of the repository (the ``fetch`` tool: ``github:NVIDIA/DeepLearningExamples``).
Prints the rows as CSV (with --append FILE, appends them to FILE, e.g.
profet_core/data/published.csv, refusing rows it already has).

    python profet_core/data/build/dle_efficientnet.py --git-dir /work/.mirror/NVIDIA+DeepLearningExamples/repo
"""

from __future__ import annotations

import re
import sys

import yaml
from _rows import git_show, main_for

REPO = "NVIDIA/DeepLearningExamples"
COMMIT = "729963dd47e7c8bd462ad10bfac7a7b0b604e6dd"
README = "PyTorch/Classification/ConvNets/efficientnet/README.md"
CONFIGS = "PyTorch/Classification/ConvNets/configs.yml"
#: Table heading -> (configs.yml platform, gpu_published, catalog GPU).
TABLES = {
    "Training performance: NVIDIA A100 (8x A100 80GB)": (
        "DGXA100",
        "NVIDIA A100 80GB (DGX A100)",
        "NVIDIA A100 SXM4 80GB",
    ),
    "Training performance: NVIDIA DGX-1 (8x V100 16GB)": (
        "DGX1V-16G",
        "NVIDIA V100 16GB (DGX-1)",
        "NVIDIA V100 SXM2 16GB",
    ),
    "Training performance: NVIDIA DGX-1 (8x V100 32GB)": (
        "DGX1V-32G",
        "NVIDIA V100 32GB (DGX-1)",
        "NVIDIA V100 SXM2 32GB",
    ),
}
NOTE = (
    "EfficientNet (inverted residuals with depthwise convolutions, squeeze-and-excitation, "
    "Swish); no data CNN matches; the MobileNetV2 profile stands in; batch per GPU from "
    "configs.yml"
)
LINE = re.compile(r"^\|\s*(efficientnet-[\w-]+)\s*\|\s*(\d+)\s*\|\s*(\d+) img/s\s*\|\s*(\d+) img/s")


def table_lines(readme: str) -> list[dict]:
    """The 1- and 8-GPU lines of the three training tables (line numbers 1-based)."""
    out, table = [], None
    for no, text in enumerate(readme.splitlines(), 1):
        if text.startswith("#"):
            table = next((t for t in TABLES if text.lstrip("#").strip() == t), None)
            continue
        m = LINE.match(text) if table else None
        if m and int(m.group(2)) in (1, 8):
            model, gpus, single, amp = m.group(1), int(m.group(2)), m.group(3), m.group(4)
            out.append(
                {"table": table, "line": no, "model": model, "gpus": gpus, "fp": single, "amp": amp}
            )
    return out


def superlinear(lines: list[dict]) -> set[tuple[str, str]]:
    """(table, model) whose 8-GPU images/s exceed 8x the 1-GPU ones in either precision."""
    by = {(r["table"], r["model"], r["gpus"]): r for r in lines}
    bad = set()
    for (table, model, gpus), r in by.items():
        one = by.get((table, model, 1))
        if gpus == 8 and one and any(int(r[k]) > 8 * int(one[k]) for k in ("fp", "amp")):
            bad.add((table, model))
    return bad


def rows(git_dir: str, _table: list[dict] | None = None) -> list[dict]:
    lines = table_lines(git_show(git_dir, COMMIT, README))
    configs = yaml.safe_load(git_show(git_dir, COMMIT, CONFIGS))["models"]
    bad = superlinear(lines)
    for table, model in sorted(bad):
        print(f"left out (8-GPU scaling above 8x): {model} in '{table}'", file=sys.stderr)
    out = []
    for r in lines:
        if (r["table"], r["model"]) in bad:
            continue
        platform, published, catalog = TABLES[r["table"]]
        fp = "TF32" if platform == "DGXA100" else "FP32"
        for precision, value in ((fp, r["fp"]), ("AMP", r["amp"])):
            cfg = configs[r["model"]][platform][precision]
            out.append(
                {
                    "source": f"{REPO}@{COMMIT}:{README}:{r['line']}",
                    "framework": "PyTorch",
                    "framework_version": "NGC pytorch-21.03",
                    "precision": precision,
                    "xla": "off",
                    "gpu_published": published,
                    "catalog_gpu": catalog,
                    "variant_note": "same variant",
                    "gpu_count": str(r["gpus"]),
                    "model": r["model"],
                    "data_model": "",
                    "profile_proxy": "MobileNetV2",
                    "batch_size": str(cfg["batch_size"]),
                    "image_size": str(cfg["image_size"]),
                    "images_per_s": value,
                    "notes": NOTE,
                }
            )
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
