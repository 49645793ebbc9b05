"""Leave-one-architecture-out validation, interval calibration and the accuracy report."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from ._clustering import OpClusterer
from ._data import Dataset, make_pairs
from ._errors import ProfetValueError
from ._scaler import fit_scaler, scaling_curves

Progress = Callable[[int, int, str], None]
#: Estimators that only make sense with the anchor latency (baselines).
_BASELINES = ("linear-latency", "median-ratio")


def _baselines(train: pd.DataFrame, test: pd.DataFrame) -> dict[str, np.ndarray]:
    a, t = train["anchor_latency_s"].to_numpy(), train["target_latency_s"].to_numpy()
    slope, intercept = np.polyfit(a, t, 1)
    lat = test["anchor_latency_s"].to_numpy()
    return {"linear-latency": np.maximum(slope * lat + intercept, 1e-5),
            "median-ratio": lat * float(np.median(t / a))}


def cross_validate(dataset: Dataset, methods: Mapping[str, Callable], *, threshold: float = 6.0,
                   anchors=None, targets=None, architectures=None,
                   progress: Progress | None = None) -> pd.DataFrame:
    """Leave-one-architecture-out predictions for every anchor -> target pair.

    For each pair and each architecture, the op clustering and every method are fitted on the
    other architectures and predict the left-out one, with and without the anchor latency.

    Parameters
    ----------
    dataset : Dataset
    methods : mapping of name to factory
        ``factory(clusterer) -> unfitted method`` (see ``profet_core._methods``).
    threshold : float
        Op-clustering distance threshold.
    anchors, targets, architectures : list of str, optional
        Restrict the run (default: all).
    progress : callable, optional
        Called as ``progress(done, total, message)`` after each fold.

    Returns
    -------
    pandas.DataFrame
        One row per (pair, left-out row, estimator, with_latency): ``anchor, target, architecture,
        exp, input_size, batch_size, estimator, with_latency, measured_s, predicted_s``.
        Estimators are each method, its members (``method:member``) and the baselines.
    """
    instances = dataset.instances
    anchors = list(anchors or instances)
    targets = list(targets or instances)
    archs = list(architectures or dataset.architectures)
    if len(dataset.architectures) < 2:
        raise ProfetValueError("leave-one-architecture-out needs at least 2 architectures")
    jobs = [(a, t) for a in anchors for t in targets if a != t]
    total, done = len(jobs) * len(archs), 0
    out = []
    for anchor, target in jobs:
        pairs = make_pairs(dataset, anchor, target)
        for arch in archs:
            train, test = pairs[pairs["model"] != arch], pairs[pairs["model"] == arch]
            if test.empty or train.empty:
                done += 1
                continue
            ops = dataset.ops
            seen = [c for c in ops if train[c].to_numpy().any()]
            clusterer = OpClusterer(threshold=threshold).fit(train[seen])
            preds: dict[tuple[str, bool], np.ndarray] = {}
            for name, factory in methods.items():
                model = factory(clusterer).fit(train)
                for with_lat in (True, False):
                    res = model.predict(test, test["anchor_latency_s"].to_numpy() if with_lat else None)
                    preds[(name, with_lat)] = res.latency_s
                    for member, values in res.members.items():
                        preds[(f"{name}:{member}", with_lat)] = values
            for name, values in _baselines(train, test).items():
                preds[(name, True)] = values
            base = test[["exp", "model", "input_size", "batch_size", "target_latency_s"]].rename(
                columns={"model": "architecture", "target_latency_s": "measured_s"})
            for (est, with_lat), values in preds.items():
                out.append(base.assign(anchor=anchor, target=target, estimator=est,
                                       with_latency=with_lat, predicted_s=values))
            done += 1
            if progress:
                progress(done, total, f"{anchor} -> {target}, left out {arch}")
    cols = ["anchor", "target", "architecture", "exp", "input_size", "batch_size", "estimator",
            "with_latency", "measured_s", "predicted_s"]
    return pd.concat(out, ignore_index=True)[cols]


def _metrics(g: pd.DataFrame) -> pd.Series:
    y, p = g["measured_s"].to_numpy(), g["predicted_s"].to_numpy()
    ss_tot = ((y - y.mean()) ** 2).sum()
    return pd.Series({
        "mape_pct": 100 * float(np.mean(np.abs(p - y) / y)),
        "r2": float(1 - ((y - p) ** 2).sum() / ss_tot) if ss_tot > 0 else np.nan,
        "rmse_ms": 1000 * float(np.sqrt(np.mean((y - p) ** 2))),
        "n": len(y),
    })


def summarize(oof: pd.DataFrame) -> pd.DataFrame:
    """MAPE (%), R2 and RMSE (ms) per anchor, target, estimator and with_latency.

    Parameters
    ----------
    oof : pandas.DataFrame
        Output of :func:`cross_validate` (NaN predictions are left out).
    """
    oof = oof.dropna(subset=["predicted_s"])
    keys = ["anchor", "target", "estimator", "with_latency"]
    return oof.groupby(keys, sort=True)[["measured_s", "predicted_s"]].apply(_metrics).reset_index()


#: Floor of the member spread, as a share of its median, in normalised intervals: keeps rows
#: whose members happen to agree from getting zero-width intervals.
SPREAD_FLOOR = 0.25
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
        wide = mem.pivot_table(index=_ROW_KEY, columns="estimator", values="predicted_s", dropna=False)
        spread = pd.Series(member_spread(wide.to_numpy()), index=wide.index, name="spread")
        rows = oof[est == method]
        joined = rows[_ROW_KEY].merge(spread.reset_index(), on=_ROW_KEY, how="left")
        out.loc[rows.index] = joined["spread"].to_numpy()
    return out


def _calibrate(r: np.ndarray, s: np.ndarray | None, lo_q: float, hi_q: float) -> tuple[float, float, float]:
    """Quantiles of log errors, normalised by member spread ``s`` (plus its floor) if given."""
    eps = SPREAD_FLOOR * float(np.median(s)) if s is not None else np.nan
    ql, qh = np.quantile(r / (s + eps) if s is not None else r, [lo_q, hi_q])
    return float(ql), float(qh), eps


def interval_quantiles(oof: pd.DataFrame, level: float = 0.8) -> pd.DataFrame:
    """Calibrate prediction intervals from out-of-fold log errors, and measure their coverage.

    For an ensemble, an interval widens with the disagreement of its members (an unusual
    network makes the trees and the linear model disagree): with ``s`` the member spread
    (:func:`member_spread`) and ``eps = SPREAD_FLOOR * median(s)``, the interval of a prediction
    ``p`` is ``[p * exp(q_lo * (s + eps)), p * exp(q_hi * (s + eps))]`` where ``q_lo``, ``q_hi``
    are the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
    ``log(measured / predicted) / (s + eps)`` over the out-of-fold rows of the same pair,
    estimator and anchor-latency setting. For a single model (``eps`` NaN) the interval is
    ``[p * exp(q_lo), p * exp(q_hi)]`` with quantiles of the log error itself. Coverage is
    measured per architecture: each architecture's rows are checked against an interval
    calibrated on the other architectures only.

    Returns
    -------
    pandas.DataFrame
        ``anchor, target, estimator, with_latency, q_lo, q_hi, eps, coverage`` (coverage in 0..1).
    """
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    oof = oof.dropna(subset=["predicted_s"])
    spreads = _spreads(oof)
    rows = []
    for key, g in oof.groupby(["anchor", "target", "estimator", "with_latency"], sort=True):
        r = np.log(g["measured_s"].to_numpy() / np.maximum(g["predicted_s"].to_numpy(), 1e-9))
        s = spreads.loc[g.index].to_numpy()
        normalised = bool(np.isfinite(s).all() and np.median(s) > 0)
        arch = g["architecture"].to_numpy()

        inside = np.zeros(len(r), dtype=bool)
        for a in np.unique(arch):
            held = arch == a
            if held.all():
                continue
            ql, qh, eps = _calibrate(r[~held], s[~held] if normalised else None, lo_q, hi_q)
            scale = s[held] + eps if normalised else 1.0
            inside[held] = (r[held] >= ql * scale) & (r[held] <= qh * scale)
        q_lo, q_hi, eps = _calibrate(r, s if normalised else None, lo_q, hi_q)
        rows.append((*key, q_lo, q_hi, eps, float(inside.mean())))
    return pd.DataFrame(rows, columns=["anchor", "target", "estimator", "with_latency",
                                       "q_lo", "q_hi", "eps", "coverage"])


def noise_floor(latencies: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute relative deviation of one repetition from the mean of the others, per instance.

    Returns
    -------
    pandas.DataFrame
        ``instance, noise_pct``.
    """
    key = ["instance", "model", "input_size", "batch_size"]
    g = latencies.groupby(key)["batch_latency_s"]
    n, s = g.transform("count"), g.transform("sum")
    others = (s - latencies["batch_latency_s"]) / (n - 1)
    dev = (latencies["batch_latency_s"] - others).abs() / others
    dev = dev[n > 1]
    return (100 * dev.groupby(latencies.loc[dev.index, "instance"]).mean()).rename("noise_pct").reset_index()


