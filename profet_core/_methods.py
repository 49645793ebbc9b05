"""Per (anchor, target) prediction methods.

A method is fitted on the pairs table of one anchor/target (see ``make_pairs``) and predicts the
target's batch latency (seconds) from the anchor's op times and, optionally, the anchor's batch
latency. Every method returns its members' predictions too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._estimators import DenseNetRegressor, ForestRegressor, LinearModel


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
    """

    latency_s: np.ndarray
    members: dict
    ensemble: str


def _pack(prefix: str, state) -> tuple[dict, dict]:
    meta, arrays = state
    return meta, {f"{prefix}/{k}": v for k, v in arrays.items()}


def _unpack(prefix: str, arrays: dict) -> dict:
    cut = len(prefix) + 1
    return {k[cut:]: v for k, v in arrays.items() if k.startswith(prefix + "/")}


class ProfetEnsemble(BaseEstimator):
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

    def predict(self, ops: pd.DataFrame, anchor_latency_s=None) -> MethodOutput:
        """Predict target latency (s) for rows of ``ops``; ``anchor_latency_s`` may hold NaN."""
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
    def from_state(cls, meta, arrays, clusterer):
        self = cls(clusterer=clusterer)
        self.dnn_ = DenseNetRegressor.from_state(meta["dnn"], _unpack("dnn", arrays))
        self.rf_ = ForestRegressor.from_state(meta["rf"], _unpack("rf", arrays))
        self.linear_ = LinearModel.from_state(meta["linear"], _unpack("linear", arrays))
        return self


#: Every trainable method by name; the artifacts store which were trained.
METHODS = {"profet": ProfetEnsemble}
DEFAULT_METHOD = "profet"


def method_factory(name: str, params: dict | None = None):
    """``factory(clusterer) -> unfitted method`` for :func:`cross_validate` and training."""
    from ._errors import ProfetValueError

    if name not in METHODS:
        raise ProfetValueError(f"unknown method {name!r}; allowed: {', '.join(METHODS)}")
    params = dict(params or {})
    return lambda clusterer: METHODS[name](clusterer=clusterer, **params)
