"""Leave-one-architecture-out validation, interval calibration and the accuracy report."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from ._clustering import OpClusterer
from ._data import Dataset, make_pairs
from ._scaler import DIMENSIONS, fit_scaler, scaling_curves
from .errors import ProfetValueError

Progress = Callable[[int, int, str], None]
#: Estimators that only make sense with the anchor latency (baselines).
_BASELINES = ("linear-latency", "median-ratio")


def _baselines(train: pd.DataFrame, test: pd.DataFrame) -> dict[str, np.ndarray]:
    a, t = train["anchor_latency_s"].to_numpy(), train["target_latency_s"].to_numpy()
    slope, intercept = np.polyfit(a, t, 1)
    lat = test["anchor_latency_s"].to_numpy()
    return {
        "linear-latency": np.maximum(slope * lat + intercept, 1e-5),
        "median-ratio": lat * float(np.median(t / a)),
    }


def cross_validate(
    dataset: Dataset,
    methods: Mapping[str, Callable],
    *,
    threshold: float = 6.0,
    anchors=None,
    targets=None,
    architectures=None,
    progress: Progress | None = None,
) -> pd.DataFrame:
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
        exp, input_size, batch_size, estimator, with_latency, measured_s, predicted_s, novelty``.
        Estimators are each method, its members (``method:member``) and the baselines;
        ``novelty`` is the method's :class:`ProfileNovelty` distance (NaN where not measured).
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
            novelty: dict[str, np.ndarray] = {}
            for name, factory in methods.items():
                model = factory(clusterer).fit(train)
                for with_lat in (True, False):
                    res = model.predict(
                        test, test["anchor_latency_s"].to_numpy() if with_lat else None
                    )
                    preds[(name, with_lat)] = res.latency_s
                    if res.novelty is not None:
                        novelty[name] = res.novelty
                    for member, values in res.members.items():
                        preds[(f"{name}:{member}", with_lat)] = values
            for name, values in _baselines(train, test).items():
                preds[(name, True)] = values
            base = test[["exp", "model", "input_size", "batch_size", "target_latency_s"]].rename(
                columns={"model": "architecture", "target_latency_s": "measured_s"}
            )
            for (est, with_lat), values in preds.items():
                out.append(
                    base.assign(
                        anchor=anchor,
                        target=target,
                        estimator=est,
                        with_latency=with_lat,
                        predicted_s=values,
                        novelty=novelty.get(est, np.nan),
                    )
                )
            done += 1
            if progress:
                progress(done, total, f"{anchor} -> {target}, left out {arch}")
    cols = [
        "anchor",
        "target",
        "architecture",
        "exp",
        "input_size",
        "batch_size",
        "estimator",
        "with_latency",
        "measured_s",
        "predicted_s",
        "novelty",
    ]
    return pd.concat(out, ignore_index=True)[cols]


def _metrics(g: pd.DataFrame) -> pd.Series:
    y, p = g["measured_s"].to_numpy(), g["predicted_s"].to_numpy()
    ss_tot = ((y - y.mean()) ** 2).sum()
    return pd.Series(
        {
            "mape_pct": 100 * float(np.mean(np.abs(p - y) / y)),
            "r2": float(1 - ((y - p) ** 2).sum() / ss_tot) if ss_tot > 0 else np.nan,
            "rmse_ms": 1000 * float(np.sqrt(np.mean((y - p) ** 2))),
            "n": len(y),
        }
    )


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


def _calibrate(
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
            ql, qh, eps, n_ref = _calibrate(
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
        q_lo, q_hi, eps, n_ref = _calibrate(r, s, n, lo_q, hi_q)
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
    return (
        (100 * dev.groupby(latencies.loc[dev.index, "instance"]).mean())
        .rename("noise_pct")
        .reset_index()
    )


def validate_scalers(
    latencies: pd.DataFrame, variants: Mapping[str, Mapping[str, dict]]
) -> pd.DataFrame:
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
        ends; ``mape_all_pct`` over every size of the curves, ends included (where the scaler
        is exact by construction; comparable with figures quoted that way); ``mape_3pt_pct``
        over the sizes strictly between the ends other than the middle one, when the latency at
        the middle size is given too (:meth:`CurveScaler.predict_points`).
    """
    rows = []
    for by in ("batch", "input"):
        curves = scaling_curves(latencies, by)
        if curves.empty:
            continue
        size_range = (curves["size"].min(), curves["size"].max())
        sizes = np.sort(curves["size"].unique())
        mid = float(sizes[len(sizes) // 2])
        group = DIMENSIONS[by][1]
        for instance, ci in curves.groupby("instance"):
            for variant, params in variants.items():
                errs, errs3 = [], []
                for arch in ci["model"].unique():
                    train, test = ci[ci["model"] != arch], ci[ci["model"] == arch]
                    if train.empty or test.empty:
                        continue
                    s = fit_scaler(train, size_range, **params[by])
                    p = s.predict(test["lat_lo_s"], test["lat_hi_s"], test["size"])
                    ape = np.abs(p - test["latency_s"].to_numpy()) / test["latency_s"].to_numpy()
                    errs.append((ape, ~test["size"].isin(size_range).to_numpy()))
                    at_mid = test[test["size"] == mid][[*group, "latency_s"]].rename(
                        columns={"latency_s": "lat_mid_s"}
                    )
                    t3 = test[~test["size"].isin([*size_range, mid])].merge(at_mid, on=group)
                    if not t3.empty:
                        p3 = s.predict_points(
                            [size_range[0], mid, size_range[1]],
                            [t3["lat_lo_s"], t3["lat_mid_s"], t3["lat_hi_s"]],
                            t3["size"],
                        )
                        errs3.append(
                            np.abs(p3 - t3["latency_s"].to_numpy()) / t3["latency_s"].to_numpy()
                        )
                if errs:
                    ape = np.concatenate([e for e, _ in errs])
                    inner = np.concatenate([m for _, m in errs])
                    ape3 = 100 * float(np.concatenate(errs3).mean()) if errs3 else np.nan
                    rows.append(
                        (
                            instance,
                            by,
                            variant,
                            100 * float(ape[inner].mean()),
                            int(inner.sum()),
                            100 * float(ape.mean()),
                            ape3,
                        )
                    )
    return pd.DataFrame(
        rows, columns=["instance", "by", "variant", "mape_pct", "n", "mape_all_pct", "mape_3pt_pct"]
    )
