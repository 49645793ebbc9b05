"""Predicted per-op-family breakdown on a target instance (multi-output regression).

From an anchor profile's device time per op family (see :mod:`profet_core._families`), predict the
target instance's device time per family, so people can see which op groups get faster or slower.
Families, not op names, are modelled because they transfer to architectures never seen.

Every learner works in log space: inputs are ``log1p`` of the anchor's family times (and,
optionally, each family's share of the anchor's device time); outputs are ``log1p`` of the target's
family times, by default relative to the anchor's (``relative=True`` models the per-family log
ratio, so a tree or a neighbour model that has never seen an architecture's scale still scales
with it). The learned state is plain arrays (no pickle), see :meth:`BreakdownRegressor.to_state`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ._data import PAIR_KEY, Dataset, make_pairs
from ._families import family_times
from .errors import ProfetValueError

#: Learners of :class:`BreakdownRegressor`: scikit-learn multi-output regressors.
LEARNERS = ("linear", "knn", "tree", "forest")
#: Baselines reported by :func:`cross_validate_breakdown` next to the learners.
BASELINES = ("identity", "median-ratio")
#: Family left out of the device-busy time.
IDLE = "idle"

Progress = Callable[[int, int, str], None]


# --------------------------------------------------------------------------------------- data


def _instance_families(dataset: Dataset, instance: str) -> pd.DataFrame:
    prof = dataset.profiles[dataset.profiles["instance"] == instance]
    fam = family_times(prof, "Device")
    out = pd.concat([prof[list(PAIR_KEY)], fam], axis=1)
    # Aggregate duplicate keys defensively so the join can never multiply rows.
    return out.groupby(list(PAIR_KEY), as_index=False)[list(fam.columns)].median()


def breakdown_pairs(dataset: Dataset, anchor: str, target: str, *, median: bool = False):
    """Anchor family times joined to the target's family times for the same workloads.

    Parameters
    ----------
    dataset : Dataset
    anchor, target : str
        Instance names present in the dataset's profiles.
    median : bool
        Take the median over the repetitions (``exp``) of each (model, input_size, batch_size),
        which is how :class:`BreakdownRegressor` is trained; ``keys`` then has ``exp = "median"``.

    Returns
    -------
    X : pandas.DataFrame
        Anchor device time per family (microseconds), columns ``FAMILIES + ("idle",)``.
    Y : pandas.DataFrame
        Target device time per family, same columns.
    groups : ndarray of str
        Architecture (``model``) of each row, for leave-one-architecture-out splits.
    keys : pandas.DataFrame
        The :data:`PAIR_KEY` columns of each row.
    """
    have = sorted(dataset.profiles["instance"].unique())
    for name in (anchor, target):
        if name not in have:
            raise ProfetValueError(f"instance {name!r} has no profiles; known: {have}")
    key = list(PAIR_KEY)
    a = _instance_families(dataset, anchor)
    t = _instance_families(dataset, target)
    fams = [c for c in a.columns if c not in key]
    if median:
        a = a.assign(exp="median").groupby(key, as_index=False)[fams].median()
        t = t.assign(exp="median").groupby(key, as_index=False)[fams].median()
    joined = a.merge(t, on=key, how="inner", suffixes=("@a", "@t")).sort_values(key)
    joined = joined.reset_index(drop=True)
    X = joined[[f"{f}@a" for f in fams]].set_axis(fams, axis=1)
    Y = joined[[f"{f}@t" for f in fams]].set_axis(fams, axis=1)
    return X, Y, joined["model"].to_numpy(dtype=str), joined[key].copy()


# ---------------------------------------------------------------------------- flat trees


class _MultiFlatTrees:
    """Multi-output scikit-learn trees as flat arrays; ``predict`` is the mean of the leaf values.

    Like ``_estimators._FlatTrees`` but ``value`` has shape (n_nodes, n_outputs).
    """

    ARRAYS = ("left", "right", "feature", "threshold", "value", "roots")

    def __init__(self, arrays: dict, depth: int):
        self.arrays = arrays
        self.depth = depth

    @classmethod
    def from_trees(cls, trees) -> _MultiFlatTrees:
        parts = {k: [] for k in cls.ARRAYS}
        offset = 0
        for tree in trees:
            parts["roots"].append(np.array([offset]))
            is_leaf = tree.children_left < 0
            # Global node ids; a leaf points at itself so traversal can run a fixed depth.
            ids = np.arange(tree.node_count) + offset
            parts["left"].append(np.where(is_leaf, ids, tree.children_left + offset))
            parts["right"].append(np.where(is_leaf, ids, tree.children_right + offset))
            parts["feature"].append(np.where(is_leaf, 0, tree.feature))
            parts["threshold"].append(np.where(is_leaf, np.inf, tree.threshold))
            parts["value"].append(tree.value[:, :, 0])
            offset += tree.node_count
        arrays = {k: np.concatenate(v) for k, v in parts.items()}
        for k in ("left", "right", "feature", "roots"):
            arrays[k] = arrays[k].astype(np.int32)
        arrays["threshold"] = arrays["threshold"].astype(np.float64)
        arrays["value"] = arrays["value"].astype(np.float64)
        return cls(arrays, int(max(t.max_depth for t in trees)))

    def predict(self, X: np.ndarray) -> np.ndarray:
        a = self.arrays
        # Trees compare float32 inputs with their thresholds; cast the same way to match exactly.
        X = np.asarray(X, dtype=np.float32).astype(np.float64)
        nodes = np.broadcast_to(a["roots"], (len(X), len(a["roots"]))).copy()
        rows = np.arange(len(X))[:, None]
        for _ in range(self.depth):
            go_left = X[rows, a["feature"][nodes]] <= a["threshold"][nodes]
            nodes = np.where(go_left, a["left"][nodes], a["right"][nodes])
        return a["value"][nodes].mean(axis=1)  # (n, n_trees, n_outputs) -> (n, n_outputs)


# ---------------------------------------------------------------------------- regressor


class BreakdownRegressor(RegressorMixin, BaseEstimator):
    """Predict a target instance's device time per op family from an anchor's.

    Parameters
    ----------
    learner : {"linear", "knn", "tree", "forest"}
        ``LinearRegression``, ``KNeighborsRegressor`` (on standardised inputs),
        ``DecisionTreeRegressor`` or ``RandomForestRegressor``, all multi-output.
    relative : bool
        Model ``log1p(target) - log1p(anchor)`` per family instead of ``log1p(target)``.
    shares : bool
        Add each family's share of the anchor's device time (busy + idle) to the inputs.
    n_neighbors : int
        k of the KNN learner.
    n_estimators : int
        Trees of the forest.
    min_samples_leaf : int
        Of the tree and the forest.
    random_state : int

    Attributes
    ----------
    feature_names_in_ : ndarray of str
        Family columns of the training inputs (the outputs have the same columns).
    """

    def __init__(
        self,
        learner="forest",
        relative=True,
        shares=True,
        n_neighbors=5,
        n_estimators=50,
        min_samples_leaf=3,
        random_state=0,
    ):
        self.learner = learner
        self.relative = relative
        self.shares = shares
        self.n_neighbors = n_neighbors
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    # -- helpers
    def _check_learner(self) -> None:
        if self.learner not in LEARNERS:
            raise ProfetValueError(
                f"unknown breakdown learner {self.learner!r}; allowed: {', '.join(LEARNERS)}"
            )

    def _matrix(self, X, names=None) -> np.ndarray:
        if isinstance(X, pd.DataFrame):
            if names is not None:
                missing = [c for c in names if c not in X.columns]
                if missing:
                    raise ProfetValueError(f"anchor family times lack column(s) {missing}")
                X = X[list(names)]
            X = X.to_numpy(dtype=np.float64)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X.reshape(1, -1)
        if names is not None and X.shape[1] != len(names):
            raise ProfetValueError(f"expected {len(names)} family columns, got {X.shape[1]}")
        if not np.isfinite(X).all() or (X < 0).any():
            raise ProfetValueError("family times must be finite microseconds >= 0")
        return X

    def _inputs(self, X: np.ndarray) -> np.ndarray:
        feats = [np.log1p(X)]
        if self.shares:
            total = X.sum(axis=1, keepdims=True)
            feats.append(X / np.where(total > 0, total, 1.0))
        return np.hstack(feats)

    # -- scikit-learn API
    def fit(self, X, Y):
        """Fit on anchor family times ``X`` and target family times ``Y`` (microseconds)."""
        self._check_learner()
        names = list(X.columns) if isinstance(X, pd.DataFrame) else None
        Xa = self._matrix(X)
        Ya = self._matrix(Y, names if isinstance(Y, pd.DataFrame) and names else None)
        if Xa.shape != Ya.shape:
            raise ProfetValueError(
                f"X and Y must have the same shape, got {Xa.shape} and {Ya.shape}"
            )
        if len(Xa) < 2:
            raise ProfetValueError("need at least 2 training rows")
        names = names or [f"f{i}" for i in range(Xa.shape[1])]
        F = self._inputs(Xa)
        T = np.log1p(Ya) - (np.log1p(Xa) if self.relative else 0.0)
        self.n_features_in_ = Xa.shape[1]
        self.feature_names_in_ = np.asarray(names, dtype=object)
        # Predictions are clipped to the training range of each output: a linear model must not
        # extrapolate an op mix it has never seen into a wild ratio.
        bounds = {"y_min": T.min(axis=0), "y_max": T.max(axis=0)}
        if self.learner == "linear":
            from sklearn.linear_model import LinearRegression

            m = LinearRegression().fit(F, T)
            self.arrays_ = {
                "coef": m.coef_.astype(np.float64),
                "intercept": np.asarray(m.intercept_, dtype=np.float64),
            }
        elif self.learner == "knn":
            mu, sd = F.mean(axis=0), F.std(axis=0)
            sd = np.where(sd > 0, sd, 1.0)
            self.arrays_ = {"x_mean": mu, "x_scale": sd, "train_x": (F - mu) / sd, "train_y": T}
        else:
            from sklearn.ensemble import RandomForestRegressor
            from sklearn.tree import DecisionTreeRegressor

            if self.learner == "tree":
                est = DecisionTreeRegressor(
                    min_samples_leaf=self.min_samples_leaf, random_state=self.random_state
                ).fit(F, T)
                trees = [est.tree_]
            else:
                est = RandomForestRegressor(
                    n_estimators=self.n_estimators,
                    max_features=1.0,
                    min_samples_leaf=self.min_samples_leaf,
                    random_state=self.random_state,
                ).fit(F, T)
                trees = [e.tree_ for e in est.estimators_]
            flat = _MultiFlatTrees.from_trees(trees)
            self.arrays_, self.depth_ = flat.arrays, flat.depth
        self.arrays_.update(bounds)
        return self

    def _predict_log(self, F: np.ndarray) -> np.ndarray:
        a = self.arrays_
        if self.learner == "linear":
            return F @ a["coef"].T + a["intercept"]
        if self.learner == "knn":
            from sklearn.neighbors import KNeighborsRegressor

            k = min(self.n_neighbors, len(a["train_x"]))
            knn = KNeighborsRegressor(n_neighbors=k, algorithm="brute").fit(
                a["train_x"], a["train_y"]
            )
            return knn.predict((F - a["x_mean"]) / a["x_scale"])
        return _MultiFlatTrees(a, self.depth_).predict(F)

    def predict(self, X) -> pd.DataFrame:
        """Target device time per family (microseconds, >= 0) for each row of anchor times ``X``.

        Returns
        -------
        pandas.DataFrame
            Same columns as the training ``Y`` (and the index of ``X`` if it is a DataFrame).
        """
        check_is_fitted(self, "arrays_")
        names = list(self.feature_names_in_)
        Xa = self._matrix(X, names if isinstance(X, pd.DataFrame) else None)
        if Xa.shape[1] != self.n_features_in_:
            raise ProfetValueError(
                f"expected {self.n_features_in_} family columns, got {Xa.shape[1]}"
            )
        log = np.clip(
            self._predict_log(self._inputs(Xa)), self.arrays_["y_min"], self.arrays_["y_max"]
        )
        out = log + (np.log1p(Xa) if self.relative else 0.0)
        index = X.index if isinstance(X, pd.DataFrame) else None
        return pd.DataFrame(np.maximum(np.expm1(out), 0.0), columns=names, index=index)

    def score(self, X, y, sample_weight=None):
        """R^2 of the log1p family times, averaged over families."""
        from sklearn.metrics import r2_score

        return r2_score(
            np.log1p(self._matrix(y)),
            np.log1p(self.predict(X).to_numpy()),
            sample_weight=sample_weight,
        )

    # -- no-pickle state
    def to_state(self) -> tuple[dict, dict]:
        """``(meta, arrays)``: JSON-serialisable parameters and plain numpy arrays."""
        check_is_fitted(self, "arrays_")
        meta = {
            "params": self.get_params(),
            "families": [str(c) for c in self.feature_names_in_],
            "depth": getattr(self, "depth_", None),
        }
        return meta, {k: np.asarray(v) for k, v in self.arrays_.items()}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> BreakdownRegressor:
        """Rebuild a fitted regressor from :meth:`to_state` output."""
        self = cls(**meta["params"])
        self._check_learner()
        self.arrays_ = {k: np.asarray(v) for k, v in arrays.items()}
        self.feature_names_in_ = np.asarray(meta["families"], dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)
        if meta.get("depth") is not None:
            self.depth_ = int(meta["depth"])
        return self


def breakdown_change(
    anchor_family_us, predicted_target_us, *, drop_empty: bool = True
) -> pd.DataFrame:
    """Which op families get faster or slower on the target.

    Parameters
    ----------
    anchor_family_us, predicted_target_us : pandas.Series or one-row pandas.DataFrame
        Time per family (microseconds), indexed/columned by family.
    drop_empty : bool
        Leave out families that are 0 on both sides.

    Returns
    -------
    pandas.DataFrame
        ``family, anchor_us, target_us, speedup`` (``anchor_us / target_us``; > 1 means faster on
        the target, NaN where the target time is 0), in the anchor's family order.
    """

    def as_series(v, what):
        if isinstance(v, pd.DataFrame):
            if len(v) != 1:
                raise ProfetValueError(f"{what} must be one row, got {len(v)}")
            v = v.iloc[0]
        if not isinstance(v, pd.Series):
            raise ProfetValueError(f"{what} must be a pandas Series or one-row DataFrame")
        return v.astype(float)

    a = as_series(anchor_family_us, "anchor_family_us")
    t = as_series(predicted_target_us, "predicted_target_us").reindex(a.index)
    if t.isna().any():
        raise ProfetValueError(f"predicted_target_us lacks families {list(t.index[t.isna()])}")
    out = pd.DataFrame(
        {"family": a.index.astype(str), "anchor_us": a.to_numpy(), "target_us": t.to_numpy()}
    )
    if drop_empty:
        out = out[(out["anchor_us"] > 0) | (out["target_us"] > 0)]
    target = out["target_us"].to_numpy()
    out["speedup"] = np.where(
        target > 0, out["anchor_us"] / np.where(target > 0, target, 1.0), np.nan
    )
    return out.reset_index(drop=True)


# ---------------------------------------------------------------------------- validation


def _baseline(name: str, Xtr: pd.DataFrame, Ytr: pd.DataFrame, Xte: pd.DataFrame) -> pd.DataFrame:
    if name == "identity":
        return Xte.copy()
    # Per-family median of log(target / anchor) over the training workloads.
    ratio = np.median(np.log1p(Ytr.to_numpy()) - np.log1p(Xtr.to_numpy()), axis=0)
    return pd.DataFrame(
        np.expm1(np.log1p(Xte.to_numpy()) + ratio), columns=Xte.columns, index=Xte.index
    )


def _metrics(
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
                    preds[name][te] = _baseline(name, Xm[tr], Ym[tr], X[te]).to_numpy()
            if progress:
                progress(done, total, f"{anchor} -> {target}, left out {arch}")
        for name, p in preds.items():
            ok = has_lat & ~np.isnan(p).any(axis=1)
            m = _metrics(
                p[ok],
                Y.to_numpy()[ok],
                X.to_numpy()[ok],
                busy_cols,
                lat["anchor_latency_s"].to_numpy()[ok],
                lat["target_latency_s"].to_numpy()[ok],
            )
            rows.append({"anchor": anchor, "target": target, "learner": name, **m})
    return pd.DataFrame(rows)
