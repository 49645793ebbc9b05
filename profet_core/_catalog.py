"""The instance catalog: each instance's GPU and on-demand price."""

from __future__ import annotations

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
