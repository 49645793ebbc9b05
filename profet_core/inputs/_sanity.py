"""Sense checks on well-formed profiles that would give a confident wrong answer.

A profile can pass every reader rule and still be meaningless for PROFET: taken on a CPU (no
device time), orders of magnitude away from anything trained, or over another number of
training steps than the 2 every training profile covers. The last shows when the anchor's
measured step latency is given: in the training data, the device busy time of a 2-step profile
is 0.47-2.68x one step's latency (0.5th-99.5th percentile), so a ratio of 21 says the profile
spans about 22 steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._format import format_number
from .._schema import DEFAULT_STEPS, LATENCY_COLUMN, MAX_STEPS, STEPS_COLUMN
from ._rules import check_latency, check_steps

# Device busy time (sum of Device_* but Device_IDLE, us, over the profile's 2 steps) divided by
# the measured one-step latency (us), on the 9,036 workloads of the shared PROFET data, measured
# by `python bench/studies/ratio_range.py` (PROFET_DATA=../shared/data/profet):
#   min 0.376, q0.5% 0.469, q1% 0.541, median 1.904, q99% 2.597, q99.5% 2.684, max 2.783
#   (per instance the medians are 1.74 (p3.2xlarge) to 2.08 (p2.xlarge)).
#: Why a profile without device time cannot be predicted from, and what to do.
NO_GPU = (
    "it was taken without a GPU (e.g. on a CPU), and predictions need a GPU anchor profile; "
    "run 'profet profile' on the anchor GPU instance"
)
#: Median ratio of a 2-step profile: used to estimate how many steps a profile spans.
RATIO_TYPICAL = 1.90
#: Below this a 2-step profile's ratio is refused as implausible: q0.5% 0.469 halved.
RATIO_LOW = 0.25
#: Above this: q99.5% 2.684 widened by 30% (a 3-step profile, 2.85 typically, passes; 4 does not).
RATIO_HIGH = 3.5
#: Device busy time this many times beyond the trained range (either way) draws a warning.
RANGE_FACTOR = 10.0
#: Share of device busy time in op types the models never saw: refused from UNKNOWN_REFUSE
#: (an XLA profile has all of it there), warned about from UNKNOWN_WARN.
UNKNOWN_REFUSE = 0.20
UNKNOWN_WARN = 0.02
#: Seconds typed as milliseconds (or the reverse) put the ratio 1000x off: a ratio that lands in
#: RATIO_LOW..RATIO_HIGH once the latency is read in the other unit is refused as a unit mix-up
#: (the implied step count, hundreds or more, is no profile anyone means to take as 2 steps).
UNIT_FACTOR = 1000.0
#: Device busy time below this (us, over the whole profile) is no GPU time: a denormal such as
#: 5e-324 us is no measurement (a real training step keeps the GPU busy for milliseconds).
MIN_DEVICE_US = 1.0
#: Where to say how many steps a profile covers.
SAY_STEPS = "--steps {k} on the command line, 'Steps covered' in the app"


def say_steps(k: int) -> str:
    """How to say a profile covers ``k`` steps: only a count ``--steps`` takes (1..MAX_STEPS);
    beyond it, what to do instead (a suggestion of 45,297,035,309 steps helps nobody)."""
    if k <= MAX_STEPS:
        return f"say so ({SAY_STEPS.format(k=k)})"
    return (
        f"--steps takes at most {MAX_STEPS}, so profile over fewer steps ({DEFAULT_STEPS}, "
        "PROFET's convention, as `profet profile` does)"
    )


@dataclass(frozen=True)
class Finding:
    """One sense-check result.

    Attributes
    ----------
    level : str
        ``"error"`` (the prediction would be meaningless: refuse) or ``"warning"`` (show it).
    code : str
        Stable identifier: ``no_device_time``, ``unknown_ops``, ``convention_differs``,
        ``device_time_out_of_range``, ``latency_units``, ``latency_off``, ``latency_mismatch``;
        and
        ``steps_unstated``, ``steps_assumed`` (:mod:`._overhead`).
    message : str
        What is wrong, with values and units, and what to do.
    rows : tuple of int
        0-based rows of the profile table concerned.
    """

    level: str
    code: str
    message: str
    rows: tuple[int, ...]


def device_busy_us(profiles: pd.DataFrame) -> np.ndarray:
    """Device busy time per row (us, as given): the sum of ``Device_*`` columns but IDLE."""
    cols = [
        c
        for c in profiles.columns
        if isinstance(c, str) and c.startswith("Device_") and c != "Device_IDLE"
    ]
    if not cols:
        return np.zeros(len(profiles))
    return profiles[cols].to_numpy(dtype=float).sum(axis=1)


def _rows(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(mask))


def _where(rows: tuple[int, ...], n: int) -> str:
    if n == 1:
        return ""
    shown = ", ".join(str(r) for r in rows[:5]) + (" ..." if len(rows) > 5 else "")
    return f" (row{'s' if len(rows) > 1 else ''} {shown})"


def profile_checks(
    profiles: pd.DataFrame,
    anchor_latency_s=None,
    *,
    device_range_us=None,
    vocabulary=None,
) -> list[Finding]:
    """Sense-check parsed profiles before predicting from them.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Shape (n, n_ops + k), as returned by ``parse_profile``: ``Device_*``/``Host_*`` op times
        (us); ``steps`` (training steps covered; 2 where absent) and ``batch_latency_s``
        (seconds, NaN where unknown) if present. Already normalised profiles (no ``steps``)
        are read as 2-step profiles.
    anchor_latency_s : float or array of shape (n,), optional
        Measured one-step latency on the anchor (seconds); overrides ``batch_latency_s``.
    device_range_us : (float, float), optional
        Smallest and largest device busy time in the training data (us, 2-step convention).
    vocabulary : collection of str, optional
        Op columns the models were trained on: device time in other op types is refused from
        :data:`UNKNOWN_REFUSE` of the busy time, warned about from :data:`UNKNOWN_WARN`.

    Returns
    -------
    list of Finding
        Errors first, then warnings; empty when everything looks plausible.
    """
    n = len(profiles)
    steps = np.full(n, DEFAULT_STEPS)
    if STEPS_COLUMN in profiles.columns:
        steps = check_steps(profiles[STEPS_COLUMN].to_numpy(), "profiles")
    busy = device_busy_us(profiles)
    busy2 = busy * DEFAULT_STEPS / steps  # on the training data's 2-step convention
    out = []
    none = ~(busy >= MIN_DEVICE_US)
    if none.any():
        rows = _rows(none)
        out.append(
            Finding(
                "error",
                "no_device_time",
                f"the profile{_where(rows, n)} has no GPU device time: {NO_GPU}",
                rows,
            )
        )
    if vocabulary is not None:
        out += unknown_op_findings(profiles, vocabulary, busy, none)
    out += _convention_findings(profiles, n)
    if device_range_us is not None:
        out += _range_findings(busy2, none, device_range_us, n)
    lat = _latency(profiles, anchor_latency_s, n)
    if lat is not None:
        out += _latency_findings(busy, steps, lat, none, n)
    return sorted(out, key=lambda f: f.level != "error")


def _convention_findings(profiles: pd.DataFrame, n: int) -> list[Finding]:
    """A warning for rows whose capture recorded what differs from PROFET's convention."""
    if "convention_differs" not in profiles.columns:
        return []
    text = profiles["convention_differs"].fillna("").astype(str).to_numpy()
    mask = np.char.str_len(text.astype(str)) > 0
    if not mask.any():
        return []
    rows = _rows(mask)
    message = (
        f"the profile{_where(rows, n)} was not taken in PROFET's convention ({text[rows[0]]}): "
        "its op times may differ from what the models learned, so the prediction may be off; "
        "profile the architecture with 'profet profile' and give your own measured step "
        "latency as the anchor latency"
    )
    return [Finding("warning", "convention_differs", message, rows)]


