"""Leave-one-architecture-out validation of the methods and scalers, and the noise floor."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from .._schema import PAIR_KEY
from ..errors import ProfetValueError
from ..features._clustering import OpClusterer
from ..inputs._args import frame_arg
from ..inputs._dataset import Dataset, dataset_arg, make_pairs
from ..models._breakdown import BASELINES, IDLE, LEARNERS, BreakdownRegressor, breakdown_pairs
from ..models._curve_scaler import DIMENSIONS, fit_scaler, scaling_curves

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
        ``factory(clusterer) -> unfitted method`` (see ``profet_core.models._methods``).
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
    dataset_arg(dataset)  # a wrong type is a ProfetValueError
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
            if not (test.empty or train.empty):
                seen = [c for c in dataset.ops if train[c].to_numpy().any()]
                clusterer = OpClusterer(threshold=threshold).fit(train[seen])
                fold = _fold(train, test, methods, clusterer)
                out.append(fold.assign(anchor=anchor, target=target))
            done += 1
            if progress:
                progress(done, total, f"{anchor} -> {target}, left out {arch}")
    return pd.concat(out, ignore_index=True)[OOF_COLUMNS]


#: Columns of :func:`cross_validate`'s result.
OOF_COLUMNS = [
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


def _fold(train: pd.DataFrame, test: pd.DataFrame, methods, clusterer) -> pd.DataFrame:
    """Every method (and member, and baseline) fitted on ``train``, predicting ``test``."""
    preds: dict[tuple[str, bool], np.ndarray] = {}
    novelty: dict[str, np.ndarray] = {}
    for name, factory in methods.items():
        model = factory(clusterer).fit(train)
        for with_lat in (True, False):
            res = model.predict(test, test["anchor_latency_s"].to_numpy() if with_lat else None)
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
    parts = [
        base.assign(
            estimator=est,
            with_latency=with_lat,
            predicted_s=values,
            novelty=novelty.get(est, np.nan),
        )
        for (est, with_lat), values in preds.items()
    ]
    return pd.concat(parts, ignore_index=True)


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
    frame_arg(oof, "the cross-validation table (oof)")
    missing = {"anchor", "target", "estimator", "with_latency", "measured_s", "predicted_s"}
    missing -= set(oof.columns)
    if missing:
        raise ProfetValueError(f"the cross-validation table lacks {sorted(missing)}")
    oof = oof.dropna(subset=["predicted_s"])
    keys = ["anchor", "target", "estimator", "with_latency"]
    return oof.groupby(keys, sort=True)[["measured_s", "predicted_s"]].apply(_metrics).reset_index()


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


# ------------------------------------------------------------------ per-op-family breakdown


def _breakdown_baseline(
    name: str, Xtr: pd.DataFrame, Ytr: pd.DataFrame, Xte: pd.DataFrame
) -> pd.DataFrame:
    if name == "identity":
        return Xte.copy()
    # Per-family median of log(target / anchor) over the training workloads.
    ratio = np.median(np.log1p(Ytr.to_numpy()) - np.log1p(Xtr.to_numpy()), axis=0)
    return pd.DataFrame(
        np.expm1(np.log1p(Xte.to_numpy()) + ratio), columns=Xte.columns, index=Xte.index
    )


def _breakdown_metrics(
    pred: np.ndarray,
    true: np.ndarray,
    anchor: np.ndarray,
    busy_cols: np.ndarray,
    anchor_lat: np.ndarray,
    target_lat: np.ndarray,
) -> dict:
    wape = np.abs(pred - true).sum(axis=1) / np.maximum(true.sum(axis=1), 1e-9)
    pb, tb = pred[:, busy_cols].sum(axis=1), true[:, busy_cols].sum(axis=1)
    lat = anchor_lat * pred.sum(axis=1) / np.maximum(anchor.sum(axis=1), 1e-9)
    return {
        "family_wape_pct": 100 * float(wape.mean()),
        "busy_mape_pct": 100 * float(np.mean(np.abs(pb - tb) / np.maximum(tb, 1e-9))),
        "latency_mape_pct": 100 * float(np.mean(np.abs(lat - target_lat) / target_lat)),
        "n": len(true),
    }


def cross_validate_breakdown(
    dataset: Dataset,
    learners=LEARNERS,
    anchors=None,
    targets=None,
    progress: Progress | None = None,
    params: dict | None = None,
    baselines=BASELINES,
) -> pd.DataFrame:
    """Leave-one-architecture-out accuracy of breakdown learners for every anchor -> target pair.

    For each pair and architecture, every learner is trained on the other architectures (median
    over repetitions) and predicts each repetition of the left-out one.

    Parameters
    ----------
    dataset : Dataset
    learners : iterable of str
        Among :data:`LEARNERS`.
    anchors, targets : list of str, optional
        Restrict the run (default: every instance).
    progress : callable, optional
        ``progress(done, total, message)`` after each fold.
    params : dict, optional
        Extra keyword arguments of :class:`BreakdownRegressor`.
    baselines : iterable of str
        Among :data:`BASELINES`: ``identity`` (target family = anchor family) and
        ``median-ratio`` (anchor family times the training median target/anchor ratio).

    Returns
    -------
    pandas.DataFrame
        One row per (anchor, target, learner): ``family_wape_pct`` (sum over families of
        |pred - true| / sum of true, per row, then mean), ``busy_mape_pct`` (MAPE of the summed
        non-idle families), ``latency_mape_pct`` (MAPE of ``anchor_latency_s * predicted device
        total / anchor device total`` against the measured target latency) and ``n`` rows.
    """
    learners, baselines = list(learners), list(baselines)
    for name in learners:
        if name not in LEARNERS:
            raise ProfetValueError(
                f"unknown breakdown learner {name!r}; allowed: {', '.join(LEARNERS)}"
            )
    for name in baselines:
        if name not in BASELINES:
            raise ProfetValueError(f"unknown baseline {name!r}; allowed: {', '.join(BASELINES)}")
    instances = dataset.instances
    jobs = [(a, t) for a in (anchors or instances) for t in (targets or instances) if a != t]
    archs = dataset.architectures
    if len(archs) < 2:
        raise ProfetValueError("leave-one-architecture-out needs at least 2 architectures")
    key = list(PAIR_KEY)
    total, done = len(jobs) * len(archs), 0
    rows = []
    for anchor, target in jobs:
        X, Y, groups, keys = breakdown_pairs(dataset, anchor, target)
        Xm, Ym, gm, _ = breakdown_pairs(dataset, anchor, target, median=True)
        lat = make_pairs(dataset, anchor, target)[[*key, "anchor_latency_s", "target_latency_s"]]
        lat = keys.merge(lat, on=key, how="left")
        has_lat = lat["target_latency_s"].notna().to_numpy()
        busy_cols = np.asarray([c != IDLE for c in X.columns])
        preds = {name: np.full(Y.shape, np.nan) for name in [*learners, *baselines]}
        for arch in archs:
            te, tr = groups == arch, gm != arch
            done += 1
            if te.any() and tr.sum() >= 2:
                for name in learners:
                    model = BreakdownRegressor(learner=name, **(params or {})).fit(Xm[tr], Ym[tr])
                    preds[name][te] = model.predict(X[te]).to_numpy()
                for name in baselines:
                    preds[name][te] = _breakdown_baseline(name, Xm[tr], Ym[tr], X[te]).to_numpy()
            if progress:
                progress(done, total, f"{anchor} -> {target}, left out {arch}")
        for name, p in preds.items():
            ok = has_lat & ~np.isnan(p).any(axis=1)
            m = _breakdown_metrics(
                p[ok],
                Y.to_numpy()[ok],
                X.to_numpy()[ok],
                busy_cols,
                lat["anchor_latency_s"].to_numpy()[ok],
                lat["target_latency_s"].to_numpy()[ok],
            )
            rows.append({"anchor": anchor, "target": target, "learner": name, **m})
    return pd.DataFrame(rows)
