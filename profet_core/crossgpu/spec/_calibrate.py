"""Intervals that hold for a user's own setup.

The published- and spec-based intervals (FP32 speed-ups, AMP gains, N-GPU scaling) were set on
errors with one GPU left out, while the published rows come from a few sources (repository and
framework): a user's own training is another source. One factor ``s`` per kind of answer scales
the widths set leave-one-GPU-out. FP32 speed-ups (``pooled``, docs/interval_both_coverage_rule.md):
``s`` is the 80% quantile of |log error| / width pooled over the GPU-out and the source-out rows,
each side weighing one half. AMP gains and N-GPU scaling (``two-way``, no form met that rule):
the factor nearest 80% with both coverages in 75-85%, else the smallest with the source-out side
in the band. The factor, both coverages (with every width parameter fitted on all rows, and
cross-fitted: without the judged row's GPU or source, :func:`crossfit`) and the spread between
sources are kept in the artifacts (``source_calibration``) and printed by
``bench/claims/validation.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The coverage band both leave-one-out schemes should land in (of an 80% interval).
BAND = (0.75, 0.85)
#: Factors tried (the widths set leave-one-GPU-out times s).
GRID = np.round(np.arange(0.5, 8.0001, 0.01), 2)


def coverage(err, hw, s: float = 1.0) -> float:
    """Share of rows whose |log error| ``err`` lies within ``s`` times their half-width."""
    err, hw = np.asarray(err, float), np.asarray(hw, float)
    ok = np.isfinite(err) & np.isfinite(hw)
    return float(np.mean(err[ok] <= s * hw[ok])) if ok.any() else float("nan")


def two_way_scale(err_gpu, hw_gpu, err_source, hw_source, level: float = 0.8) -> dict:
    """The factor on the half-widths that brings both coverages into :data:`BAND`, nearest
    ``level``; where none does, the smallest with the source-out coverage in the band (a
    user's own setup is another source), its GPU-out coverage then above the band.

    Parameters
    ----------
    err_gpu, hw_gpu : array of shape (n,)
        |log error| of each row with its GPU left out, and the half-width its answer gets.
    err_source, hw_source : array of shape (m,)
        The same with its source left out.

    Returns
    -------
    dict
        ``scale`` (s), ``coverage_gpu`` and ``coverage_source`` at s, and both at s = 1
        (``coverage_gpu_before``, ``coverage_source_before``).
    """
    cg = np.array([coverage(err_gpu, hw_gpu, s) for s in GRID])
    cs = np.array([coverage(err_source, hw_source, s) for s in GRID])
    both = (cg >= BAND[0]) & (cg <= BAND[1]) & (cs >= BAND[0]) & (cs <= BAND[1])
    if both.any():  # the factor nearest level on the worse side; ties: the narrower interval
        worst = np.where(both, np.maximum(np.abs(cg - level), np.abs(cs - level)), np.inf)
        i = int(np.flatnonzero(worst == worst.min())[0])
    else:  # no factor meets both: a user's setup is another source, so that side first
        ok = np.flatnonzero(cs >= BAND[0])
        i = int(ok[0]) if len(ok) else len(GRID) - 1
    return {
        "scale": float(GRID[i]),
        "coverage_gpu": float(cg[i]),
        "coverage_source": float(cs[i]),
        "coverage_gpu_before": coverage(err_gpu, hw_gpu),
        "coverage_source_before": coverage(err_source, hw_source),
    }


def weighted_quantile(values, weights, level: float) -> float:
    """The ``level`` quantile of ``values`` under row ``weights`` (the first value whose
    cumulative weight reaches ``level`` of the total)."""
    order = np.argsort(values)
    cum = np.cumsum(np.asarray(weights)[order])
    return float(np.asarray(values)[order][np.searchsorted(cum, level * cum[-1])])


def pooled_scale(
    err_gpu, hw_gpu, err_source, hw_source, w_gpu=None, w_source=None, level: float = 0.8
) -> dict:
    """The ``level`` quantile of |log error| / half-width over both sides' rows, each side
    weighing one half (``w_*``: row weights within a side, default equal); the same keys as
    :func:`two_way_scale`."""
    sides = [np.asarray(a, float) for a in (err_gpu, hw_gpu, err_source, hw_source)]
    wg = np.ones(len(sides[0])) if w_gpu is None else np.asarray(w_gpu, float)
    ws = np.ones(len(sides[2])) if w_source is None else np.asarray(w_source, float)
    scores = np.concatenate([sides[0] / sides[1], sides[2] / sides[3]])
    w = np.concatenate([0.5 * wg / wg.sum(), 0.5 * ws / ws.sum()])
    ok = np.isfinite(scores)
    s = weighted_quantile(scores[ok], w[ok], level)
    return {
        "scale": float(s),
        "form": "pooled",
        "coverage_gpu": coverage(sides[0], sides[1], s),
        "coverage_source": coverage(sides[2], sides[3], s),
        "coverage_gpu_before": coverage(sides[0], sides[1]),
        "coverage_source_before": coverage(sides[2], sides[3]),
    }


def crossfit(side, gpu, source, err, fit) -> dict:
    """Cross-fitted coverages: each GPU-side row judged with half-widths ``fit(train, test)``
    (boolean masks; every parameter from the ``train`` rows) fitted without any row of its GPU,
    each source-side row without any row of its source.

    Parameters
    ----------
    side : array of shape (n,)
        ``"gpu"`` or ``"source"``: which leave-one-out scheme made the row's error.
    gpu, source : array of shape (n,)
        Each row's GPU and source.
    err : array of shape (n,)
        |log error| per row.

    Returns
    -------
    dict
        ``crossfit_gpu`` and ``crossfit_source``: shares of each side's judged rows inside (a
        row is judged where both sides keep rows to fit on; a side without one is left out).
    """
    side, gpu, source = (np.asarray(a, object) for a in (side, gpu, source))
    err = np.asarray(err, float)
    inside = np.full(len(err), np.nan)
    for name, keys in (("gpu", gpu), ("source", source)):
        for key in pd.unique(keys[side == name]):
            test, train = (side == name) & (keys == key), keys != key
            if (train & (side == "gpu")).any() and (train & (side == "source")).any():
                hw = np.asarray(fit(train, test), float)
                inside[test] = np.where(np.isfinite(hw), err[test] <= hw, np.nan)
    # rows with nothing left to fit their width on are not judged; no judged row: no number
    out = {}
    for name in ("gpu", "source"):
        judged = inside[side == name]
        if np.isfinite(judged).any():
            out[f"crossfit_{name}"] = float(np.nanmean(judged))
    return out


def source_spread(signed_log_err, sources) -> list[float]:
    """[lowest, highest] median predicted/published ratio of the sources (log errors of one
    source left out, grouped by source): how far apart the sources' own levels are."""
    med = pd.Series(np.asarray(signed_log_err, float)).groupby(np.asarray(sources)).median()
    return [float(np.exp(med.min())), float(np.exp(med.max()))]