def likely_cause(names) -> str:
    """The likely reason for op types PROFET's convention never emits, from their names."""
    if any("::" in t or "aten" in t.lower() for t in names):
        return "they look like another framework's ops (PyTorch?)"
    xla = ("fusion", "convolution", "xla", "cluster", "custom-call", "copy", "dot")
    if any(any(m in t.lower() for m in xla) or t[:1].islower() for t in names):
        return (
            "they look like XLA's compiled kernels: the model ran with jit_compile (Keras 3 "
            "turns XLA on by default on a GPU)"
        )
    return (
        "likely causes: XLA (jit_compile), mixed precision, another framework, or layers no "
        "training CNN had"
    )


def _unknown(profiles: pd.DataFrame, vocabulary, busy=None):
    """The ``Device_*`` columns outside ``vocabulary``, their times (n, k) and each row's share
    of device busy time in them."""
    known = set(vocabulary)
    cols = [
        c
        for c in profiles.columns
        if isinstance(c, str) and c.startswith("Device_") and c != "Device_IDLE" and c not in known
    ]
    busy = device_busy_us(profiles) if busy is None else busy
    times = profiles[cols].to_numpy(dtype=float) if cols else np.zeros((len(profiles), 0))
    return cols, times, times.sum(axis=1) / np.where(busy > 0, busy, np.inf)