def validate_scalers(latencies: pd.DataFrame, variants: Mapping[str, Mapping[str, dict]]) -> pd.DataFrame:
    """Leave-one-architecture-out error of scaler variants at the sizes between the two ends.

    Parameters
    ----------
    latencies : pandas.DataFrame
        The dataset's latencies.
    variants : mapping
        ``{variant_name: {"batch": params, "input": params}}`` of :class:`CurveScaler` params.

    Returns
    -------
    pandas.DataFrame
        ``instance, by, variant, mape_pct, n`` over the sizes strictly between the two given
        ends, and ``mape_all_pct`` over every size of the curves, ends included (where the
        scaler is exact by construction; comparable with figures quoted that way).
    """
    rows = []
    for by in ("batch", "input"):
        curves = scaling_curves(latencies, by)
        if curves.empty:
            continue
        size_range = (curves["size"].min(), curves["size"].max())
        for instance, ci in curves.groupby("instance"):
            for variant, params in variants.items():
                errs = []
                for arch in ci["model"].unique():
                    train, test = ci[ci["model"] != arch], ci[ci["model"] == arch]
                    if train.empty or test.empty:
                        continue
                    s = fit_scaler(train, size_range, **params[by])
                    p = s.predict(test["lat_lo_s"], test["lat_hi_s"], test["size"])
                    ape = np.abs(p - test["latency_s"].to_numpy()) / test["latency_s"].to_numpy()
                    errs.append((ape, ~test["size"].isin(size_range).to_numpy()))
                if errs:
                    ape = np.concatenate([e for e, _ in errs])
                    inner = np.concatenate([m for _, m in errs])
                    rows.append((instance, by, variant, 100 * float(ape[inner].mean()), int(inner.sum()),
                                 100 * float(ape.mean())))
    return pd.DataFrame(rows, columns=["instance", "by", "variant", "mape_pct", "n", "mape_all_pct"])
