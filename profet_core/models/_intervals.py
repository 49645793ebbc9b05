"""Prediction intervals: member spread, novelty-scaled split-conformal calibration, novelty bands.

Used at prediction time (:func:`member_spread`, :func:`interval_scale`) and by validation
(:func:`interval_quantiles`, :func:`novelty_errors`); it has no cross-validation of its own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Floor of the member spread, as a share of its median, in normalised intervals: keeps rows
#: whose members happen to agree from getting zero-width intervals.
SPREAD_FLOOR = 0.25
#: Columns of :func:`interval_quantiles` (and of the artifacts' intervals.csv).
INTERVAL_COLUMNS = [
    "anchor",
    "target",
    "estimator",
    "with_latency",
    "q_lo",
    "q_hi",
    "eps",
    "novelty_ref",
    "coverage",
]
_ROW_KEY = ["anchor", "target", "architecture", "exp", "input_size", "batch_size", "with_latency"]


def member_spread(members: np.ndarray) -> np.ndarray:
    """Spread of an ensemble's members per row: std of their log predictions (NaNs skipped).

    Parameters
    ----------
    members : ndarray of shape (n_rows, n_members)
        Member predictions (seconds, > 0; NaN where a member does not apply).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        logs = np.log(np.maximum(members, 1e-9))
    logs = np.where(np.isnan(members), np.nan, logs)
    count = (~np.isnan(logs)).sum(axis=1)
    n = np.maximum(count, 1)[:, None]
    mean = np.nansum(logs, axis=1, keepdims=True) / n
    spread = np.sqrt(np.nansum((logs - mean) ** 2, axis=1, keepdims=True) / n)[:, 0]
    return np.where(count >= 2, spread, np.nan)


def _spreads(oof: pd.DataFrame) -> pd.Series:
    """Member spread of every out-of-fold row of a method that has members (NaN otherwise)."""
    out = pd.Series(np.nan, index=oof.index)
    est = oof["estimator"]
    for method in est[~est.str.contains(":")].unique():
        mem = oof[est.str.startswith(method + ":")]
        if mem.empty:
            continue
        wide = mem.pivot_table(
            index=_ROW_KEY, columns="estimator", values="predicted_s", dropna=False
        )
        spread = pd.Series(member_spread(wide.to_numpy()), index=wide.index, name="spread")
        rows = oof[est == method]
        joined = rows[_ROW_KEY].merge(spread.reset_index(), on=_ROW_KEY, how="left")
        out.loc[rows.index] = joined["spread"].to_numpy()
    return out


def interval_scale(s, eps, n, n_ref):
    """Per-row interval scale: member spread plus floor, times ``1 + relative novelty``."""
    scale = s + eps if s is not None else 1.0
    return scale * (1 + n / n_ref) if n is not None else scale


def _conformal_bounds(
    r: np.ndarray, s: np.ndarray | None, n: np.ndarray | None, lo_q: float, hi_q: float
) -> tuple[float, float, float, float]:
    """Quantiles of log errors, normalised by member spread ``s`` (plus its floor) and by
    novelty ``n`` (relative to its median), each if given."""
    eps = SPREAD_FLOOR * float(np.median(s)) if s is not None else np.nan
    n_ref = float(np.median(n)) if n is not None else np.nan
    ql, qh = np.quantile(r / interval_scale(s, eps, n, n_ref), [lo_q, hi_q])
    return float(ql), float(qh), eps, n_ref


def interval_quantiles(oof: pd.DataFrame, level: float = 0.8) -> pd.DataFrame:
    """Calibrate prediction intervals from out-of-fold log errors, and measure their coverage.

    For an ensemble, an interval widens with the disagreement of its members (an unusual
    network makes the trees and the linear model disagree) and with the profile's novelty (its
    distance from the training profiles, :class:`ProfileNovelty`; held-out CNNs far from the
    rest are predicted worst). With ``s`` the member spread (:func:`member_spread`),
    ``eps = SPREAD_FLOOR * median(s)``, ``n`` the novelty and ``n_ref`` its median, the
    interval of a prediction ``p`` is ``[p * exp(q_lo * c), p * exp(q_hi * c)]`` with
    ``c = (s + eps) * (1 + n / n_ref)``, where ``q_lo``, ``q_hi`` are the ``(1 - level) / 2``
    and ``(1 + level) / 2`` quantiles of ``log(measured / predicted) / c`` over the out-of-fold
    rows of the same pair, estimator and anchor-latency setting. Without members, ``s + eps``
    is 1; without novelty, so is ``1 + n / n_ref``. Coverage is measured per architecture:
    each architecture's rows are checked against an interval calibrated on the other
    architectures only.

    Parameters
    ----------
    oof : pandas.DataFrame
        Output of :func:`cross_validate` (a ``novelty`` column is optional).
    level : float
        Nominal coverage, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        ``anchor, target, estimator, with_latency, q_lo, q_hi, eps, novelty_ref, coverage``
        (coverage in 0..1; ``eps``/``novelty_ref`` NaN where not used).
    """
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    oof = oof.dropna(subset=["predicted_s"])
    spreads = _spreads(oof)
    novelty = oof["novelty"] if "novelty" in oof else pd.Series(np.nan, index=oof.index)
    rows = []
    for key, g in oof.groupby(["anchor", "target", "estimator", "with_latency"], sort=True):
        r = np.log(g["measured_s"].to_numpy() / np.maximum(g["predicted_s"].to_numpy(), 1e-9))
        s = spreads.loc[g.index].to_numpy()
        n = novelty.loc[g.index].to_numpy(dtype=float)
        s = s if np.isfinite(s).all() and np.median(s) > 0 else None
        n = n if np.isfinite(n).all() and np.median(n) > 0 else None
        arch = g["architecture"].to_numpy()

        inside = np.zeros(len(r), dtype=bool)
        for a in np.unique(arch):
            held = arch == a
            if held.all():
                continue
            ql, qh, eps, n_ref = _conformal_bounds(
                r[~held],
                None if s is None else s[~held],
                None if n is None else n[~held],
                lo_q,
                hi_q,
            )
            scale = interval_scale(
                None if s is None else s[held], eps, None if n is None else n[held], n_ref
            )
            inside[held] = (r[held] >= ql * scale) & (r[held] <= qh * scale)
        q_lo, q_hi, eps, n_ref = _conformal_bounds(r, s, n, lo_q, hi_q)
        rows.append((*key, q_lo, q_hi, eps, n_ref, float(inside.mean())))
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