def unknown_share(profiles: pd.DataFrame, vocabulary) -> np.ndarray:
    """Each row's share of device busy time in op types outside ``vocabulary``: shape (n,)."""
    return _unknown(profiles, vocabulary)[2]


def unknown_op_findings(profiles: pd.DataFrame, vocabulary, busy=None, none=None) -> list:
    """Findings for device time in op types outside ``vocabulary`` (see :func:`profile_checks`)."""
    busy = device_busy_us(profiles) if busy is None else busy
    cols, times, share = _unknown(profiles, vocabulary, busy)
    if not cols:
        return []
    out = []
    for level, mask in (
        ("error", share >= UNKNOWN_REFUSE),
        ("warning", (share >= UNKNOWN_WARN) & (share < UNKNOWN_REFUSE)),
    ):
        if not mask.any():
            continue
        rows = _rows(mask)
        i = rows[0]
        order = [j for j in np.argsort(-times[i])[:3] if times[i, j] > 0]
        top = [cols[j].removeprefix("Device_") for j in order]
        named = ", ".join(f"{cols[j][7:]} {times[i, j] / busy[i]:.0%}" for j in order)
        head = (
            f"{share[i]:.0%} of the device time{_where(rows, len(profiles))} is in op types "
            f"PROFET's models never saw ({named}); {likely_cause(top)}. "
        )
        fix = (
            "Profile the architecture with 'profet profile' (PROFET's convention) and give "
            "your own measured step latency as the anchor latency"
        )
        tail = (
            f"Refused: a prediction from it would be wrong. {fix}"
            if level == "error"
            else f"That time is not modelled, so the prediction may be off. {fix}"
        )
        out.append(Finding(level, "unknown_ops", head + tail, rows))
    return out


def _range_findings(busy2, none, device_range_us, n) -> list[Finding]:
    lo, hi = (float(v) for v in device_range_us)
    out = []
    for mask, word, ref in (
        (~none & (busy2 > hi * RANGE_FACTOR), "largest", hi),
        (~none & (busy2 < lo / RANGE_FACTOR), "smallest", lo),
    ):
        if not mask.any():
            continue
        rows = _rows(mask)
        v = busy2[rows[0]]
        factor = v / ref if word == "largest" else ref / v
        out.append(
            Finding(
                "warning",
                "device_time_out_of_range",
                f"device busy time {format_number(v)} us (per 2 steps){_where(rows, n)} is {factor:,.0f}x "
                f"{'above' if word == 'largest' else 'below'} the {word} in the training data "
                f"({format_number(ref)} us): the prediction is an extrapolation and may be far off",
                rows,
            )
        )
    return out


def _latency(profiles, anchor_latency_s, n):
    if anchor_latency_s is not None:
        lat = np.broadcast_to(np.asarray(anchor_latency_s, dtype=float), (n,)).copy()
    elif LATENCY_COLUMN in profiles.columns:
        lat = profiles[LATENCY_COLUMN].to_numpy(dtype=float)
    else:
        return None
    return check_latency(lat, "anchor latency")


