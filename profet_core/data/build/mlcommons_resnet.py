"""MLPerf Training v3.0, v3.1 and v4.0 ResNet-50 results on one node, as ``published.csv``-shaped
rows of one GPU configuration each (the three repositories ``mlcommons/training_results_v*``,
Apache-2.0).

Read: every ``<submitter>/results/<system>/resnet/`` whose ``<submitter>/systems/<system>.json``
has ``number_of_nodes`` 1 and an NVIDIA data-centre or workstation GPU (:data:`GPUS`), and whose
log was written by NVIDIA's MXNet ResNet-50 v1.5 implementation (``image_classification/common/
fit.py``: NHWC FP16 (AMP), DALI, real ImageNet, LARS, ``global_batch_size`` over all GPUs), the
same code on every GPU. Not read: multi-node systems (InfiniBand between nodes is no catalog
configuration), other implementations (tinygrad, MosaicML Composer), non-NVIDIA accelerators, and
a system whose logs print no throughput.

Each file ``result_<i>.txt`` is one time-to-train run (training with an evaluation every four
epochs). A run's throughput is the median over its epochs after the first (whose start includes
the warm-up) of the training throughput it logs per epoch (mllog ``tracked_stats`` ``throughput``
or ``imgs_sec``, images/s of the whole node, evaluation excluded); where a log has none, the
median of MXNet's ``Speed: ... samples/sec`` lines (20-batch intervals, the node's) after the first
epoch. ``images_per_s`` is the median over the runs (the lower middle of an even count), and
``source`` cites the line it was read from. A system whose logs in a later round repeat an earlier
round's (same submitter, system and images/s) is read once, from the earliest round.

These rows form no pair of the fitted models: they are all FP16 and all multi-GPU, with no
one-GPU row (the AMP gain needs an AMP and an FP32 row of one GPU, the N-GPU model a one-GPU row,
the FP32 speed-ups FP32 rows). They are an independent check of cross-GPU AMP ratios at the same
GPU count and code (``bench/studies/mlperf_check.py``).

Needs mirrors of the repositories (the ``fetch`` tool: ``github:mlcommons/training_results_v3.0``,
``..._v3.1``, ``..._v4.0``); run once per mirror, oldest first:

    python profet_core/data/build/mlcommons_resnet.py --git-dir /work/.mirror/mlcommons+training_results_v3.0/repo
"""

from __future__ import annotations

import json
import re
import subprocess

from _rows import git_show, main_for

REPOS = {
    "mlcommons/training_results_v3.0": "63e326c400f5d8bb8c6070a9ab08332d4931152e",
    "mlcommons/training_results_v3.1": "d06288b2bd675a9d88e0e6181f5bb5626b71ec19",
    "mlcommons/training_results_v4.0": "6fe954378efe4a1a1bd665550b18ff8f26018def",
}
REPO = "mlcommons/training_results_v3.0"  # the first to build (the build test's mirror check)
#: accelerator_model_name (lower case) -> (catalog GPU, variant note); empty: no catalog GPU.
GPUS = {
    "nvidia h100-sxm5-80gb": ("NVIDIA H100 SXM5 80GB", "same variant"),
    "nvidia h100-sxm-80gb": ("NVIDIA H100 SXM5 80GB", "same variant"),
    "nvidia h100-sxm5-96gb": ("", "H100 SXM5 96GB: no catalog GPU"),
    "nvidia h100-pcie-80gb": ("NVIDIA H100 PCIe 80GB", "same variant"),
    "nvidia h100-pcie": ("NVIDIA H100 PCIe 80GB", "same variant"),
    "nvidia h200-sxm5-141gb": ("NVIDIA H200 SXM 141GB", "same variant"),
    "nvidia a100-pcie-80gb": ("NVIDIA A100 PCIe 80GB", "same variant"),
    "nvidia a100-sxm-80gb cts": ("NVIDIA A100 SXM4 80GB", "same variant"),
    "nvidia a100-sxm-40gb": ("NVIDIA A100 SXM4 40GB", "same variant"),
    "nvidia a100-sxm4-40gb": ("NVIDIA A100 SXM4 40GB", "same variant"),
    "nvidia a30-pcie-24gb": ("", "A30 24GB PCIe: no catalog GPU"),
    "nvidia a30": ("", "A30 24GB PCIe: no catalog GPU"),
    "nvidia l4": ("NVIDIA L4", "same variant"),
    "nvidia l40": ("NVIDIA L40", "same variant"),
    "nvidia l40s": ("NVIDIA L40S", "same variant"),
    "nvidia a10g": ("NVIDIA A10G", "same variant"),
    "nvidia a40": ("NVIDIA A40", "same variant"),
    "nvidia rtx a5000": ("NVIDIA RTX A5000", "same variant"),
}
CODE = "/workspace/image_classification/common/fit.py"
RESULT = re.compile(r"^([^/]+)/results/([^/]+)/resnet/result_\d+\.txt$")
TRACKED = re.compile(r'"key": "tracked_stats", "value": \{"(?:throughput|imgs_sec)": ([\d.]+)\}')
EPOCH = re.compile(r'"step": (\d+)')
SPEED = re.compile(r"Epoch\[(\d+)\] Batch \[[\d-]+\]\s+Speed: ([\d.]+) samples/sec")
BATCH = re.compile(r'"key": "global_batch_size", "value": (\d+)')


