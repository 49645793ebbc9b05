"""The instance catalog (each instance's GPU and on-demand price) and whole-run cost."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ProfetFileNotFoundError, ProfetValueError

CATALOG_COLUMNS = ("instance", "gpu", "usd_per_hour")


def validate_catalog(df: pd.DataFrame) -> pd.DataFrame:
    """Check a catalog table.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``instance`` (unique), ``gpu`` and ``usd_per_hour`` (finite, >= 0); other columns
        (``gpu_count``, ``gpu_memory_gb``, ``vcpus``, ``memory_gib``) are kept.

    Returns
    -------
    pandas.DataFrame
        The catalog indexed by nothing, ``instance`` as str, ``usd_per_hour`` as float.
    """
    missing = [c for c in CATALOG_COLUMNS if c not in df.columns]
    if missing:
        raise ProfetValueError(
            f"instance catalog lacks column(s) {missing}; needs {list(CATALOG_COLUMNS)}"
        )
    df = df.copy()
    df["instance"] = df["instance"].astype(str).str.strip()
    if df["instance"].duplicated().any():
        dup = sorted(df.loc[df["instance"].duplicated(), "instance"])
        raise ProfetValueError(f"instance catalog lists {dup} more than once")
    price = pd.to_numeric(df["usd_per_hour"], errors="coerce")
    if price.isna().any() or not np.isfinite(price).all() or (price < 0).any():
        raise ProfetValueError("usd_per_hour must be a finite number >= 0 for every instance")
    df["usd_per_hour"] = price.astype(float)
    return df.reset_index(drop=True)


def load_catalog(path: str | Path) -> pd.DataFrame:
    """Read and validate an instance catalog CSV (see :func:`validate_catalog`)."""
    path = Path(path)
    if not path.is_file():
        raise ProfetFileNotFoundError(f"instance catalog {str(path)!r} does not exist")
    try:
        df = pd.read_csv(path)
    except Exception as exc:  # pandas raises many types for a malformed CSV
        raise ProfetValueError(f"cannot read instance catalog {str(path)!r}: {exc}") from None
    return validate_catalog(df)


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
