"""Leave-one-architecture-out validation of the one-point scaler against three baselines, its
intervals, and the training entry point."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._model import INTERVAL_COLUMNS, POWER, OnePointScaler, one_point_pairs

#: Variants validated: the model with and without the anchor profile, then the baselines.
VARIANTS = ("profile", "latency only", "linear in work", "median ratio", "PROFET quadratic")
#: Central share of the held-out errors the intervals cover.
INTERVAL_LEVEL = 0.8
_CURVE = ["target", "model", "other", "s0", "s1"]


def _median_ratio(train: pd.DataFrame, test: pd.DataFrame, by: str) -> np.ndarray:
    """Median training ``log(L1 / L0)`` of the same target and sizes (linear where none)."""
    y = np.log(train["L1_s"] / train["L0_s"])
    med = y.groupby([train["target"], train["s0"], train["s1"]]).median()
    idx = pd.MultiIndex.from_frame(test[["target", "s0", "s1"]])
    out = med.reindex(idx).to_numpy()
    return np.where(np.isnan(out), _linear(test, by), out)


def _linear(test: pd.DataFrame, by: str) -> np.ndarray:
    return POWER[by] * np.log(test["s1"].to_numpy() / test["s0"].to_numpy())


def _quadratic(train: pd.DataFrame, test: pd.DataFrame, by: str) -> np.ndarray:
    """PROFET's degree-2 polynomial in the size, fitted per target to the training curves
    normalised by their latency at the largest size, taken through the one given point."""
    out = _linear(test, by)
    hi = train["s1"].max()
    for target, t in test.groupby("target"):
        ref = train[(train["target"] == target) & (train["s0"] == hi)]
        # Each curve is 1 at the largest size itself (pairs leave s1 == s0 out).
        x = np.concatenate([ref["s1"] / hi, np.ones(len(ref))])
        if len(np.unique(x)) < 3:
            continue
        y = np.concatenate([ref["L1_s"] / ref["L0_s"], np.ones(len(ref))])
        coef = np.polyfit(x, y, 2)  # sizes over the largest keep it well conditioned
        q0, q1 = np.polyval(coef, t["s0"] / hi), np.polyval(coef, t["s1"] / hi)
        ok = (q0 > 0) & (q1 > 0)
        pos = test.index.get_indexer(t.index)
        out[pos[ok]] = np.log(q1[ok] / q0[ok])
    return out


def _fold(train, test, by, params) -> dict[str, np.ndarray]:
    preds = {}
    for variant, use_profile in (("profile", True), ("latency only", False)):
        model = OnePointScaler(by=by, use_profile=use_profile, **params).fit(train)
        *sizes, free = model._columns(test)
        preds[variant] = _per_target(model, test, sizes, free)
    preds["linear in work"] = _linear(test, by)
    preds["median ratio"] = _median_ratio(train, test, by)
    preds["PROFET quadratic"] = _quadratic(train, test, by)
    return preds


def _per_target(model, test, cols, free) -> np.ndarray:
    out = np.full(len(test), np.nan)
    targets = test["target"].to_numpy()
    for target in np.unique(targets):
        rows = targets == target
        part = [c[rows] for c in cols]
        out[rows] = model.predict_log_ratio(target, *part, None if free is None else free[rows])
    return out


def cross_validate_one_point(dataset, by: str, progress=None, **params) -> pd.DataFrame:
    """Out-of-fold ``log(L1 / L0)`` predictions, leaving one architecture out at a time.

    Returns
    -------
    pandas.DataFrame
        The pairs' curve key and ``anchor``, ``y`` (measured log ratio), and one column of
        predicted log ratios per :data:`VARIANTS`. The latency-only and baseline predictions do
        not use the anchor, so they repeat across its rows.
    """
    pairs = one_point_pairs(dataset, by)
    preds = {v: np.full(len(pairs), np.nan) for v in VARIANTS}
    archs = sorted(pairs["model"].unique())
    for i, arch in enumerate(archs):
        held = (pairs["model"] == arch).to_numpy()
        for variant, p in _fold(pairs[~held], pairs[held], by, params).items():
            preds[variant][held] = p
        if progress is not None:
            progress(i + 1, len(archs), f"one-point scaler ({by}), {arch} left out")
    out = pairs[[*_CURVE, "anchor"]].copy()
    out["y"] = np.log(pairs["L1_s"] / pairs["L0_s"]).to_numpy()
    return out.assign(**preds, by=by)


def _ape_pct(oof: pd.DataFrame, variant: str) -> pd.Series:
    return 100 * np.abs(np.exp(oof[variant] - oof["y"]) - 1)


def summarize_one_point(oof: pd.DataFrame) -> pd.DataFrame:
    """Per dimension, target instance and variant: ``mape_pct`` (mean absolute % error of the
    latency at the other sizes), ``median_ape_pct``, ``p90_ape_pct``, ``mape_1step_pct`` (sizes
    at most 2x away from the given one), and ``n`` (pairs; profile rows count once per anchor).
    """
    rows = []
    near = np.abs(np.log2(oof["s1"] / oof["s0"])) <= 1.0 + 1e-9
    for variant in VARIANTS:
        ape = _ape_pct(oof, variant)
        for (by, target), idx in oof.groupby(["by", "target"]).groups.items():
            a = ape.loc[idx]
            rows.append(
                {
                    "by": by,
                    "instance": target,
                    "variant": variant,
                    "mape_pct": a.mean(),
                    "median_ape_pct": a.median(),
                    "p90_ape_pct": a.quantile(0.9),
                    "mape_1step_pct": a[near.loc[idx]].mean(),
                    "n": len(a),
                }
            )
    return pd.DataFrame(rows)


def interval_table(oof: pd.DataFrame, variant: str, level: float = INTERVAL_LEVEL) -> pd.DataFrame:
    """Log-space quantiles of ``measured - predicted`` per target and size step (the
    :data:`INTERVAL_COLUMNS` of :class:`OnePointScaler`); ``step`` is ``|log2(s1/s0)|``
    rounded up to a whole doubling."""
    step = np.ceil(np.abs(np.log2(oof["s1"] / oof["s0"])) - 1e-9).clip(lower=1)
    resid = oof["y"] - oof[variant]
    q = resid.groupby([oof["target"], step]).quantile([(1 - level) / 2, (1 + level) / 2])
    table = q.unstack().reset_index()
    table.columns = list(INTERVAL_COLUMNS)
    return table


def fit_one_point(dataset, intervals: bool = True, progress=None, **params):
    """Fit the four one-point scalers (batch/input x with/without profile) on every CNN.

    Returns
    -------
    meta : dict
        ``{"<by>|<profile|latency>": state}`` for ``model.json``.
    arrays : dict of str to ndarray
        Keyed ``onepoint|<by>|<profile|latency>|<name>``.
    report : pandas.DataFrame or None
        :func:`summarize_one_point` of the leave-one-architecture-out run (when ``intervals``),
        whose errors also set the models' intervals.
    """
    meta, arrays, oofs = {}, {}, []
    for by in POWER:
        pairs = one_point_pairs(dataset, by)
        if pairs.empty:
            continue
        oof = cross_validate_one_point(dataset, by, progress, **params) if intervals else None
        for name, variant in (("profile", "profile"), ("latency", "latency only")):
            model = OnePointScaler(by=by, use_profile=name == "profile", **params).fit(pairs)
            if oof is not None:
                model.intervals_ = interval_table(oof, variant)
            m, a = model.to_state()
            meta[f"{by}|{name}"] = m
            arrays.update({f"onepoint|{by}|{name}|{k}": v for k, v in a.items()})
        if oof is not None:
            oofs.append(oof)
    report = summarize_one_point(pd.concat(oofs, ignore_index=True)) if oofs else None
    return meta, arrays, report
