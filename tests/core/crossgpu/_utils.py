"""Helpers of the cross-GPU tests: a synthetic multi-GPU dataset whose per-family speeds follow
known spec powers, its spec sheet, and small artifacts trained on part of its GPUs."""

from __future__ import annotations

import numpy as np
import pandas as pd

# instance: (fp32 TFLOPS, bandwidth GB/s, clock MHz, generation)
GPUS = {
    "gpu-a": (4.0, 200.0, 900.0, "GenA"),
    "gpu-b": (8.0, 300.0, 1500.0, "GenB"),
    "gpu-c": (16.0, 900.0, 1500.0, "GenC"),
    "gpu-d": (12.0, 600.0, 1300.0, "GenD"),
    "gpu-e": (30.0, 1500.0, 1700.0, "GenE"),
}
OPS = {"Device_Conv2D": 1.0, "Device_Relu": 0.0, "Device_MaxPool": 0.0, "Device_IDLE": None}


def spec_table(gpus=GPUS) -> pd.DataFrame:
    rows = []
    for name, (tf, bw, clock, arch) in gpus.items():
        rows.append(
            dict(
                instance=name,
                gpu=f"GPU {name}",
                gpu_count=1,
                fp32_tflops=tf,
                tensor_tflops_fp32_training=0.0,
                mem_bandwidth_gbs=bw,
                gpu_memory_gb=16,
                sm_count=40,
                boost_clock_mhz=clock,
                arch=arch,
                release_year=2018,
                vcpus=4,
                usd_per_hour=1.0,
                price_source="test",
                price_date="2024",
                spec_source="test",
            )
        )
    return pd.DataFrame(rows)


def make_multi_gpu(n_arch=6, seed=0, gpus=GPUS):
    """Conv time ~ TFLOPS**-0.7, Relu/MaxPool time ~ 1/bandwidth, idle constant; 1% noise."""
    rng = np.random.default_rng(seed)
    prof, lat = [], []
    for a in range(n_arch):
        conv_share = 0.15 + 0.7 * a / max(n_arch - 1, 1)
        for size in (32, 64):
            for batch in (16, 32, 64):
                work = batch * (size / 32) ** 2 * (1 + a) * 1000.0
                for inst, (tf, bw, _clock, _arch) in gpus.items():
                    conv = (
                        work * conv_share / tf**0.7 * 4.0
                    )  # not the roofline prior: must be learned
                    mem = work * (1 - conv_share) / bw * 200.0
                    ops = {
                        "Device_Conv2D": conv,
                        "Device_Relu": 0.6 * mem,
                        "Device_MaxPool": 0.4 * mem,
                        "Device_IDLE": 200.0,
                    }
                    ops = {k: v * rng.normal(1, 0.01) for k, v in ops.items()}
                    key = dict(
                        exp="exp01",
                        instance=inst,
                        model=f"Net{a}",
                        input_size=size,
                        batch_size=batch,
                    )
                    prof.append({**key, **ops, "Host_IDLE": 10.0})
                    lat.append({**key, "batch_latency_s": sum(ops.values()) / 2e6})
    return pd.DataFrame(prof), pd.DataFrame(lat)


MEASURED = ["gpu-a", "gpu-b", "gpu-c"]


def train_cross(prof, lat, out, trees: tuple[int, int], measured=MEASURED):
    """Hybrid-only, uncalibrated artifacts at ``out`` trained on the ``measured`` GPUs' rows, with
    every GPU of ``spec_table()`` in the catalog and the spec sheet (the others are spec-only
    targets); ``trees``: the hybrid's (extra trees, boosted trees)."""
    from profet_core import make_dataset, train

    keep = lambda t: t[t["instance"].isin(measured)]  # noqa: E731
    dataset = make_dataset(keep(prof), keep(lat))
    catalog = spec_table()[["instance", "gpu", "usd_per_hour"]]
    params = {"hybrid": {"n_trees_et": trees[0], "n_trees_gb": trees[1]}}
    train(
        dataset,
        catalog,
        out,
        methods=["hybrid"],
        intervals=False,
        method_params=params,
        specs=spec_table(),
    )
    return out


#: CNNs the published rows stand in for, in :func:`published_medians`.
PUBLISHED_MODELS = ("ResNet50", "InceptionResNetV2", "AlexNet", "VGG16")


def published_medians() -> pd.DataFrame:
    """p3.2xlarge medians of :data:`PUBLISHED_MODELS` (conv-heavy op-family shares)."""
    from profet_core.crossgpu.spec._pairs import FAM_COLS

    rows = []
    for i, m in enumerate(PUBLISHED_MODELS):
        fam = np.array([60.0, 5, 0, 10, 3, 8, 6, 4, 2, 2]) * (1 + 0.1 * i)
        rows.append(
            {"instance": "p3.2xlarge", "model": m, "input_size": 224, "batch_size": 64}
            | dict(zip(FAM_COLS, fam, strict=True))
            | {"latency_s": 0.1}
        )
    return pd.DataFrame(rows)
