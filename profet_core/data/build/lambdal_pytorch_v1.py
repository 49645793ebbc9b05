"""The lines of Lambda's PyTorch v1 throughput tables that ``published.csv`` did not hold yet.

``published.csv`` has had 134 rows of ``pytorch/pytorch-train-throughput-{fp32,fp16}.csv`` (the
ResNet-50 and SSD columns) since the table was first filled: every line but the LambdaCloud H100
PCIe (line 13 of both), the FP16 lines of the five vendor H100 SXM5 servers (Dell, DellTexas,
Supermicro, 1CC, RAIDZ1: lines 15-19; their FP32 lines are there) and the vendor servers' and
LambdaCloud's 2-, 4- and 8-GPU lines (29-33, 39-43, 49-54). This script writes those lines
(:data:`LINES`), two rows each (ResNet-50, SSD); a value of 0 (not run) gives no row.

Batch per GPU: ``pytorch/pytorch-train-bs-{fp32,fp16}.csv`` at the same line (the whole
machine's, divided by the GPU count). Framework version: the run's ``sys_pytorch.txt`` in
``pytorch/results/<run>/`` (:data:`RUNS`: the folder the repository's own compile script maps to
each table name). A vendor server's multi-GPU name (``Dell 2x H100 80GB SXM5``) is written with
the count first (``2x Dell H100 80GB SXM5``) so that it pairs with the same server's one-GPU row
(the pairing strips a leading ``Nx``); ``notes`` keeps the name as published.

Needs a mirror of the repository (the ``fetch`` tool: ``github:lambdal/deeplearning-benchmark``).

    python profet_core/data/build/lambdal_pytorch_v1.py --git-dir /work/.mirror/lambdal+deeplearning-benchmark/repo
"""

from __future__ import annotations

import csv
import io
import re

from _lambdal import CNNS, COMMIT, REPO, number, row, version
from _rows import git_show, main_for

#: Lines (1-based, header = 1) of each table that this script writes.
_MULTI = (*range(29, 34), *range(39, 44), *range(49, 55))
LINES = {"fp32": (13, *_MULTI), "fp16": (13, *range(15, 20), *_MULTI)}
#: Server prefix of a table name -> (its results folders' prefix, catalog variant note).
SERVERS = {
    "Dell": ("Dell", "same variant (Dell server)"),
    "DellTexas": ("DellTexas", "same variant (Dell server)"),
    "SMC": ("SMC", "same variant (Supermicro server)"),
    "1CC": ("1cc", "same variant"),
    "RAIDZ1": ("RAIDZ1", "same variant"),
    "LambdaCloud": ("LambdaCloud", "same variant"),
}
NAME = re.compile(r"^(?P<server>\w+) (?:(?P<n>\d+)x )?H100 80GB (?P<ff>SXM5|PCIe Gen5)$")


def gpu(name: str, count: int) -> tuple[str, str, str, str]:
    """(gpu_published, catalog GPU, variant note, results folder) of a table name."""
    m = NAME.match(name)
    if not m or m.group("server") not in SERVERS or int(m.group("n") or 1) != count:
        raise SystemExit(f"unknown system {name!r} ({count} GPUs)")
    prefix, variant = SERVERS[m.group("server")]
    sxm = m.group("ff") == "SXM5"
    n = f"{count}x" if count > 1 else ""
    folder = f"{prefix}_{n}H100_80GB_{'SXM5' if sxm else 'PCIe5'}_v1"
    catalog = "NVIDIA H100 SXM5 80GB" if sxm else "NVIDIA H100 PCIe 80GB"
    published = name
    if count > 1 and m.group("server") != "LambdaCloud":
        published = f"{count}x {m.group('server')} H100 80GB {m.group('ff')}"
    return published, catalog, variant, folder


def _table(git_dir: str, path: str) -> list[tuple[int, dict]]:
    text = git_show(git_dir, COMMIT, path)
    return [(no, r) for no, r in enumerate(csv.DictReader(io.StringIO(text)), 2)]


def rows(git_dir: str, _table_rows: list[dict] | None = None) -> list[dict]:
    out = []
    for prec, lines in LINES.items():
        path = f"pytorch/pytorch-train-throughput-{prec}.csv"
        bs_path = f"pytorch/pytorch-train-bs-{prec}.csv"
        values, batches = dict(_table(git_dir, path)), dict(_table(git_dir, bs_path))
        for no in lines:
            r, b = values[no], batches[no]
            if b["name_gpu"] != r["name_gpu"]:
                raise SystemExit(f"{bs_path} line {no} is {b['name_gpu']!r}, not {r['name_gpu']!r}")
            count = int(float(r["num_gpu"]))
            published, catalog, variant, folder = gpu(r["name_gpu"], count)
            fw, _ = version(git_dir, f"pytorch/results/{folder}/sys_pytorch.txt")
            for column in CNNS:
                if float(r[column]) == 0:
                    continue
                total = int(b[column])
                notes = [
                    f"batch per GPU from {bs_path.split('/')[-1]} line {no} "
                    f"({total} / {count} GPUs)",
                    "synthetic data",
                ]
                if published != r["name_gpu"]:
                    notes.append(f"published as {r['name_gpu']!r}")
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
                        total // count,
                        number(r[column]),
                        notes,
                    )
                )
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
