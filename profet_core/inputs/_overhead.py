"""How many training steps a profile covers, told from the profile alone.

A profile taken over 10 steps with nobody saying so has every op time 5x too large, and without
the anchor's latency nothing else shows it. Four host op types are fixed costs of Keras's
training loop, run once per step whatever the CNN, batch or input size (reading the next batch,
writing the step's TensorBoard summaries): their times count the steps. A profile's *overhead
ratio* is the lower median over those ops of ``time * 2 / steps`` divided by the op's median in
the 2-step training profiles of the anchor instance; it is about 1 for a profile whose ``steps``
is right and about ``steps_taken / steps_declared`` otherwise. The *lower* median (2nd smallest
of 4) keeps two inflated ops (a slow input pipeline inflates ``Host_Dataset`` and
``Host_IteratorGetNext``) from raising it. ``bench/studies/steps_signal.py`` validates it
leave-one-architecture-out with these functions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._schema import DEFAULT_STEPS, RESERVED_ARCHITECTURES, STEPS_ASSUMED, STEPS_COLUMN
from ._rules import check_steps
from ._sanity import SAY_STEPS, Finding, _rows, _where, say_steps

#: Per-step overhead ops of Keras's training loop: input pipeline and TensorBoard summaries.
OVERHEAD_OPS = (
    "Host_Dataset",
    "Host_IteratorGetNext",
    "Host_WriteSummary",
    "Host_FlushSummaryWriter",
)
#: Fewest overhead ops a profile must have (time > 0) for a verdict.
MIN_OPS = 2
#: Quantiles of the training ratios the limits start from (high, low), and the widening factor
#: (the same 30% as the latency check's RATIO_HIGH).
QUANTILE_HIGH = 0.995
QUANTILE_LOW = 0.005
WIDEN = 1.3
#: An overhead ratio beyond this is shown as "over 1000x" (and below its inverse as "under
#: 1/1000 of"): 2,000 steps or more, past what --steps takes (1,000) and any profile taken on
#: purpose; a number such as 22648517655x says nothing more and reads as a measurement.
ABSURD_RATIO = 1000.0
#: Reference key pooled over every instance: for an anchor without a reference of its own.
POOLED = "*"


def overhead_ratio(profiles: pd.DataFrame, reference, steps=DEFAULT_STEPS) -> np.ndarray:
    """How many times a 2-step profile's per-step overhead each profile holds.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Shape (n, ...): op columns (us over ``steps`` steps); absent overhead ops count as 0.
    reference : array of shape (4,) or (n, 4)
        Median time of each of :data:`OVERHEAD_OPS` in 2-step profiles (us; NaN: unknown).
    steps : int or array of shape (n,)
        Steps each profile says it covers.

    Returns
    -------
    numpy.ndarray of shape (n,)
        Lower median (the ``(m - 1) // 2``-th smallest of the ``m`` ops present) of
        ``time * 2 / steps / reference``; NaN where fewer than :data:`MIN_OPS` are present.
    """
    n = len(profiles)
    ref = np.broadcast_to(np.asarray(reference, dtype=float), (n, len(OVERHEAD_OPS)))
    # Each overhead op's column (absent: 0), NaN as 0, without a reindexed copy of the frame.
    times = np.column_stack([_zero_filled(profiles, c, n) for c in OVERHEAD_OPS])
    steps = np.broadcast_to(np.asarray(steps, dtype=float), (n,))
    present = (times > 0) & np.isfinite(ref) & (ref > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        per2 = times * DEFAULT_STEPS / steps[:, None] / ref
    ratio = np.sort(np.where(present, per2, np.inf), axis=1)  # absent ops sort last
    m = present.sum(axis=1)
    low = ratio[np.arange(n), np.maximum(m - 1, 0) // 2]
    return np.where(m >= MIN_OPS, low, np.nan)


def _zero_filled(profiles: pd.DataFrame, name: str, n: int) -> np.ndarray:
    """Column ``name`` as floats, missing values (and an absent column) as 0."""
    if name not in profiles.columns:
        return np.zeros(n)
    col = profiles[name]
    if col.dtype.kind in "iuf":
        values = col.to_numpy(dtype=float)
        return np.where(np.isnan(values), 0.0, values)
    return col.fillna(0.0).to_numpy(dtype=float)


def learn_step_reference(profiles: pd.DataFrame, reserved=RESERVED_ARCHITECTURES) -> dict:
    """Per-instance overhead references and alarm limits from 2-step training profiles.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Training profiles: ``instance``, ``model`` and op columns (us over 2 steps). Rows of
        ``reserved`` are left out.
    reserved : sequence of str
        Architectures (``model``) never fitted on (default: the data's held-out VGG16 and
        InceptionV3: an independent check of the signal); recorded in the result.

    Returns
    -------
    dict
        ``{"ops": [...], "reserved": [...], "instances": {name: {"reference_us": [4 floats or
        None], "high": float, "low": float}}}`` with a :data:`POOLED` entry; ``high``/``low``
        are the q99.5%/q0.5% of the ratio on these profiles, widened by :data:`WIDEN` (the JSON
        model.json stores). Empty ``instances`` when no profile has the overhead ops.
    """
    fit = profiles[~profiles["model"].isin(list(reserved))]
    ops = fit.reindex(columns=list(OVERHEAD_OPS)).astype(float)
    ops = ops.where(ops > 0)  # an absent op is not a 0 us reference
    per = ops.groupby(fit["instance"].to_numpy()).median()
    per.loc[POOLED] = ops.median()
    own = per.loc[fit["instance"].to_numpy()].to_numpy()
    ratio = pd.Series(overhead_ratio(fit, own), index=fit.index)
    out = {}
    for name in per.index:
        # The pooled limits: every instance's ratios to its own reference (as the spec's).
        r = ratio.to_numpy() if name == POOLED else ratio[fit["instance"] == name].to_numpy()
        r = r[np.isfinite(r)]
        if r.size == 0:
            continue
        out[str(name)] = {
            "reference_us": [None if np.isnan(v) else round(float(v), 4) for v in per.loc[name]],
            "high": round(float(np.quantile(r, QUANTILE_HIGH) * WIDEN), 4),
            "low": round(float(np.quantile(r, QUANTILE_LOW) / WIDEN), 4),
        }
    return {"ops": list(OVERHEAD_OPS), "reserved": list(reserved), "instances": out}


def reference_for(stored: dict | None, instance: str | None):
    """The reference of ``instance`` (else the pooled one) from :func:`learn_step_reference`.

    Returns
    -------
    tuple or None
        ``(reference_us array of shape (4,), high, low, pooled)``; None when ``stored`` holds
        none (artifacts trained before the check, or data without the overhead ops).
    """
    entries = (stored or {}).get("instances") or {}
    pooled = instance not in entries
    entry = entries.get(POOLED if pooled else instance)
    if entry is None:
        return None
    ref = np.array([np.nan if v is None else float(v) for v in entry["reference_us"]])
    return ref, float(entry["high"]), float(entry["low"]), pooled


def ratio_words(r: float) -> str:
    """An overhead ratio for people: ``12.3x``, ``0.25x``, or past :data:`ABSURD_RATIO`
    ``over 1000x`` / ``under 1/1000 of``."""
    if r > ABSURD_RATIO:
        return f"over {ABSURD_RATIO:.0f}x"
    if r < 1 / ABSURD_RATIO:
        return f"under 1/{ABSURD_RATIO:.0f} of"
    return f"{r:.{1 if r >= 1 else 2}f}x"


def _too_many(r: float, s: int, k: int, limit: str, measured: bool) -> str:
    """The rest of a "more steps than said" warning: the step count it suggests and what
    follows if it is wrong, or, past :data:`ABSURD_RATIO`, that no step count explains it."""
    if r > ABSURD_RATIO:
        return (
            f"{limit}: more than any step count explains (--steps takes "
            "at most 1000). Check that the op times are microseconds over the profile's "
            f"{s} steps, and whether these host ops stalled (a blocked input pipeline or summary "
            "writer inflates them alone); "
            + (
                "the prediction rests on your measured anchor latency, so its scale holds, but "
                "the op mix it reads may be off"
                if measured
                else "if every op time is inflated as these are, the prediction is far too high"
            )
        )
    scale = (
        "the prediction rests on your measured anchor latency, so its scale holds, but the op "
        "mix it reads is off"
        if measured
        else f"the prediction is about {r:.0f}x too high"
    )
    return (
        f"{limit}: it looks taken over about {k:,} training steps, not "
        f"{s}. If so, {say_steps(k)}; otherwise every op time is read as {s} steps' worth and "
        + scale
    )


def steps_findings(profiles: pd.DataFrame, anchor, stored, measured: bool = False) -> list[Finding]:
    """Warnings for profiles whose per-step overhead ops say another step count.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Shape (n, ...): op columns (us over ``steps``), ``steps`` (2 where absent).
    anchor : str
        Instance the profiles were taken on (its reference, else the pooled one).
    stored : dict or None
        From :func:`learn_step_reference` (model.json's ``steps_reference``).
    measured : bool
        The anchor's latency was measured (given or in the profile): the prediction's scale
        rests on it, not on the op times.

    Returns
    -------
    list of Finding
        ``steps_unstated`` warnings: above the instance's ``high`` limit (more steps than said)
        and below its ``low`` one (fewer); empty without a reference or a verdict.
    """
    n = len(profiles)
    steps = np.full(n, DEFAULT_STEPS)
    if STEPS_COLUMN in profiles.columns:
        steps = check_steps(profiles[STEPS_COLUMN].to_numpy(), "profiles")
    found = reference_for(stored, anchor)
    if found is None:
        return []
    ref, high, low, pooled = found
    ratio = overhead_ratio(profiles, ref, steps)
    on = "the trained instances (pooled)" if pooled else str(anchor)
    ops = ", ".join(OVERHEAD_OPS)
    out = []
    with np.errstate(invalid="ignore"):
        masks = ((ratio > high, True), (ratio < low, False))
    for mask, more in masks:
        if not mask.any():
            continue
        rows = _rows(mask)
        i = rows[0]
        r, s = float(ratio[i]), int(steps[i])
        k = max(1, round(min(r, ABSURD_RATIO * 10) * s))
        head = (
            f"the profile's per-step overhead ops ({ops}) take {ratio_words(r)} what "
            f"{s}-step profiles on {on} show "
        )
        if more:
            text = _too_many(r, s, k, f"(up to {high:.2f}x in training){_where(rows, n)}", measured)
        else:
            text = (
                f"(from {low:.2f}x in training){_where(rows, n)}: it looks taken over about "
                f"{k:,} step(s), not {s}; if so, {say_steps(k)}"
            )
        out.append(Finding("warning", "steps_unstated", head + text, rows))
    return out


def steps_assumed_note(profiles: pd.DataFrame) -> Finding | None:
    """A note that 2 steps were assumed for rows whose input gave no step count, else None.

    Parameters
    ----------
    profiles : pandas.DataFrame
        As ``parse_profile`` returns it: ``attrs[STEPS_ASSUMED]`` lists those rows.

    Returns
    -------
    Finding or None
        ``steps_assumed`` (a warning: said once, for every such row).
    """
    rows = tuple(profiles.attrs.get(STEPS_ASSUMED, ()))
    if not rows:
        return None
    message = (
        f"the profile{_where(rows, len(profiles))} does not say how many training steps it "
        f"covers, so {DEFAULT_STEPS} (PROFET's convention: two consecutive steps traced) were "
        f"assumed; if it covers another number, say so ({SAY_STEPS.format(k='N')})"
    )
    return Finding("warning", "steps_assumed", message, rows)
