"""Cross-instance training tables: per-family device times, median over repetitions, all pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...features._profile_features import FAMILY_COLUMNS, family_matrix
from ...inputs._dataset import Dataset

#: Families the cross-instance model gives their own exponents; rare ones are merged.
MODEL_FAMILIES = (
    "conv",
    "matmul",
    "depthwise",
    "norm",
    "pool",
    "activation",
    "elementwise",
    "optimizer",
    "transfer",
    "idle",
)
#: Families merged into ``elementwise`` (too rare in CNN training to learn on their own).
MERGED = {"other": "elementwise", "input": "elementwise"}
WORKLOAD = ("model", "input_size", "batch_size")
FAM_COLS = tuple(f"fam_{f}" for f in MODEL_FAMILIES)


def model_family_times(ops: pd.DataFrame) -> np.ndarray:
    """Device time per :data:`MODEL_FAMILIES` (us), shape (n_rows, 10); idle included.

    Parameters
    ----------
    ops : pandas.DataFrame
        ``Device_<Op>`` columns in microseconds (``Host_*`` are ignored; any op name works).
    """
    return model_families(family_matrix(ops, "Device"))


def model_families(device_families: np.ndarray) -> np.ndarray:
    """:func:`model_family_times` from device time per family (``ProfileFeatures``'s
    ``device_families``, columns in ``FAMILY_COLUMNS`` order), without re-reading the ops."""
    col = {f: i for i, f in enumerate(FAMILY_COLUMNS)}
    fam = np.array(device_families, dtype=float)
    for src, dst in MERGED.items():
        fam[:, col[dst]] = fam[:, col[dst]] + fam[:, col[src]]
    return fam[:, [col[f] for f in MODEL_FAMILIES]]


def median_table(dataset: Dataset) -> pd.DataFrame:
    """One row per (instance, workload): median family times and median latency over repetitions.

    Returns
    -------
    pandas.DataFrame
        ``instance, model, input_size, batch_size``, :data:`FAM_COLS` (us) and ``latency_s``;
        family times are NaN for workloads measured but not profiled on that instance.
    """
    key = ["instance", *WORKLOAD]
    prof = dataset.profiles
    fam = pd.DataFrame(model_family_times(prof), columns=list(FAM_COLS), index=prof.index)
    fam = pd.concat([prof[key], fam], axis=1).groupby(key, as_index=False).median()
    lat = dataset.latencies.groupby(key, as_index=False)["batch_latency_s"].median()
    out = lat.rename(columns={"batch_latency_s": "latency_s"}).merge(fam, on=key, how="left")
    return out.reset_index(drop=True)


def all_pairs(medians: pd.DataFrame, instances=None) -> pd.DataFrame:
    """Every ordered anchor != target pair of :func:`median_table` rows sharing a workload.

    Parameters
    ----------
    medians : pandas.DataFrame
        Output of :func:`median_table` (possibly filtered).
    instances : iterable of str, optional
        Restrict anchors and targets to these.

    Returns
    -------
    pandas.DataFrame
        ``anchor, target``, the workload columns, the anchor's :data:`FAM_COLS`,
        ``anchor_latency_s`` and ``target_latency_s``; anchors without a profile are dropped.
    """
    m = medians if instances is None else medians[medians["instance"].isin(list(instances))]
    a = m.dropna(subset=list(FAM_COLS)).rename(
        columns={"instance": "anchor", "latency_s": "anchor_latency_s"}
    )
    t = m[["instance", *WORKLOAD, "latency_s"]].rename(
        columns={"instance": "target", "latency_s": "target_latency_s"}
    )
    out = a.merge(t, on=list(WORKLOAD))
    return out[out["anchor"] != out["target"]].reset_index(drop=True)
