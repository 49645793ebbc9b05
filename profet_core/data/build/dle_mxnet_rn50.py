"""DeepLearningExamples' MXNet ResNet-50 v1.5 training tables, as ``published.csv`` rows.

Candidate set S2 of docs/new_sources_rule.md: the three training performance tables of
``MxNet/Classification/RN50v1.5/README.md`` (DGX A100 80GB, DGX-1 V100 16GB, DGX-2 V100 32GB).
Each line with 1, 2, 4 or 8 GPUs gives two rows, the mixed-precision column (AMP) and the
TF32 (A100) or FP32 (V100) column, images/s ("Total IPS", data and compute) as printed; the
16-GPU line of the DGX-2 is left out (no catalog configuration has 16 GPUs on one switch). The
batch per GPU and the container are read from the ``benchmark.py`` command each table's heading
paragraph prints (``-b N --dtype float16|float32`` ... ``in the mxnet-XX.YY-py3 NGC container``).
The table's speed-up column is not read (its A100 one-GPU value, 2.18, is not the ratio of its
own throughputs, 3.23).

Needs a mirror of the repository (the ``fetch`` tool: ``github:NVIDIA/DeepLearningExamples``).

    python profet_core/data/build/dle_mxnet_rn50.py --git-dir /work/.mirror/NVIDIA+DeepLearningExamples/repo
"""

from __future__ import annotations

import re

from _rows import git_show, main_for

REPO = "NVIDIA/DeepLearningExamples"
COMMIT = "729963dd47e7c8bd462ad10bfac7a7b0b604e6dd"
README = "MxNet/Classification/RN50v1.5/README.md"
#: Table heading -> (gpu_published, catalog GPU, variant note, FP32 column's precision).
TABLES = {
    "Training performance: NVIDIA DGX A100 (8x A100 80GB)": (
        "NVIDIA A100 80GB (DGX A100)",
        "NVIDIA A100 SXM4 80GB",
        "same variant",
        "TF32",
    ),
    "Training performance: NVIDIA DGX-1 (8x V100 16GB)": (
        "NVIDIA V100 16GB (DGX-1)",
        "NVIDIA V100 SXM2 16GB",
        "same variant",
        "FP32",
    ),
    "Training performance: NVIDIA DGX-2 (16x V100 32GB)": (
        "NVIDIA V100 32GB (DGX-2)",
        "NVIDIA V100 SXM2 32GB",
        "DGX-2's V100 32GB is the SXM3 board (350 W, NVSwitch) vs SXM2 (300 W, NVLink)",
        "FP32",
    ),
}
NOTE = (
    "NVIDIA DeepLearningExamples' MXNet ResNet-50 v1.5 (DALI), benchmark.py on 32,000 ImageNet "
    "images, Total IPS (data + compute); batch per GPU and container from the table's "
    "benchmark.py command"
)
LINE = re.compile(r"^\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|")


def tables(readme: str) -> list[dict]:
    """The 1- to 8-GPU lines of the three training tables (line numbers 1-based), with each
    table's batch per GPU and container per dtype."""
    out, table, runs = [], None, {}
    lines = readme.splitlines()
    for no, text in enumerate(lines, 1):
        if text.startswith("#"):
            table = next((t for t in TABLES if text.lstrip("#").strip() == t), None)
            if table:
                # the paragraph up to the table names the runs (batch, dtype, container)
                para = " ".join(lines[no : no + 6])
                runs = {d: (int(b), c) for b, d, c in _commands(para)}
            continue
        m = LINE.match(text) if table else None
        if m and int(m.group(1)) in (1, 2, 4, 8):
            out.append(
                {
                    "table": table,
                    "line": no,
                    "gpus": int(m.group(1)),
                    "amp": m.group(2),
                    "fp": m.group(3),
                    "runs": runs,
                }
            )
    return out


def _commands(paragraph: str) -> list[tuple[str, str, str]]:
    """(batch, dtype, container) of each benchmark.py command of a heading's paragraph; the
    container is named once after the commands and holds for both."""
    container = re.search(r"(mxnet-[\d.]+-py3)", paragraph)
    found = re.findall(r"-b (\d+) --dtype (float16|float32)", paragraph)
    if not container or len(found) != 2:
        raise SystemExit(f"cannot read the runs of: {paragraph[:200]!r}")
    return [(b, d, container.group(1)) for b, d in found]


def rows(git_dir: str, _table: list[dict] | None = None) -> list[dict]:
    out = []
    for r in tables(git_show(git_dir, COMMIT, README)):
        published, catalog, variant, fp = TABLES[r["table"]]
        for precision, value, dtype in (("AMP", r["amp"], "float16"), (fp, r["fp"], "float32")):
            batch, container = r["runs"][dtype]
            out.append(
                {
                    "source": f"{REPO}@{COMMIT}:{README}:{r['line']}",
                    "framework": "MXNet",
                    "framework_version": f"NGC {container}",
                    "precision": precision,
                    "xla": "off",
                    "gpu_published": published,
                    "catalog_gpu": catalog,
                    "variant_note": variant,
                    "gpu_count": str(r["gpus"]),
                    "model": "ResNet-50 v1.5",
                    "data_model": "ResNet50",
                    "profile_proxy": "",
                    "batch_size": str(batch),
                    "image_size": "224",
                    "images_per_s": value,
                    "notes": NOTE,
                }
            )
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
