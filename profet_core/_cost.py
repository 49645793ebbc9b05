"""Whole-run time and cost from predicted batch latencies."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .errors import ProfetValueError


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ProfetValueError(f"{name} is {value!r}; it must be a whole number >= 1")
    return int(value)


def estimate_run(
    table: pd.DataFrame, dataset_images: int, batch_size: int, epochs: int
) -> pd.DataFrame:
    """Time and cost of a whole training run on each target.

    Parameters
    ----------
    table : pandas.DataFrame
        A prediction table with ``batch_latency_ms`` and ``usd_per_hour``, and optionally
        ``low_ms``/``high_ms``.
    dataset_images : int
        Training images per epoch.
    batch_size : int
        Images per training step (the batch size the profile was taken with).
    epochs : int

    Returns
    -------
    pandas.DataFrame
        ``table`` plus ``steps``, ``run_hours`` and ``run_usd`` (and ``run_usd_low``/``run_usd_high``
        from the interval when present). ``run_usd`` is NaN where the price is unknown.
    """
    dataset_images = _positive_int("dataset_images", dataset_images)
    batch_size = _positive_int("batch_size", batch_size)
    epochs = _positive_int("epochs", epochs)
    steps = math.ceil(dataset_images / batch_size) * epochs
    out = table.copy()
    out["steps"] = steps
    out["run_hours"] = out["batch_latency_ms"] * steps / 3.6e6
    out["run_usd"] = out["run_hours"] * out["usd_per_hour"]
    for side in ("low", "high"):
        if f"{side}_ms" in out:
            out[f"run_usd_{side}"] = out[f"{side}_ms"] * steps / 3.6e6 * out["usd_per_hour"]
    return out
