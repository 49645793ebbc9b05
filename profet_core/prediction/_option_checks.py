"""Each option of a prediction checked with its neighbours: the parameter count
bounded and said unused on one GPU, the anchor's AMP latency sense-checked against its FP32
step (measured, or told from the profile) and said unused on an anchor without tensor cores,
a batch size at odds with the profile's own said, a GPU count no target has refused."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._messages import show_number
from .._schema import MAX_LATENCY_S, MIN_LATENCY_S
from ..errors import ProfetValueError

#: A CNN's parameter count: LeNet-5 has 6e4, the largest CNNs 1e9; 1e12 leaves room.
MAX_PARAMS = 1e12
#: The share of the FP32 step an AMP step may take: bounds left wide on purpose, so that only
#: a typing or unit mistake falls outside (the audit's 5800 ms AMP step for a 14 ms FP32 one).
AMP_SHARE = (0.05, 3.0)
#: Device busy time of a 2-step profile over one step's latency, the median in the data
#: (``profet_core.inputs._sanity.RATIO_TYPICAL``): a step's FP32 latency told from a profile.
RATIO_TYPICAL = 1.90
PARAMS_UNUSED = (
    "params is used only for several GPUs (it sizes the gradient all-reduce); with one GPU it "
    "changes nothing"
)


def positive_number(value, name: str, low: float, high: float, unit: str = "") -> float:
    """``value`` as a float in ``[low, high]``, refused by name otherwise (an int of 400 digits,
    a bool, text, NaN and inf included)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    try:
        number = float(value) if ok else np.nan
    except OverflowError:  # an int of hundreds of digits
        number = np.inf
    if not low <= number <= high:
        raise ProfetValueError(
            f"{name} {show_number(value)}{unit} is not allowed; it must be a number from "
            f"{low:g} to {high:g}{unit}"
        )
    return number


def checked_amp_latency(value):
    """The anchor's AMP latency (s) in the range a step's latency has, or None."""
    if value is None:
        return None
    return positive_number(value, "anchor_amp_latency_s", MIN_LATENCY_S, MAX_LATENCY_S, " s")


def checked_params(value):
    """The model's parameter count, 1..:data:`MAX_PARAMS`, or None."""
    return None if value is None else positive_number(value, "params", 1, MAX_PARAMS)


def amp_latency_notes(anchor_tensor: bool, ops: pd.DataFrame, lat, amp_lat) -> list[str]:
    """Refuse an AMP latency no AMP step of this profile can have; say where it is unused.

    Parameters
    ----------
    anchor_tensor : bool
        Whether the anchor's GPU has FP16 tensor cores.
    ops : pandas.DataFrame
        The prepared profiles (op times over 2 steps, us).
    lat : array-like
        The anchor's FP32 latency per row (s, NaN where unknown).
    amp_lat : float or None
        The anchor's measured AMP step latency (s).
    """
    if amp_lat is None:
        return []
    from ..inputs._sanity import device_busy_us

    fp32 = np.broadcast_to(np.asarray(lat, dtype=float), (len(ops),)).copy()
    told = device_busy_us(ops) * 1e-6 / RATIO_TYPICAL  # the FP32 step told from the profile
    fp32 = np.where(np.isfinite(fp32), fp32, told)
    share = amp_lat / fp32
    low, high = AMP_SHARE
    bad = np.flatnonzero(~((share >= low) & (share <= high)) & np.isfinite(share))
    if bad.size:
        i = int(bad[0])
        where = f"profile row {i}: " if len(ops) > 1 else ""
        raise ProfetValueError(
            f"{where}the anchor AMP latency {amp_lat * 1e3:.4g} ms is {share[i]:.3g}x the "
            f"anchor's FP32 step ({fp32[i] * 1e3:.4g} ms); an AMP step takes {low:g}-{high:g}x "
            "the FP32 one: check the value and its unit (ms)"
        )
    notes = []
    if not anchor_tensor:
        notes.append(
            f"the anchor AMP latency ({amp_lat * 1e3:.4g} ms) is not used: the anchor's GPU has "
            "no FP16 tensor cores, so its AMP gain cannot correct the targets'"
        )
    if len(ops) > 1:
        notes.append(
            f"one anchor AMP latency ({amp_lat * 1e3:.4g} ms) is applied to all {len(ops)} "
            "profile rows"
        )
    return notes


def batch_notes(profiles: pd.DataFrame, batch_size) -> list[str]:
    """A batch size given that differs from the one the profile says it was taken at."""
    if batch_size is None or "batch_size" not in profiles.columns:
        return []
    own = pd.to_numeric(profiles["batch_size"], errors="coerce").to_numpy(dtype=float)
    given = np.broadcast_to(np.asarray(batch_size, dtype=float), own.shape)
    off = np.flatnonzero(np.isfinite(own) & (own != given))
    if not off.size:
        return []
    i = int(off[0])
    return [
        f"batch size {given[i]:g} given, but the profile was taken at batch {own[i]:g}: the "
        "latency is the profiled batch's, so images/s and the run's steps are off by "
        f"{given[i] / own[i]:.3g}x; profile at the batch you mean, or scale it (profet scale)"
    ]


def no_count_left(table: pd.DataFrame, have: dict, gpus) -> None:
    """Refuse a GPU count no target has (every row would be left out)."""
    if len(table):
        return
    most = max(have.values(), default=1)
    shown = ", ".join(map(str, gpus)) if isinstance(gpus, (list, tuple)) else gpus
    raise ProfetValueError(
        f"gpus {shown}: no target has that many GPUs; the most any instance has is {most} "
        "(use a count up to it, or 'all')"
    )


#: Most rows (profile rows x GPU configurations) one answer on several GPUs may have: 10,000
#: profile rows x 105 configurations (1.05 million) took 25 s with mixed precision on 2 cores;
#: 95,000 rows ran past 120 s and gigabytes.
MAX_GPU_ANSWERS = 1_200_000


def check_gpu_answers(predictor, targets, gpus, rows: int) -> None:
    """Refuse, before the work, an answer on several GPUs (``gpus`` other than 1) past
    :data:`MAX_GPU_ANSWERS` rows: ``rows`` profile rows on each target's GPU counts."""
    if gpus == 1 or not rows:
        return
    answers = rows * sum(len(c) for c in gpu_counts(predictor, list(targets), gpus).values())
    if answers > MAX_GPU_ANSWERS:
        per = max(1, rows * MAX_GPU_ANSWERS // answers)
        raise ProfetValueError(
            f"{rows:,} profile rows on every GPU count asked for are {answers:,} answers; one "
            f"prediction on several GPUs gives at most {MAX_GPU_ANSWERS:,} (it would take "
            f"minutes): predict parts of at most {per:,} rows, or one GPU (gpus=1, --gpus 1)"
        )


def gpu_counts(predictor, targets, gpus) -> dict:
    """GPU counts per target for ``gpus`` (1, 'all' or a list); counts it lacks are left out."""
    cat = predictor.catalog.set_index("instance")
    counts = pd.to_numeric(cat["gpu_count"], errors="coerce")
    have = {t: int(counts.get(t, 1) or 1) for t in targets}
    if gpus == "all":
        out = {t: [n] for t, n in have.items()}
    else:
        want = [1] if gpus == 1 else gpus
        out = {t: [g for g in want if g <= have[t]] for t in targets}
    if getattr(predictor, "rentals", None) is not None:  # the configurations offerings rent
        from ._configs import rented_counts

        out.update(rented_counts(predictor.rentals, targets, gpus))
    return out
