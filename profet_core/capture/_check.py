"""Checks on captured profiles that need no TensorFlow (safe on the prediction path)."""

from __future__ import annotations

import pandas as pd

from ..errors import ProfetValueError
from ..inputs._sanity import NO_GPU, device_busy_us

NO_GPU_MESSAGE = f"the profile has no GPU device time: {NO_GPU}"


def has_gpu_ops(profiles: pd.DataFrame) -> pd.Series:
    """Per row, whether any ``Device_<Op>`` time is > 0.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Shape (n_profiles, n_ops), op columns in microseconds (as ``read_profile`` returns).

    Returns
    -------
    pandas.Series of bool, length n_profiles
    """
    return pd.Series(device_busy_us(profiles) > 0, index=profiles.index)


def check_gpu_profile(profiles: pd.DataFrame) -> None:
    """Refuse profiles without GPU device ops, saying plainly why.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Profiles as ``profet_core.read_profile`` returns them.

    Raises
    ------
    ProfetValueError
        If any row has no ``Device_<Op>`` time > 0; names the rows.
    """
    gpu = has_gpu_ops(profiles)
    if not gpu.all():
        rows = [int(i) for i in profiles.index[~gpu.to_numpy()][:5]]
        where = "" if len(profiles) == 1 else f" (row(s) {rows})"
        raise ProfetValueError(NO_GPU_MESSAGE.replace("the profile has", f"the profile{where} has"))
