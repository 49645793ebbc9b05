"""Per (anchor, target) prediction methods.

A method is fitted on the pairs table of one anchor/target (see ``make_pairs``) and predicts the
target's batch latency (seconds) from the anchor's op times and, optionally, the anchor's batch
latency. Every method returns its members' predictions too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._base import Estimator, check_is_fitted, prefixed_arrays, sub_arrays
from .._schema import PAIR_KEY, op_columns
from ..features._profile_features import ProfileFeatures, ProfileNovelty, family_matrix
from ._estimators import BoostingRegressor, DenseNetRegressor, ForestRegressor, LinearModel


@dataclass(frozen=True)
class MethodOutput:
    """Predictions of one method for n profiles (seconds).

    Attributes
    ----------
    latency_s : ndarray of shape (n,)
        The method's prediction.
    members : dict of str to ndarray of shape (n,)
        Each member's prediction.
    ensemble : str
        How ``latency_s`` was made from the members, for people.
    novelty : ndarray of shape (n,) or None
        How unlike the method's training profiles each profile is (:class:`ProfileNovelty`
        distance); None if the method does not measure it.
    """

    latency_s: np.ndarray
    members: dict
    ensemble: str
    novelty: np.ndarray | None = None


def _pack(prefix: str, state) -> tuple[dict, dict]:
    """One member's ``(meta, arrays)`` state, its arrays' keys under ``prefix/``."""
    meta, arrays = state
    return meta, prefixed_arrays(f"{prefix}/", arrays)


class ProfetEnsemble(Estimator):
    """PROFET's reference: a Keras DNN and a RandomForest on Levenshtein-clustered op times, and a
    linear model on the anchor's latency.

    With the anchor latency: median of the three. Without: mean of DNN and RF.

    Parameters
    ----------
    clusterer : OpClusterer
        Fitted op clustering shared by all pairs of a training run.
    dnn_params, rf_params : dict or None
        Keyword arguments of :class:`DenseNetRegressor` and :class:`ForestRegressor`.
    """

    name = "profet"

    def __init__(self, clusterer=None, dnn_params=None, rf_params=None):
        self.clusterer = clusterer
        self.dnn_params = dnn_params
        self.rf_params = rf_params

    def _features(self, ops: pd.DataFrame) -> np.ndarray:
        return self.clusterer.transform(ops).to_numpy()

    def fit(self, pairs: pd.DataFrame):
        """Fit on a pairs table (anchor op columns, ``anchor_latency_s``, ``target_latency_s``)."""
        X = self._features(pairs)
        y = pairs["target_latency_s"].to_numpy()
        self.dnn_ = DenseNetRegressor(**(self.dnn_params or {})).fit(X, y)
        self.rf_ = ForestRegressor(**{"n_estimators": 50, **(self.rf_params or {})}).fit(X, y)
        self.linear_ = LinearModel().fit(pairs[["anchor_latency_s"]].to_numpy(), y)
        return self

    def ignored_ops(self, ops) -> tuple:
        """Ops among ``ops`` (names) that no op cluster takes: their time is not used."""
        return tuple(self.clusterer.unknown_ops(ops))

    def predict(self, ops: pd.DataFrame, anchor_latency_s=None, features=None) -> MethodOutput:
        """Predict target latency (s) for rows of ``ops``; ``anchor_latency_s`` may hold NaN.

        ``features`` is accepted for a common signature; this method uses its op clusters.
        """
        check_is_fitted(self, "rf_")
        X = self._features(ops)
        # A small floor keeps a wild extrapolation from going negative.
        dnn = np.maximum(self.dnn_.predict(X), 1e-5)
        rf = self.rf_.predict(X)
        members = {"dnn": dnn, "rf": rf}
        combined = (dnn + rf) / 2
        ensemble = "mean of DNN and RF"
        if anchor_latency_s is not None:
            lat = np.asarray(anchor_latency_s, dtype=float)
            linear = np.maximum(self.linear_.predict(lat[:, None]), 1e-5)
            members["linear"] = np.where(np.isnan(lat), np.nan, linear)
            has = ~np.isnan(lat)
            combined = np.where(has, np.median(np.vstack([dnn, rf, linear]), axis=0), combined)
            if has.all():
                ensemble = "median of DNN, RF and linear"
        return MethodOutput(combined, members, ensemble)

    def to_state(self):
        check_is_fitted(self, "rf_")
        meta, arrays = {}, {}
        for name, est in (("dnn", self.dnn_), ("rf", self.rf_), ("linear", self.linear_)):
            m, a = _pack(name, est.to_state())
            meta[name] = m
            arrays.update(a)
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays, clusterer=None):
        self = cls(clusterer=clusterer)
        self.dnn_ = DenseNetRegressor.from_state(meta["dnn"], sub_arrays(arrays, "dnn/"))
        self.rf_ = ForestRegressor.from_state(meta["rf"], sub_arrays(arrays, "rf/"))
        self.linear_ = LinearModel.from_state(meta["linear"], sub_arrays(arrays, "linear/"))
        return self


class OpFamilyLinear(Estimator):
    """Target latency as a non-negative combination of the anchor's device time per op family.

    ``T = c0 + sum_f k_f * A_f (+ k_lat * anchor latency)`` with every coefficient >= 0, fitted
    for relative error. A physical model (each kind of work gets its own speed ratio), it
    extrapolates to networks larger or smaller than any seen, where trees cannot.
    """

    @staticmethod
    def _X(device_families: np.ndarray, anchor_latency_s=None) -> np.ndarray:
        cols = [device_families * 1e-6, np.ones((len(device_families), 1))]
        if anchor_latency_s is not None:
            cols.append(np.asarray(anchor_latency_s, dtype=float)[:, None])
        return np.hstack(cols)

    def fit(self, ops: pd.DataFrame, y, anchor_latency_s=None):
        """Fit on op times (us) and target latencies ``y`` (s), optionally with anchor latency."""
        from scipy.optimize import nnls

        y = np.asarray(y, dtype=float)
        w = 1.0 / y
        X = self._X(family_matrix(ops, "Device"), anchor_latency_s)
        self.coef_, _ = nnls(X * w[:, None], y * w)
        return self

    def to_state(self):
        check_is_fitted(self, "coef_")
        return {}, {"coef": self.coef_}

    @classmethod
    def from_state(cls, meta, arrays):
        self = cls()
        self.coef_ = arrays["coef"]
        return self

    def predict_families(self, device_families: np.ndarray, anchor_latency_s=None) -> np.ndarray:
        """Target latency (s) from device time per family (``ProfileFeatures.device_families``)."""
        check_is_fitted(self, "coef_")
        # A floor keeps a profile with (almost) no known device time from predicting 0.
        return np.maximum(self._X(device_families, anchor_latency_s) @ self.coef_, 1e-5)

    def predict(self, ops: pd.DataFrame, anchor_latency_s=None) -> np.ndarray:
        """Target latency (s) for op times ``ops`` (us)."""
        return self.predict_families(family_matrix(ops, "Device"), anchor_latency_s)


class HybridEnsemble(Estimator):
    """PROFET's default: tree ensembles on the latency ratio plus a linear op-family model.

    Trees cannot extrapolate to an unseen CNN's scale, but a ratio transfers: an architecture
    twice as big has about the same target/anchor ratio as one with the same op mix. So the
    learners predict ``log(target / anchor latency)`` (with the anchor latency) or
    ``log(target latency / anchor device-busy time)`` (without it) from each op family's share
    of device time, idle shares and log times; families come from op-name keywords, so an op
    type never seen in training still lands with its kind (this method ignores no op). A third
    member, :class:`OpFamilyLinear`, brings a physical, extrapolating view. The prediction is
    the geometric mean of ExtraTrees, gradient boosting and that linear model, each trained on
    the median over repetitions (chosen by the leave-one-architecture-out mean over all pairs:
    docs/accuracy.md). It also remembers its training profiles to report each new profile's
    novelty (:class:`ProfileNovelty`), which widens the prediction intervals.

    Parameters
    ----------
    clusterer : ignored
        Accepted so every method has the same constructor.
    n_trees_et, n_trees_gb : int
        Sizes of the ExtraTrees and gradient-boosting members.
    random_state : int
    """

    name = "hybrid"

    def __init__(self, clusterer=None, n_trees_et=100, n_trees_gb=200, random_state=0):
        self.clusterer = clusterer
        self.n_trees_et = n_trees_et
        self.n_trees_gb = n_trees_gb
        self.random_state = random_state

    def _members(self):
        et = ForestRegressor(
            n_estimators=self.n_trees_et,
            min_samples_leaf=2,
            max_features=0.5,
            extra=True,
            random_state=self.random_state,
        )
        gb = BoostingRegressor(
            n_estimators=self.n_trees_gb,
            learning_rate=0.05,
            max_depth=3,
            subsample=0.8,
            random_state=self.random_state,
        )
        return {"extra-trees": et, "boosting": gb}

    def ignored_ops(self, ops) -> tuple:
        """Ops of ``ops`` this method does not use: none (every op falls into a family)."""
        return ()

    def fit(self, pairs: pd.DataFrame):
        """Fit on a pairs table (anchor op columns, ``anchor_latency_s``, ``target_latency_s``)."""
        cols = op_columns(pairs.columns) + ["anchor_latency_s", "target_latency_s"]
        key = [c for c in PAIR_KEY if c != "exp" and c in pairs.columns]
        # Repetitions differ by ~1.5%: their median is a cleaner target and 9x less to fit.
        agg = pairs.groupby(key, as_index=False)[cols].median() if key else pairs[cols]
        y = np.log(agg["target_latency_s"].to_numpy())
        lat = agg["anchor_latency_s"].to_numpy()
        feats = ProfileFeatures.from_ops(agg)
        self.models_ = {}
        for with_lat in (True, False):
            X = feats.with_latency(lat) if with_lat else feats.free
            base = np.log(lat) if with_lat else feats.log_busy_s
            self.models_[with_lat] = {n: m.fit(X, y - base) for n, m in self._members().items()}
            self.models_[with_lat]["linear-ops"] = OpFamilyLinear().fit(
                agg, agg["target_latency_s"].to_numpy(), lat if with_lat else None
            )
        self.novelty_ = ProfileNovelty().fit(feats.free)
        return self

    def predict(self, ops, anchor_latency_s=None, features=None) -> MethodOutput:
        """Predict target latency (s) for rows of ``ops``; ``anchor_latency_s`` may hold NaN.

        ``features`` (:class:`ProfileFeatures` of ``ops``) saves recomputing them per target.
        """
        check_is_fitted(self, "models_")
        f = features if features is not None else ProfileFeatures.from_ops(ops)
        n = len(f.log_busy_s)
        lat = (
            np.full(n, np.nan) if anchor_latency_s is None else np.asarray(anchor_latency_s, float)
        )
        has = ~np.isnan(lat)
        members = {name: np.empty(n) for name in self.models_[True]}
        # Geometric mean: members are combined in log space, as the trees predict log ratios.
        for with_lat, rows in ((True, has), (False, ~has)):
            if not rows.any():
                continue
            if with_lat:
                X, base = f.with_latency(lat[rows], rows), np.log(lat[rows])
            else:
                X, base = f.free[rows], f.log_busy_s[rows]
            for name, model in self.models_[with_lat].items():
                if isinstance(model, OpFamilyLinear):
                    lat_arg = lat[rows] if with_lat else None
                    fam = f.device_families[rows]
                    members[name][rows] = np.log(model.predict_families(fam, lat_arg))
                else:
                    members[name][rows] = base + model.predict(X)
        combined = np.exp(np.mean(list(members.values()), axis=0))
        members = {k: np.exp(v) for k, v in members.items()}
        basis = (
            "latency" if has.all() else "device time" if not has.any() else "latency or device time"
        )
        ensemble = (
            f"geometric mean of ExtraTrees, boosting (target/anchor {basis} ratio) "
            "and linear op-family model"
        )
        novelty = f.novelty(self.novelty_) if self.novelty_ is not None else None
        return MethodOutput(combined, members, ensemble, novelty)

    def to_state(self):
        check_is_fitted(self, "models_")
        meta = {
            "params": {k: v for k, v in self.get_params(deep=False).items() if k != "clusterer"},
            "members": {},
        }
        arrays = {}
        for with_lat, models in self.models_.items():
            for name, model in models.items():
                m, a = _pack(f"{with_lat}/{name}", model.to_state())
                meta["members"][f"{with_lat}/{name}"] = m
                arrays.update(a)
        meta["novelty"], a = _pack("novelty", self.novelty_.to_state())
        arrays.update(a)
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays, clusterer=None):
        self = cls(clusterer=clusterer, **meta["params"])
        kinds = {
            "extra-trees": ForestRegressor,
            "boosting": BoostingRegressor,
            "linear-ops": OpFamilyLinear,
        }
        self.models_ = {True: {}, False: {}}
        for key, m in meta["members"].items():
            with_lat, name = key.split("/")
            self.models_[with_lat == "True"][name] = kinds[name].from_state(
                m, sub_arrays(arrays, f"{key}/")
            )
        self.novelty_ = (
            ProfileNovelty.from_state(meta["novelty"], sub_arrays(arrays, "novelty/"))
            if "novelty" in meta
            else None
        )
        return self


#: Every trainable method by name; the artifacts store which were trained.
METHODS = {"hybrid": HybridEnsemble, "profet": ProfetEnsemble}
DEFAULT_METHOD = "hybrid"


def method_factory(name: str, params: dict | None = None):
    """``factory(clusterer) -> unfitted method`` for :func:`cross_validate` and training."""
    from ..errors import ProfetValueError

    if name not in METHODS:
        raise ProfetValueError(f"unknown method {name!r}; allowed: {', '.join(METHODS)}")
    params = dict(params or {})
    return lambda clusterer: METHODS[name](clusterer=clusterer, **params)
