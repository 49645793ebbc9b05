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


def interval_quantiles(oof: pd.DataFrame, level: float = 0.8) -> pd.DataFrame:
    """Calibrate prediction intervals from out-of-fold log errors, and measure their coverage.

    The interval of a prediction ``p`` is ``[p * exp(q_lo), p * exp(q_hi)]`` where ``q_lo`` and
    ``q_hi`` are the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
    ``log(measured / predicted)`` over all out-of-fold rows of the same pair, estimator and
    anchor-latency setting. Coverage is measured honestly per architecture: the rows of each
    architecture are checked against quantiles computed from the other architectures only.

    Returns
    -------
    pandas.DataFrame
        ``anchor, target, estimator, with_latency, q_lo, q_hi, coverage`` (coverage in 0..1).
    """
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    oof = oof.dropna(subset=["predicted_s"])
    rows = []
    for key, g in oof.groupby(["anchor", "target", "estimator", "with_latency"], sort=True):
        r = np.log(g["measured_s"].to_numpy() / np.maximum(g["predicted_s"].to_numpy(), 1e-9))
        arch = g["architecture"].to_numpy()
        inside = np.zeros(len(r), dtype=bool)
        for a in np.unique(arch):
            held = arch == a
            if held.all():
                continue
            ql, qh = np.quantile(r[~held], [lo_q, hi_q])
            inside[held] = (r[held] >= ql) & (r[held] <= qh)
        q_lo, q_hi = np.quantile(r, [lo_q, hi_q])
        rows.append((*key, float(q_lo), float(q_hi), float(inside.mean())))
    return pd.DataFrame(rows, columns=["anchor", "target", "estimator", "with_latency",
                                       "q_lo", "q_hi", "coverage"])


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
