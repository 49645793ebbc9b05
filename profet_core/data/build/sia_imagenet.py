"""The Sia/Pollux ImageNet (ResNet-50) placement traces, as ``published.csv`` rows of one node's
1, 2, 4 and 8 GPUs.

``sia-simulator/traces/imagenet/placements-<cluster>.csv`` of siasosp23/artifacts (the Sia SOSP
'23 artifact, built on Pollux's OSDI '21 one; no licence file at its root: its numbers are taken
as measurements with their provenance, none of its code). Each line is one profiled
(``placement``, ``local_bsz``): ``placement`` gives the GPUs on each node used (``4``: four GPUs
of one node, ``22``: two on each of two nodes), ``step_time`` the seconds of one training
iteration (gradient synchronisation included; ``sync_time`` is its all-reduce part) at
``local_bsz`` images per GPU. The job is AdaptDL's ImageNet example
(``adaptdl/benchmark/models/imagenet``: torchvision ``resnet50``, NVIDIA apex AMP ``O1`` (FP16),
``AdaptiveDataParallel`` over NCCL, real ImageNet through a PyTorch data loader, 224 px).

Read: the one-node placements of 1, 2, 4 and 8 GPUs (the GPU counts of catalog configurations;
multi-node placements are not: InfiniBand or Ethernet between nodes is no catalog configuration),
each cluster at one per-GPU batch, the largest profiled at every one of those placements (so the
N-GPU rows pair with the one-GPU row at the same batch). ``images_per_s`` = GPUs x ``local_bsz``
/ ``step_time``. The ``dgx`` cluster is left out: it is the ``dgx-ext`` machines profiled at fewer
batch sizes (``simulator_config.py``: "dgx-ext ... should be default"). Clusters
(``simulator_config.py``): :data:`CLUSTERS`.

Needs a mirror of the repository (the ``fetch`` tool: ``github:siasosp23/artifacts``).

    python profet_core/data/build/sia_imagenet.py --git-dir /work/.mirror/siasosp23+artifacts/repo
"""

from __future__ import annotations

import csv
import io

from _rows import git_show, main_for

REPO = "siasosp23/artifacts"
COMMIT = "aaf7a0de7b6cb5eab06ea020467ede5d2fd18e70"
TRACES = "sia-simulator/traces/imagenet"
#: Cluster -> (gpu_published, catalog GPU, variant note, GPUs per node).
CLUSTERS = {
    "aws": (
        "T4 (AWS g4dn.12xlarge)",
        "NVIDIA T4",
        "same variant; g4dn.12xlarge: 4 T4 on PCIe (the catalog's g4dn.12xlarge)",
        4,
    ),
    "azure": (
        "V100 32GB (Azure ND40rs_v2)",
        "NVIDIA V100 SXM2 32GB",
        "ND40rs_v2: 8 V100 32GB SXM2 over NVLink (the GPU is named by the instance type only)",
        8,
    ),
    "dgx-ext": ("A100 40GB (DGX-A100)", "NVIDIA A100 SXM4 40GB", "same variant (NVSwitch)", 8),
    "quad": ("Quadro RTX 6000 (4x, on-prem)", "NVIDIA Quadro RTX 6000", "same variant", 4),
    "rtx": (
        "RTX 2080Ti (8x, on-prem)",
        "NVIDIA GeForce RTX 2080 Ti",
        "same variant; whether the server allows PCIe peer-to-peer is not said",
        8,
    ),
}
COUNTS = (1, 2, 4, 8)
FRAMEWORK = (
    "not recorded with the traces; the repository's job image is PyTorch 1.9.0, CUDA 11.1, "
    "NVIDIA apex (adaptdl/benchmark/models/imagenet/Dockerfile)"
)


def lines(git_dir: str, cluster: str) -> list[dict]:
    """The one-node lines of a cluster's trace (1-based line numbers, header = 1)."""
    path = f"{TRACES}/placements-{cluster}.csv"
    reader = csv.DictReader(io.StringIO(git_show(git_dir, COMMIT, path)))
    out = []
    for no, r in enumerate(reader, 2):
        place = r["placement"].strip()
        if len(place) == 1 and int(place) in COUNTS:
            out.append({"line": no, "gpus": int(place), "bsz": int(r["local_bsz"]), **r})
    return out


def rows(git_dir: str, _table: list[dict] | None = None) -> list[dict]:
    out = []
    for cluster, (published, catalog, variant, per_node) in CLUSTERS.items():
        found = lines(git_dir, cluster)
        counts = [n for n in COUNTS if n <= per_node]
        common = set.intersection(*({r["bsz"] for r in found if r["gpus"] == n} for n in counts))
        bsz = max(common)
        for n in counts:
            (r,) = [r for r in found if r["gpus"] == n and r["bsz"] == bsz]
            step = float(r["step_time"])
            out.append(
                {
                    "source": f"{REPO}@{COMMIT}:{TRACES}/placements-{cluster}.csv:{r['line']}",
                    "framework": "PyTorch",
                    "framework_version": FRAMEWORK,
                    "precision": "AMP",
                    "xla": "off",
                    "gpu_published": f"{n}x {published}",
                    "catalog_gpu": catalog,
                    "variant_note": variant,
                    "gpu_count": str(n),
                    "model": "resnet50",
                    "data_model": "ResNet50",
                    "profile_proxy": "",
                    "batch_size": str(bsz),
                    "image_size": "224",
                    "images_per_s": f"{n * bsz / step:.1f}",
                    "notes": (
                        f"Sia/Pollux trace, cluster {cluster!r}, placement {r['placement']}: "
                        f"step_time {step:.4f} s (sync_time {float(r['sync_time']):.4f} s) at "
                        f"local_bsz {bsz}; images/s = GPUs x local_bsz / step_time; AdaptDL "
                        "ImageNet job (apex AMP O1, real ImageNet, data loader); the largest batch "
                        "profiled at every one-node placement of 1-8 GPUs"
                    ),
                }
            )
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