def _which(git_dir: str) -> tuple[str, str]:
    """The repository and commit of :data:`REPOS` that the mirror holds."""
    for repo, commit in REPOS.items():
        found = subprocess.run(
            ["git", "--git-dir", git_dir, "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
            check=False,
        )
        if found.returncode == 0:
            return repo, commit
    raise SystemExit(f"{git_dir} holds none of {sorted(REPOS)}")


def _lower_median(pairs: list[tuple[float, int]]) -> tuple[float, int]:
    """The (value, line) of the lower middle of ``pairs`` sorted by value."""
    ranked = sorted(pairs)
    return ranked[(len(ranked) - 1) // 2]


def run_throughput(text: str) -> tuple[float, int, str] | None:
    """(images/s, 1-based line, kind) of one run's log: the median of its per-epoch throughputs
    after the first epoch, or of its ``Speed:`` lines after epoch 0; None where it has neither."""
    tracked, speed = [], []
    for no, line in enumerate(text.splitlines(), 1):
        m = TRACKED.search(line)
        if m:
            step = EPOCH.search(line)
            if step and int(step.group(1)) > 1:
                tracked.append((float(m.group(1)), no))
            continue
        m = SPEED.search(line)
        if m and int(m.group(1)) > 0:
            speed.append((float(m.group(2)), no))
    if tracked:
        return (*_lower_median(tracked), "tracked_stats")
    if speed:
        return (*_lower_median(speed), "Speed")
    return None


def systems(git_dir: str, commit: str) -> dict[tuple[str, str], list[str]]:
    """(submitter, system) -> its ResNet result files."""
    names = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    out: dict[tuple[str, str], list[str]] = {}
    for name in names:
        m = RESULT.match(name)
        if m:
            out.setdefault((m.group(1), m.group(2)), []).append(name)
    return out


def _system_row(git_dir, repo, commit, org, system, files) -> dict | None:
    try:
        spec = json.loads(git_show(git_dir, commit, f"{org}/systems/{system}.json"))
    except (subprocess.CalledProcessError, json.JSONDecodeError):
        return None
    gpu = str(spec.get("accelerator_model_name", "")).strip()
    if float(spec.get("number_of_nodes") or 0) != 1 or gpu.lower() not in GPUS:
        return None
    n = int(float(spec["accelerators_per_node"]))
    runs, batch = [], None
    for path in sorted(files):
        text = git_show(git_dir, commit, path)
        if CODE not in text:
            return None
        got = run_throughput(text)
        if got is None:
            return None
        runs.append((got[0], got[1], path, got[2]))
        batch = int(BATCH.search(text).group(1))
    value, line, path, kind = sorted(runs)[(len(runs) - 1) // 2]
    catalog, variant = GPUS[gpu.lower()]
    if batch % n:
        raise SystemExit(f"{org}/{system}: global batch {batch} over {n} GPUs")
    version = repo.rsplit("_v", 1)[1]
    return {
        "source": f"{repo}@{commit}:{path}:{line}",
        "framework": "MXNet",
        "framework_version": f"{spec.get('framework', '').strip() or 'not given'} "
        f"({org}/systems/{system}.json)",
        "precision": "AMP",
        "xla": "off",
        "gpu_published": f"{n}x {gpu} ({org} {system})",
        "catalog_gpu": catalog,
        "variant_note": variant,
        "gpu_count": str(n),
        "model": "ResNet-50 v1.5",
        "data_model": "ResNet50",
        "profile_proxy": "",
        "batch_size": str(batch // n),
        "image_size": "224",
        "images_per_s": f"{value:.1f}",
        "notes": (
            f"MLPerf Training v{version} ({spec.get('division', '')}, "
            f"{spec.get('status', '')}); NVIDIA's MXNet ResNet-50 v1.5: NHWC FP16, DALI, real "
            f"ImageNet, LARS, global batch {batch}; time-to-train runs with evaluation every 4 "
            f"epochs; images/s of the node, median over {len(runs)} runs of each run's median "
            f"{'per-epoch tracked_stats' if kind == 'tracked_stats' else 'Speed: line'} after "
            "the first epoch (evaluation excluded)"
        ),
    }


def rows(git_dir: str, table: list[dict] | None = None) -> list[dict]:
    repo, commit = _which(git_dir)
    seen = {(r["gpu_published"], r["images_per_s"]) for r in table or []}
    out = []
    for (org, system), files in sorted(systems(git_dir, commit).items()):
        r = _system_row(git_dir, repo, commit, org, system, files)
        if r and (r["gpu_published"], r["images_per_s"]) not in seen:
            out.append(r)
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
