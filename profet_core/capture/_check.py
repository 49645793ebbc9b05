"""Checks on captured profiles that need no TensorFlow (safe on the prediction path)."""

from __future__ import annotations

import pandas as pd

from ..errors import ProfetValueError
from ..inputs._sanity import MIN_DEVICE_US, NO_GPU, device_busy_us

NO_GPU_MESSAGE = f"the profile has no GPU device time: {NO_GPU}"


def predict_suggestion(profile: pd.DataFrame, path, instance, batch_latency_s) -> str:
    """What ``profet profile`` says to do next with a profile it wrote: only what will work.

    Parameters
    ----------
    profile : pandas.DataFrame
        The profile written (one row).
    path : path-like
        Where it was written.
    instance : str or None
        The instance it was taken on (``--instance``), if named.
    batch_latency_s : float
        The measured batch latency.

    Returns
    -------
    str
        A ``profet predict`` command, or, for a profile without GPU device time (taken on a
        CPU), which ``profet predict`` refuses, why there is none.
    """
    import shlex

    if not has_gpu_ops(profile).all():
        return (
            "no `profet predict` command to suggest: the profile has no GPU device time (taken "
            "on a CPU), which prediction refuses; profile on the GPU instance you predict from"
        )
    anchor = shlex.quote(instance) if instance else "ANCHOR"
    command = (
        f"predict with: profet predict --anchor {anchor} --profile {shlex.quote(str(path))} "
        f"--anchor-latency-ms {batch_latency_s * 1e3:.3f}"
    )
    if not instance:
        command += " (ANCHOR: the instance this ran on, one of `profet instances`)"
    return command


def has_gpu_ops(profiles: pd.DataFrame) -> pd.Series:
    """Per row, whether its ``Device_<Op>`` busy time is at least 1 us (``MIN_DEVICE_US``).

    Parameters
    ----------
    profiles : pandas.DataFrame
        Shape (n_profiles, n_ops), op columns in microseconds (as ``read_profile`` returns).

    Returns
    -------
    pandas.Series of bool, length n_profiles
    """
    return pd.Series(device_busy_us(profiles) >= MIN_DEVICE_US, index=profiles.index)


def check_gpu_profile(profiles: pd.DataFrame) -> None:
    """Refuse profiles without GPU device ops, saying plainly why.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Profiles as ``profet_core.read_profile`` returns them.

    Raises
    ------
    ProfetValueError
        If any row has less than 1 us of ``Device_<Op>`` busy time; names the rows.
    """
    gpu = has_gpu_ops(profiles)
    if not gpu.all():
        rows = [int(i) for i in profiles.index[~gpu.to_numpy()][:5]]
        where = "" if len(profiles) == 1 else f" (row(s) {rows})"
        raise ProfetValueError(NO_GPU_MESSAGE.replace("the profile has", f"the profile{where} has"))