#: Bands of relative novelty (novelty / its median over held-out rows) for :func:`novelty_errors`.
NOVELTY_BANDS = (0.0, 0.75, 1.25, 2.0, np.inf)
#: Relative novelty from which the CLI and the app warn (held-out CNNs above it were predicted
#: about twice as badly as the rest: docs/accuracy.md, "Error by novelty").
NOVELTY_WARN = 1.25


def novelty_errors(oof: pd.DataFrame, bands=NOVELTY_BANDS) -> pd.DataFrame:
    """Out-of-fold error by how unusual the held-out profile was.

    Parameters
    ----------
    oof : pandas.DataFrame
        Output of :func:`cross_validate`; only rows with a finite ``novelty`` count.
    bands : sequence of float
        Edges of the relative-novelty bands (novelty divided by its median over the rows of the
        same pair, estimator and anchor-latency setting, as in the intervals).

    Returns
    -------
    pandas.DataFrame
        ``estimator, with_latency, band, novelty_lo, novelty_hi, share_pct, mape_pct, n``:
        per band, the share of rows in it and their MAPE, pooled over pairs.
    """
    cols = [
        "estimator",
        "with_latency",
        "band",
        "novelty_lo",
        "novelty_hi",
        "share_pct",
        "mape_pct",
        "n",
    ]
    if "novelty" not in oof:
        return pd.DataFrame(columns=cols)
    d = oof[np.isfinite(oof["novelty"].to_numpy(dtype=float))].copy()
    if d.empty:
        return pd.DataFrame(columns=cols)
    keys = ["anchor", "target", "estimator", "with_latency"]
    d["rel"] = d["novelty"] / d.groupby(keys)["novelty"].transform("median")
    d["ape"] = 100 * (d["predicted_s"] - d["measured_s"]).abs() / d["measured_s"]
    rows = []
    for (est, wl), g in d.groupby(["estimator", "with_latency"], sort=True):
        for lo, hi in zip(bands[:-1], bands[1:], strict=True):
            inb = g[(g["rel"] >= lo) & (g["rel"] < hi)]
            label = f"{lo:g}-{hi:g}" if np.isfinite(hi) else f">= {lo:g}"
            rows.append(
                (
                    est,
                    bool(wl),
                    label,
                    lo,
                    hi,
                    100 * len(inb) / len(g),
                    float(inb["ape"].mean()) if len(inb) else np.nan,
                    len(inb),
                )
            )
    return pd.DataFrame(rows, columns=cols)


def novelty_band(bands, novelty: float, with_latency: bool, method: str) -> dict | None:
    """The validation band of a relative novelty: ``band``, ``share_pct``, ``mape_pct``."""
    if bands is None or bands.empty or not np.isfinite(novelty):
        return None
    sel = bands[
        (bands["estimator"] == method)
        & (bands["with_latency"] == with_latency)
        & (bands["novelty_lo"] <= novelty)
        & (novelty < bands["novelty_hi"])
    ]
    if sel.empty:
        return None
    row = sel.iloc[0]
    return {"band": str(row["band"]), **{k: float(row[k]) for k in ("share_pct", "mape_pct")}}


def novelty_bands(bands, novelty, with_latency, method: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`novelty_band` for many rows at once: one pass per band, not one lookup per row.

    Parameters
    ----------
    bands : pandas.DataFrame or None
        The validation's novelty table (``estimator, with_latency, novelty_lo, novelty_hi,
        band, mape_pct``).
    novelty : ndarray of shape (n,)
        Relative novelty per row; NaN where no band is wanted.
    with_latency : ndarray of bool, shape (n,)
    method : str

    Returns
    -------
    band : ndarray of object, shape (n,)
        The band's label, None where none applies.
    mape_pct : ndarray of float, shape (n,)
        Its mean absolute error (%), NaN where none applies.
    """
    novelty = np.asarray(novelty, dtype=float)
    with_latency = np.asarray(with_latency, dtype=bool)
    band = np.full(len(novelty), None, dtype=object)
    mape = np.full(len(novelty), np.nan)
    todo = np.isfinite(novelty)
    if bands is None or bands.empty or not todo.any():
        return band, mape
    for row in bands[bands["estimator"] == method].itertuples(index=False):
        with np.errstate(invalid="ignore"):
            hit = todo & (with_latency == bool(row.with_latency))
            hit &= (row.novelty_lo <= novelty) & (novelty < row.novelty_hi)
        band[hit], mape[hit] = str(row.band), float(row.mape_pct)
        todo &= ~hit  # the first band that holds a row is its band, as in novelty_band
    return band, mape
