"""Spec-order exceptions: roofline bounds the published measurements themselves
break, which the spec order then leaves as predicted and cites."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ._bounds import bound_matrix

#: A published step this much past its bound is an exception (the issue's 10%).
SLACK = 1.10


def published_exceptions(published: pd.DataFrame | None = None, slack: float = SLACK) -> dict:
    """Bounds the published measurements themselves break: ``{(gpu_a, gpu_b, precision):
    citation}`` where a published one-GPU table (same source, framework, precision, CNN, batch
    and image size) gives GPU a a step more than ``slack`` times its roofline bound against b's
    (:func:`~._bounds.bound_matrix` over ``gpu_reference.csv`` and ``gpu_specs.csv``).
    ``precision`` is ``fp32`` (FP32, TF32) or ``amp``; VGG16 and Inception-v3 rows are left out
    (never used for any choice)."""
    if published is None:  # the package's table: read and compared once per process
        return dict(_package_exceptions(slack))
    return _exceptions(published, slack)


@functools.lru_cache(maxsize=4)
def _package_exceptions(slack: float) -> tuple:
    from ..spec._published import load_published

    return tuple(_exceptions(load_published(), slack).items())


def _exceptions(pub: pd.DataFrame, slack: float) -> dict:
    from ..spec._gpuref import gpu_table
    from ..spec._published import held_out

    pub = pub[(pub["gpu_count"] == 1) & ~held_out(pub["model"])]
    gpus = gpu_table().reset_index()
    bounds = {k: bound_matrix(gpus, k) for k in ("fp32", "amp")}
    where = {g: i for i, g in enumerate(gpus["gpu"])}
    pub = pub.assign(kind=np.where(pub["precision"] == "AMP", "amp", "fp32"))
    keys = ["source_doc", "framework", "kind", "model", "batch_size", "image_size"]
    pub = pub.assign(source_doc=pub["source"].str.rsplit(":", n=1).str[0])
    out = {}
    for k, grp in pub.groupby(keys, sort=False, dropna=False):
        rows = grp[grp["catalog_gpu"].isin(where)].drop_duplicates("catalog_gpu")
        names, ips = rows["catalog_gpu"].tolist(), rows["images_per_s"].to_numpy(float)
        h = bounds[k[2]]
        for a, ga in enumerate(names):
            for b, gb in enumerate(names):
                if a != b and ips[b] > slack * h[where[ga], where[gb]] * ips[a]:
                    out[(ga, gb, k[2])] = (
                        f"{ga} {ips[a]:g} vs {gb} {ips[b]:g} images/s, {k[3]} batch "
                        f"{k[4]:g} ({rows['source'].iloc[a]}; {rows['source'].iloc[b]})"
                    )
    return out
