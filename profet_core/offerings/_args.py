"""Type and range checks of the offerings API's arguments (as ``inputs/_args.py`` checks the
older entry points'): every bad value a :class:`~profet_core.ProfetValueError` naming it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._messages import quote, quote_list
from ..errors import ProfetValueError

#: The keys of ``run=`` (whole-run time and cost).
RUN_KEYS = ("dataset_images", "batch_size", "epochs")


def gpus_arg(gpus):
    """``gpus`` of :func:`predict_offerings`: a whole number 1..64 or ``"all"``."""
    if isinstance(gpus, str) and gpus.strip().lower() == "all":
        return "all"
    if isinstance(gpus, (bool, np.bool_)) or not isinstance(gpus, (int, np.integer)):
        raise ProfetValueError(
            f"gpus {quote(gpus)} is not allowed; use a whole number 1..64 or 'all' (offerings "
            "compare one GPU count at a time)"
        )
    if not 1 <= gpus <= 64:
        raise ProfetValueError(f"gpus {quote(gpus)} is not allowed; use a whole number 1..64")
    return int(gpus)


def run_arg(run):
    """``run=``: None or a dict of :data:`RUN_KEYS` (their values are checked by
    :func:`~profet_core.estimate_run`)."""
    if run is None:
        return None
    if not isinstance(run, dict):
        raise ProfetValueError(f"run must be a dict with keys {list(RUN_KEYS)}; got {quote(run)}")
    missing = [k for k in RUN_KEYS if k not in run]
    if missing:
        raise ProfetValueError(
            f"run lacks {', '.join(missing)}; it needs {', '.join(RUN_KEYS)} (images per epoch, "
            "images per step, epochs)"
        )
    return run


def no_target(off: pd.DataFrame, anchor: str) -> str:
    """Why none of the offerings kept can be predicted (one line)."""
    gpus = sorted(set(off["accelerator"].astype(str)))
    if (off["target"] == anchor).any():
        return (
            f"the offerings the filters keep rent only the anchor's own GPU ({anchor}); widen "
            "the filters to compare it with other GPUs"
        )
    return (
        f"none of the {len(off)} offering(s) the filters keep can be predicted: their GPU(s) "
        f"{quote_list(gpus)} have no spec model; widen the filters (e.g. another --gpu)"
    )


def check_snapshot(table: pd.DataFrame, name: str = "offerings") -> None:
    """An offerings table a caller passes: names present, prices finite and >= 0 or empty, GPU
    counts whole and >= 1 (a negative price would be the cheapest)."""
    from ._snapshot import OPTIONAL_COLUMNS, SNAPSHOT_COLUMNS

    missing = [c for c in SNAPSHOT_COLUMNS if c not in table.columns and c not in OPTIONAL_COLUMNS]
    if missing:
        raise ProfetValueError(f"{name} lacks column(s) {missing}; give load_offerings()'s table")
    for col in ("cloud", "instance", "region"):
        bad = ~table[col].map(lambda v: isinstance(v, str) and v.strip() != "")
        if bad.any():
            raise ProfetValueError(
                f"{name}: {col} {quote(table[col][bad].iloc[0])} is not a name (every line needs "
                "a cloud, instance and region)"
            )
    for col in ("usd_per_hour", "spot_usd_per_hour", "gpus"):
        v = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
        given = table[col].notna().to_numpy()
        low = 1 if col == "gpus" else 0
        ok = ~given | (np.isfinite(v) & (v >= low))
        if col == "gpus":
            ok &= ~given | (v == np.round(v))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            what = "a whole number >= 1" if col == "gpus" else "a finite price >= 0 (USD/h)"
            raise ProfetValueError(
                f"{name}: {col} {quote(table[col].iloc[i])} of {table['instance'].iloc[i]!r} is "
                f"not allowed; it must be {what}, or empty"
            )
