"""The GPU/instance spec catalog: what each instance's GPU can do on paper (never what it costs:
prices belong to offerings, :mod:`profet_core.offerings`).

Instances are data: the package ships ``profet_core/data/gpu_specs.csv`` and a user may pass
their own CSV with the same columns (one line per GPU configuration). Every value carries its
source in ``spec_source``; values the catalog is unsure of say so there.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ProfetValueError

#: Log spec features the cross-instance model scales op families by.
#: The spec sheet shipped with the package (``profet_core/data/``).
SPECS_FILE = "gpu_specs.csv"
#: Largest spec catalog read (bytes): a line per instance, a few hundred bytes each.
MAX_SPECS_BYTES = 5 * 2**20
SPECS = ("log_tflops", "log_bandwidth", "log_clock")
#: Columns that must hold finite numbers > 0 (physical quantities and counts).
POSITIVE = (
    "gpu_count",
    "fp32_tflops",
    "mem_bandwidth_gbs",
    "gpu_memory_gb",
    "sm_count",
    "boost_clock_mhz",
    "release_year",
    "vcpus",
)
#: Finite numbers >= 0 (0 = no tensor-core rate for FP32 training).
NON_NEGATIVE = ("tensor_tflops_fp32_training",)
TEXT = ("instance", "gpu", "arch", "spec_source")
SPEC_COLUMNS = (*TEXT[:2], *POSITIVE, *NON_NEGATIVE, *TEXT[2:])
#: Plausible ranges: a value outside is almost surely a unit mistake (GB/s typed as TB/s...).
RANGES = {
    "fp32_tflops": (0.1, 1000.0),
    "tensor_tflops_fp32_training": (0.0, 10000.0),
    "mem_bandwidth_gbs": (10.0, 100000.0),
    "gpu_memory_gb": (0.5, 4096.0),
    "sm_count": (1, 4096),
    "boost_clock_mhz": (100.0, 10000.0),
    "release_year": (2000, 2100),
    "gpu_count": (1, 64),
    "vcpus": (1, 1024),
}


def validate_specs(df: pd.DataFrame) -> pd.DataFrame:
    """Check a spec catalog table.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per instance with :data:`SPEC_COLUMNS`: ``instance`` (unique), ``gpu``,
        ``gpu_count``, ``fp32_tflops`` (per GPU), ``tensor_tflops_fp32_training`` (dense TF32
        rate FP32 training gets; 0 where it gets none), ``mem_bandwidth_gbs``, ``gpu_memory_gb``,
        ``sm_count``, ``boost_clock_mhz``, ``arch`` (generation name), ``release_year``,
        ``vcpus`` (the whole instance's) and ``spec_source``. GPU specs are per GPU. No prices:
        an offering's price comes from the offerings snapshot (or a user's catalog). Extra
        columns are kept (and a price column is never read).

    Returns
    -------
    pandas.DataFrame
        A copy with stripped text and float numbers, index reset.

    Raises
    ------
    ProfetValueError
        On a missing column, a duplicated or empty instance name, an empty source, or a
        number that is missing, non-finite, <= 0 where physical or outside :data:`RANGES`.
    """
    missing = [c for c in SPEC_COLUMNS if c not in df.columns]
    if missing:
        raise ProfetValueError(
            f"spec catalog lacks column(s) {missing}; needs {list(SPEC_COLUMNS)}"
        )
    if df.empty:
        raise ProfetValueError("spec catalog has no rows; needs one line per instance")
    df = df.copy()
    for c in TEXT:
        values = df[c].tolist()
        if all(isinstance(v, str) and v and v == v.strip() for v in values):
            if df[c].dtype != "str":  # already clean text: only its type changes
                df[c] = values
            continue
        text = df[c].astype("string").str.strip()
        empty = text.isna() | (text == "")
        if empty.any():
            rows = df.index[empty].tolist()[:5]
            raise ProfetValueError(f"spec catalog column {c!r} is empty in row(s) {rows}")
        df[c] = text.astype(str)
    dup = df["instance"][df["instance"].duplicated()]
    if len(dup):
        raise ProfetValueError(f"spec catalog lists instance(s) {sorted(set(dup))} more than once")
    if _numbers_ok(df):  # the usual sheet: every number plausible, checked in one pass
        return df.astype({c: float for c in (*POSITIVE, *NON_NEGATIVE)}).reset_index(drop=True)
    for c in (*POSITIVE, *NON_NEGATIVE):
        values = pd.to_numeric(df[c], errors="coerce").astype(float)
        lo, hi = RANGES[c]
        bad = values.isna() | ~np.isfinite(values) | (values < lo) | (values > hi)
        if c in POSITIVE:
            bad |= values <= 0
        if bad.any():
            inst = df.loc[bad, "instance"].tolist()[:5]
            shown = df.loc[bad, c].tolist()[:5]
            kind = "> 0" if c in POSITIVE else ">= 0"
            raise ProfetValueError(
                f"spec catalog column {c!r} holds {shown} for {inst}; allowed: finite {kind} "
                f"within [{lo}, {hi}]"
            )
        df[c] = values
    return df.reset_index(drop=True)


def _numbers_ok(df: pd.DataFrame) -> bool:
    """Whether every number column is numeric (not True/False) and every value finite and
    within :data:`RANGES` (> 0 where positive): then no column needs the per-column check,
    which names the bad values."""
    cols = (*POSITIVE, *NON_NEGATIVE)
    kinds = dict(zip(df.columns, df.dtypes, strict=False))
    if not all(getattr(kinds[c], "kind", "O") in "iuf" for c in cols):
        return False
    try:
        values = df[list(cols)].to_numpy(dtype=float)
    except (TypeError, ValueError):  # a missing value of a nullable column
        return False
    lo = np.array([RANGES[c][0] for c in cols])
    hi = np.array([RANGES[c][1] for c in cols])
    positive = np.array([c in POSITIVE for c in cols])
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(values) & (values >= lo) & (values <= hi) & ~(positive & (values <= 0))
    return bool(ok.all())


def load_specs(path: str | Path | None = None) -> pd.DataFrame:
    """Read and validate a spec catalog CSV (see :func:`validate_specs`).

    Parameters
    ----------
    path : str or path-like, optional
        A CSV with :data:`SPEC_COLUMNS`; ``None`` reads the catalog shipped with the package.

    Returns
    -------
    pandas.DataFrame
        One row per instance.
    """
    from ._csv import read_csv_file

    if path is None:
        with resources.files("profet_core").joinpath(f"data/{SPECS_FILE}").open("rb") as fh:
            return validate_specs(pd.read_csv(fh))
    return validate_specs(read_csv_file(path, MAX_SPECS_BYTES, "spec catalog"))


def effective_tflops(specs: pd.DataFrame) -> pd.Series:
    """Peak rate FP32 training can use per instance (TF32 tensor cores where there are any)."""
    rate = np.maximum(specs["fp32_tflops"], specs["tensor_tflops_fp32_training"])
    return pd.Series(rate.to_numpy(dtype=float), index=specs["instance"].to_numpy())


def spec_matrix(specs: pd.DataFrame) -> pd.DataFrame:
    """Log spec features per instance (index ``instance``, columns :data:`SPECS`)."""
    return pd.DataFrame(
        {
            "log_tflops": np.log(effective_tflops(specs).to_numpy()),
            "log_bandwidth": np.log(specs["mem_bandwidth_gbs"].to_numpy(dtype=float)),
            "log_clock": np.log(specs["boost_clock_mhz"].to_numpy(dtype=float)),
        },
        index=specs["instance"].to_numpy(),
    )