def calibration(
    err_gpu, hw_gpu, signed_source, hw_source, sources, form="two-way", w_gpu=None, w_source=None
) -> dict:
    """:func:`two_way_scale` (``form`` two-way) or :func:`pooled_scale` (``pooled``, with the
    row weights ``w_*``) plus the rows per side and :func:`source_spread` (``spread``)."""
    if form == "pooled":
        out = pooled_scale(err_gpu, hw_gpu, np.abs(signed_source), hw_source, w_gpu, w_source)
    else:
        out = two_way_scale(err_gpu, hw_gpu, np.abs(signed_source), hw_source)
        out["form"] = "two-way"
    out.update(
        rows_gpu=int(len(err_gpu)),
        rows_source=int(len(signed_source)),
        sources=int(len(set(sources))),
        spread=source_spread(signed_source, sources),
    )
    return out


def source_note(model, precision: str, multi_gpu: bool) -> str | None:
    """What the published- and spec-based intervals of an answer rest on: the spread between
    the published sources and the coverage with one left out (None for artifacts made before
    the source calibration)."""
    parts = []
    cal = getattr(model, "source_calibration_", {}).get("fp32")
    kinds = [("FP32 speed-up", cal)]
    if precision == "amp":
        kinds.append(
            ("AMP gain", (getattr(model, "amp_state_", None) or {}).get("source_calibration"))
        )
    if multi_gpu:
        kinds.append(
            ("N-GPU scaling", (getattr(model, "dp_state_", None) or {}).get("source_calibration"))
        )
    for what, c in kinds:
        if c:
            lo, hi = c["spread"]
            # cross-fitted where the artifacts have it (no row, GPU or source sets its own width)
            xfit = "crossfit_source" in c and "crossfit_gpu" in c
            pre = "crossfit_" if xfit else "coverage_"
            cs, cg = c[pre + "source"], c[pre + "gpu"]
            how = " (cross-fitted)" if xfit else ""
            parts.append(
                f"{what}: the {c['sources']} sources' own levels spread x{lo:.2f}..x{hi:.2f}; "
                f"80% intervals cover {100 * cs:.0f}% with a source left out, "
                f"{100 * cg:.0f}% with a GPU left out{how}"
                + (f", short of the {100 * BAND[0]:.0f}% aimed at" if cs < BAND[0] else "")
            )
    if not parts:
        return None
    return (
        "published- and spec-based intervals are widened for a new source (a user's "
        "framework, version and settings are another source than the published ones): "
        + "; ".join(parts)
        + "."
    )
