"""Predicted per-op-family breakdown on a target instance (multi-output regression).

From an anchor profile's device time per op family (see :mod:`profet_core.features._profile_features`), predict the
target instance's device time per family, so people can see which op groups get faster or slower.
Families, not op names, are modelled because they transfer to architectures never seen.

Every learner works in log space: inputs are ``log1p`` of the anchor's family times (and,
optionally, each family's share of the anchor's device time); outputs are ``log1p`` of the target's
family times, by default relative to the anchor's (``relative=True`` models the per-family log
ratio, so a tree or a neighbour model that has never seen an architecture's scale still scales
with it). The learned state is plain arrays (no pickle), see :meth:`BreakdownRegressor.to_state`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._base import Estimator, check_is_fitted
from .._schema import PAIR_KEY
from ..errors import ProfetValueError
from ..features._profile_features import family_times
from ..inputs._dataset import Dataset
from ._trees import FlatTrees

#: Learners of :class:`BreakdownRegressor`: scikit-learn multi-output regressors.
LEARNERS = ("linear", "knn", "tree", "forest")
#: Baselines reported by :func:`cross_validate_breakdown` next to the learners.
BASELINES = ("identity", "median-ratio")
#: Family left out of the device-busy time.
IDLE = "idle"


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


# ---------------------------------------------------------------------------- regressor


class BreakdownRegressor(Estimator):
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
            flat = FlatTrees.from_sklearn(trees)
            self.arrays_, self.depth_ = flat.state(), flat.depth
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
        trees = FlatTrees(a, self.depth_)
        return trees.sum_leaves(F) / trees.n_trees

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
        if self.learner in ("tree", "forest"):
            FlatTrees(self.arrays_, self.depth_)  # refuses malformed trees before any walk
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