def _latency_findings(busy, steps, lat, none, n) -> list[Finding]:
    known = ~np.isnan(lat) & ~none
    ratio = np.full(n, np.nan)
    ratio[known] = busy[known] / (lat[known] * 1e6)  # device time over the profile / one step
    ratio2 = ratio * DEFAULT_STEPS / steps
    out = _unit_findings(ratio, ratio2, busy, steps, lat, n)
    out += _absurd_findings(ratio2, busy, steps, lat, n, out)
    mixed = np.isin(np.arange(n), [r for f in out for r in f.rows])  # said once, as units
    for mask in (known & ~mixed & (ratio2 > RATIO_HIGH), known & ~mixed & (ratio2 < RATIO_LOW)):
        if not mask.any():
            continue
        rows = _rows(mask)
        i = rows[0]
        implied = ratio[i] * DEFAULT_STEPS / RATIO_TYPICAL
        head = (
            f"device time is {ratio[i]:.1f}x the anchor latency{_where(rows, n)} "
            f"({busy[i] / 1e3:.1f} ms of device time vs {lat[i] * 1e3:.1f} ms per step); "
            f"the profile says it covers {steps[i]} step(s), where training profiles show "
            f"{RATIO_TYPICAL / DEFAULT_STEPS:.2f}x per step "
            f"({RATIO_LOW / DEFAULT_STEPS:.2f}-{RATIO_HIGH / DEFAULT_STEPS:.2f}x): "
        )
        if implied >= 1:
            k = max(1, round(implied))
            tail = (
                f"was the profile taken over {k:,} steps? If so, {say_steps(k)}; or check that "
                "the latency is one step's, of this workload"
            )
        else:
            tail = (
                "is the latency one training step's, of the same model, batch and input size? "
                "(a latency over several steps or of another workload gives this)"
            )
        out.append(Finding("warning", "latency_mismatch", head + tail, rows))
    return out


def _absurd_findings(ratio2, busy, steps, lat, n, said) -> list[Finding]:
    """Errors for latencies beyond what any step count or unit mix-up explains: more than
    :data:`UNIT_FACTOR` times the ratio band away (a latency 100,000x off once gave an interval
    of 5.5e-10..200,080 ms)."""
    done = np.isin(np.arange(n), [r for f in said for r in f.rows])
    with np.errstate(invalid="ignore"):
        short = ~done & (ratio2 > RATIO_HIGH * UNIT_FACTOR)
        long = ~done & (ratio2 < RATIO_LOW / UNIT_FACTOR)
    out = []
    for mask, is_short in ((short, True), (long, False)):
        if not mask.any():
            continue
        rows = _rows(mask)
        i = rows[0]
        factor = ratio2[i] / RATIO_TYPICAL if is_short else RATIO_TYPICAL / ratio2[i]
        shown = f"{factor:,.0f}" if factor < 1e6 else f"{factor:.2g}"
        message = (
            f"anchor latency {lat[i] * 1e3:.4g} ms per step{_where(rows, n)} is about {shown}x "
            f"too {'short' if is_short else 'long'} for this profile ({busy[i] / 1e3:.4g} ms of "
            f"device time over {steps[i]} step(s)); no step count or unit mix-up explains that. "
            "Give the measured latency of one training step of the profiled workload, or leave "
            "it out"
        )
        out.append(Finding("error", "latency_off", message, rows))
    return out


def _unit_findings(ratio, ratio2, busy, steps, lat, n) -> list[Finding]:
    """Errors for latencies about 1000x off: seconds typed as milliseconds, or the reverse."""
    out = []
    with np.errstate(invalid="ignore"):
        fits_ms = (ratio2 / UNIT_FACTOR >= RATIO_LOW) & (ratio2 / UNIT_FACTOR <= RATIO_HIGH)
        fits_s = (ratio2 * UNIT_FACTOR >= RATIO_LOW) & (ratio2 * UNIT_FACTOR <= RATIO_HIGH)
    per_step = f"{RATIO_LOW / DEFAULT_STEPS:.2f}-{RATIO_HIGH / DEFAULT_STEPS:.2f}x"
    for mask, short in ((fits_ms, True), (fits_s, False)):
        if not mask.any():
            continue
        rows = _rows(mask)
        i = rows[0]
        ms = lat[i] * 1e3
        meant = ms * UNIT_FACTOR if short else ms / UNIT_FACTOR
        what = "seconds given as milliseconds" if short else "milliseconds given as seconds"
        message = (
            f"anchor latency {format_number(ms)} ms per step{_where(rows, n)}: {what}? It is about "
            f"{UNIT_FACTOR:,.0f}x too {'short' if short else 'long'} for this profile "
            f"({busy[i] / 1e3:.1f} ms of device time over {steps[i]} step(s), {format_number(ratio[i])}x "
            f"the latency, where training profiles show {per_step} per step); as "
            f"{format_number(meant)} ms it fits. Give that (--anchor-latency-ms {meant:.4g} on the command line, the "
            f"unit 'ms' in the app, or batch_latency_s {meant / 1e3:.4g} in a file)"
        )
        out.append(Finding("error", "latency_units", message, rows))
    return out
