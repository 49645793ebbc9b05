"""Lambda's PyTorch v2 throughput tables (H100 SXM5 and PCIe, H200, GH200, B200), as
``published.csv`` rows.

``pytorch/pytorch-train-throughput-v2-{fp32,fp16}.csv``: one line per run folder of
``pytorch/results_v2/`` (a host and GPU count), the ResNet-50 and SSD columns read (two rows per
line and precision; a value of 0, not run, gives no row). The line ``..._v2_bk`` is left out: a
second copy of the GH200 test host's run above it (its FP16 SSD is 0). Batch per GPU: the run's
``PyTorch_<task>_<FP32|AMP>/benchmark.para`` (``GLOBAL_BATCH`` over ``GPU``); framework version:
its ``sys_pytorch.txt``. The v2 tables have no batch-size table and no V100: their rows form no
FP32 speed-up pair (no baseline GPU of the data in the same file), only AMP pairs and N-GPU rows.

A run folder's name holds the host, the GPU count and the GPU
(``LambdaOD_8x_Texas_2xH100_80GB_SXM5_192-222-52-149_v2``: 2 GPUs of the 8-GPU host
192-222-52-149). ``gpu_published`` is written ``<N>x <GPU> (<host>)``
(``2x H100 80GB SXM5 (LambdaOD_8x_Texas 192-222-52-149)``) so that the rows of one host pair with
each other and with no other host's (the pairing strips a leading ``Nx``); ``notes`` keeps the
name as published.

Needs a mirror of the repository (the ``fetch`` tool: ``github:lambdal/deeplearning-benchmark``).

    python profet_core/data/build/lambdal_pytorch_v2.py --git-dir /work/.mirror/lambdal+deeplearning-benchmark/repo
"""

from __future__ import annotations

import csv
import io
import re

from _lambdal import CNNS, COMMIT, REPO, number, row, version
from _rows import git_show, main_for

NAME = re.compile(
    r"^(?P<pre>\w+?)_(?P<n>\d+)x(?P<gpu>H100|H200|GH200|B200)_(?P<mem>\d+GB)"
    r"(?:_(?P<ff>SXM5|SXM|PCIe))?_(?P<post>[\w.-]+?)_v2$"
)
#: (GPU, form factor) -> (catalog GPU, variant note).
CATALOG = {
    ("H100", "SXM5"): ("NVIDIA H100 SXM5 80GB", "same variant"),
    ("H100", "PCIe"): ("NVIDIA H100 PCIe 80GB", "same variant"),
    ("H200", "SXM"): ("NVIDIA H200 SXM 141GB", "same variant (published as 140GB)"),
    ("GH200", None): ("NVIDIA GH200 (H100 96GB)", "same variant"),
    ("B200", None): ("NVIDIA B200", "same variant"),
}


def gpu(name: str, device: str) -> tuple[str, int, str, str]:
    """(gpu_published, GPU count, catalog GPU, variant note) of a v2 run name and the GPU name
    its ``sys_pytorch.txt`` gives."""
    m = NAME.match(name)
    if not m or (m.group("gpu"), m.group("ff")) not in CATALOG:
        raise SystemExit(f"cannot read the v2 run name {name!r}")
    catalog, variant = CATALOG[(m.group("gpu"), m.group("ff"))]
    if device.endswith("_NVL"):  # the PCIe NVL card, whatever the run's name says
        catalog, variant = "", f"sys_pytorch.txt names the GPU {device}: no catalog GPU is it"
    ff = f" {m.group('ff')}" if m.group("ff") else ""
    host = f"{m.group('pre')} {m.group('post')}"
    published = f"{m.group('n')}x {m.group('gpu')} {m.group('mem')}{ff} ({host})"
    return published, int(m.group("n")), catalog, variant


def rows(git_dir: str, _table_rows: list[dict] | None = None) -> list[dict]:
    out = []
    for prec in ("fp32", "fp16"):
        path = f"pytorch/pytorch-train-throughput-v2-{prec}.csv"
        text = git_show(git_dir, COMMIT, path)
        reader = csv.reader(io.StringIO(text))
        header = next(reader)
        for no, values in enumerate(reader, 2):
            r = dict(zip(header, values, strict=True))
            name = r[""]
            if name.endswith("_v2_bk"):
                continue
            folder = f"pytorch/results_v2/{name}"
            fw, device = version(git_dir, f"{folder}/sys_pytorch.txt")
            published, count, catalog, variant = gpu(name, device)
            for column, (*_, task) in CNNS.items():
                if float(r[column]) == 0:
                    continue
                run = f"PyTorch_{task}_{'AMP' if prec == 'fp16' else 'FP32'}"
                para = git_show(git_dir, COMMIT, f"{folder}/{run}/benchmark.para")
                glob = int(re.search(r"GLOBAL_BATCH (\d+)", para).group(1))
                if int(re.search(r"GPU (\d+)", para).group(1)) != count:
                    raise SystemExit(f"{folder}/{run}/benchmark.para: not {count} GPUs")
                notes = [
                    f"batch per GPU from results_v2/{name}/{run}/benchmark.para "
                    f"(GLOBAL_BATCH {glob} / {count} GPUs)",
                    "synthetic data",
                    f"v2 run {name!r}",
                ]
                out.append(
                    row(
                        f"{REPO}@{COMMIT}:{path}:{no}",
                        fw,
                        "AMP" if prec == "fp16" else "TF32",
                        published,
                        catalog,
                        variant,
                        count,
                        column,
                        glob // count,
                        number(r[column]),
                        notes,
                    )
                )
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
