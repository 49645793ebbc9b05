"""Checks on captured profiles that need no TensorFlow (safe on the prediction path), and the
write rule of ``profet profile --out``."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..errors import ProfetValueError
from ..inputs._outputs import file_not_ours, read_record, refuse_overlap
from ..inputs._sanity import NO_GPU, device_busy_us

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


def meta_path_of(out) -> Path:
    """The metadata file written beside the profile ``out``: ``<stem>.meta.json``."""
    out = Path(out)
    return out.with_name(out.stem + ".meta.json")


def check_profile_out(out, model=None) -> None:
    """The write rule for ``profet profile --out`` (before the run): the profile and its
    ``<stem>.meta.json`` are new files, or the pair ``profet profile`` wrote, unchanged since
    (the metadata records the profile's sha256); neither is the model file.

    Raises
    ------
    ProfetValueError
        Naming the file and what to do; nothing was changed.
    """
    out = Path(out)
    meta_path = meta_path_of(out)
    if model is not None and os.path.lexists(str(model)):
        for path in (out, meta_path):
            refuse_overlap(path, [model], "--out file")
    record = read_record(meta_path)
    ours = record is not None and isinstance(record.get("profet_files"), dict)
    for path, reason in (
        (out, file_not_ours(out, record)),
        (meta_path, None if ours or not os.path.lexists(meta_path) else "PROFET did not write it"),
    ):
        if reason:
            raise ProfetValueError(
                f"{str(path)!r} exists and {reason}; give --out a new file name, or move that "
                "file away (nothing was changed)"
            )
