"""Estimators whose learned state is plain arrays, so artifacts never need pickle.

Each has ``to_state() -> (meta: dict, arrays: dict[str, ndarray])`` and a ``from_state``
classmethod; prediction runs in numpy only (TensorFlow is imported by ``DenseNetRegressor.fit``
alone).
"""

from __future__ import annotations

import numpy as np

from .._base import Estimator, check_is_fitted
from ._trees import FlatTrees


def _as_2d(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    return X.reshape(-1, 1) if X.ndim == 1 else X


class DenseNetRegressor(Estimator):
    """PROFET's Keras DNN (Dense 128-64-32-16-1, relu) behind scikit-learn's interface.

    Trained with Keras (Adam, exponential learning-rate decay, early stopping on a validation
    split); the fitted weights are kept as numpy arrays and prediction is a numpy forward pass,
    so loading and predicting never import TensorFlow. Inputs are min-max scaled and the target
    standardised inside the estimator.

    Parameters
    ----------
    hidden : tuple of int
        Units of the hidden Dense layers.
    learning_rate, decay_steps, decay_rate : float, int, float
        ``ExponentialDecay`` schedule of the Adam optimiser (PROFET: 1e-3, 1000, 0.9).
    epochs, batch_size, patience : int
        Training length, mini-batch size and early-stopping patience (epochs).
    validation_fraction : float
        Share of rows held out for early stopping.
    random_state : int
    """

    def __init__(
        self,
        hidden=(128, 64, 32, 16),
        learning_rate=1e-3,
        decay_steps=1000,
        decay_rate=0.9,
        epochs=300,
        batch_size=32,
        patience=20,
        validation_fraction=0.2,
        random_state=0,
    ):
        self.hidden = hidden
        self.learning_rate = learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.patience = patience
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def fit(self, X, y):
        import tensorflow as tf  # training only: prediction stays numpy

        X = _as_2d(X)
        y = np.asarray(y, dtype=np.float64)
        self.x_min_ = X.min(axis=0)
        span = X.max(axis=0) - self.x_min_
        self.x_scale_ = np.where(span > 0, span, 1.0)
        self.y_mean_ = float(y.mean())
        self.y_std_ = float(y.std()) or 1.0
        Xs = ((X - self.x_min_) / self.x_scale_).astype(np.float32)
        ys = ((y - self.y_mean_) / self.y_std_).astype(np.float32)
        tf.keras.utils.set_random_seed(self.random_state)
        layers = [tf.keras.Input(shape=(X.shape[1],))]
        layers += [tf.keras.layers.Dense(u, activation="relu") for u in self.hidden]
        layers += [tf.keras.layers.Dense(1)]
        model = tf.keras.Sequential(layers)
        schedule = tf.keras.optimizers.schedules.ExponentialDecay(
            self.learning_rate, decay_steps=self.decay_steps, decay_rate=self.decay_rate
        )
        model.compile(optimizer=tf.keras.optimizers.Adam(schedule), loss="mse")
        rng = np.random.default_rng(self.random_state)
        order = rng.permutation(len(Xs))
        n_val = int(round(len(Xs) * self.validation_fraction)) if len(Xs) >= 10 else 0
        val, tr = order[:n_val], order[n_val:]
        callbacks = []
        fit_kw = {}
        if n_val:
            callbacks.append(
                tf.keras.callbacks.EarlyStopping(patience=self.patience, restore_best_weights=True)
            )
            fit_kw["validation_data"] = (Xs[val], ys[val])
        model.fit(
            Xs[tr],
            ys[tr],
            epochs=self.epochs,
            batch_size=self.batch_size,
            verbose=0,
            callbacks=callbacks,
            **fit_kw,
        )
        self.weights_ = [w.astype(np.float64) for w in model.get_weights()]
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "weights_")
        h = (_as_2d(X) - self.x_min_) / self.x_scale_
        n_layers = len(self.weights_) // 2
        for i in range(n_layers):
            h = h @ self.weights_[2 * i] + self.weights_[2 * i + 1]
            if i < n_layers - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0] * self.y_std_ + self.y_mean_

    def to_state(self):
        check_is_fitted(self, "weights_")
        meta = {
            "params": {**self.get_params(), "hidden": list(self.hidden)},
            "y_mean": self.y_mean_,
            "y_std": self.y_std_,
            "n_weights": len(self.weights_),
        }
        arrays = {"x_min": self.x_min_, "x_scale": self.x_scale_}
        arrays.update({f"w{i}": w for i, w in enumerate(self.weights_)})
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays):
        params = dict(meta["params"])
        params["hidden"] = tuple(params["hidden"])
        self = cls(**params)
        self.x_min_, self.x_scale_ = arrays["x_min"], arrays["x_scale"]
        self.y_mean_, self.y_std_ = meta["y_mean"], meta["y_std"]
        self.weights_ = [arrays[f"w{i}"] for i in range(meta["n_weights"])]
        self.n_features_in_ = len(self.x_min_)
        _check_dense(self)
        return self


def _check_finite(name: str, value, ndim: int) -> None:
    """A stored parameter must be finite floats of ``ndim`` dimensions (bools refused)."""
    a = np.asarray(value)
    if a.ndim != ndim or a.dtype.kind not in "fiu" or not np.isfinite(a).all():
        raise ValueError(f"parameter {name!r} must be finite numbers of {ndim} dimension(s)")


def _check_dense(net: DenseNetRegressor) -> None:
    """Shapes and values of a stored network: each layer takes the previous one's width."""
    width = len(net.x_min_)
    for name in ("x_min_", "x_scale_"):
        _check_finite(name, getattr(net, name), 1)
        if len(getattr(net, name)) != width:
            raise ValueError("x_min and x_scale differ in length")
    if not (np.asarray(net.x_scale_) > 0).all() or not len(net.weights_) >= 2:
        raise ValueError("a network needs x_scale > 0 and at least one layer")
    for name in ("y_mean_", "y_std_"):
        _check_finite(name, getattr(net, name), 0)
    for i in range(0, len(net.weights_) - 1, 2):
        w, b = net.weights_[i], net.weights_[i + 1]
        _check_finite(f"w{i}", w, 2)
        _check_finite(f"w{i + 1}", b, 1)
        if w.shape[0] != width or b.shape != (w.shape[1],):
            raise ValueError(f"layer {i // 2} has shape {w.shape} after a width of {width}")
        width = w.shape[1]
    if len(net.weights_) % 2 or width != 1:
        raise ValueError("the network must end in one output")


class _TreeEnsemble(Estimator):
    """Shared state of the exported tree ensembles: a :class:`FlatTrees` plus an offset.

    Prediction is ``offset + scale * reduce(leaf values)`` with ``reduce`` the mean (forests) or
    the sum (boosting).
    """

    def _set_trees(self, trees, n_features: int) -> None:
        self.trees_ = FlatTrees.from_sklearn(trees)
        self.n_features_in_ = n_features

    def _leaf_sum(self, X) -> np.ndarray:
        check_is_fitted(self, "trees_")
        return self.trees_.sum_leaves(_as_2d(X))[:, 0]

    def to_state(self):
        check_is_fitted(self, "trees_")
        meta = {
            "params": self.get_params(),
            "depth": self.trees_.depth,
            "n_features": self.n_features_in_,
            "offset": getattr(self, "offset_", 0.0),
        }
        return meta, self.trees_.state(squeeze=True)

    @classmethod
    def from_state(cls, meta, arrays):
        self = cls(**meta["params"])
        self.n_features_in_ = int(meta["n_features"])
        self.trees_ = FlatTrees(arrays, meta["depth"], self.n_features_in_)
        self.offset_ = meta.get("offset", 0.0)
        return self


class ForestRegressor(_TreeEnsemble):
    """A scikit-learn random forest (or extra-trees) whose trees are exported as flat arrays.

    Parameters
    ----------
    n_estimators, max_features, min_samples_leaf, max_depth :
        As in :class:`sklearn.ensemble.RandomForestRegressor`.
    extra : bool
        Use :class:`~sklearn.ensemble.ExtraTreesRegressor` (random split points) instead.
    random_state : int
    n_jobs : int or None
    """

    def __init__(
        self,
        n_estimators=100,
        max_features=1.0,
        min_samples_leaf=1,
        max_depth=None,
        extra=False,
        random_state=0,
        n_jobs=None,
    ):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.extra = extra
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

        cls = ExtraTreesRegressor if self.extra else RandomForestRegressor
        forest = cls(
            n_estimators=self.n_estimators,
            max_features=self.max_features,
            min_samples_leaf=self.min_samples_leaf,
            max_depth=self.max_depth,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )
        forest.fit(_as_2d(X), np.asarray(y, dtype=np.float64))
        self._set_trees([e.tree_ for e in forest.estimators_], forest.n_features_in_)
        return self

    def predict(self, X):
        return self._leaf_sum(X) / self.trees_.n_trees


class BoostingRegressor(_TreeEnsemble):
    """scikit-learn gradient boosting (squared error) exported as flat arrays.

    Parameters
    ----------
    n_estimators, learning_rate, max_depth, subsample, min_samples_leaf :
        As in :class:`sklearn.ensemble.GradientBoostingRegressor`.
    random_state : int
    """

    def __init__(
        self,
        n_estimators=200,
        learning_rate=0.05,
        max_depth=3,
        subsample=0.8,
        min_samples_leaf=1,
        random_state=0,
    ):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.subsample = subsample
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def fit(self, X, y):
        from sklearn.ensemble import GradientBoostingRegressor

        y = np.asarray(y, dtype=np.float64)
        gb = GradientBoostingRegressor(
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            max_depth=self.max_depth,
            subsample=self.subsample,
            min_samples_leaf=self.min_samples_leaf,
            random_state=self.random_state,
        )
        gb.fit(_as_2d(X), y)
        self._set_trees([e.tree_ for e in gb.estimators_[:, 0]], gb.n_features_in_)
        # Squared-error boosting starts from the training mean.
        self.offset_ = float(gb.init_.constant_.ravel()[0])
        return self

    def predict(self, X):
        leaf_sum = self._leaf_sum(X)
        return self.offset_ + self.learning_rate * leaf_sum


class LinearModel(Estimator):
    """Ordinary or ridge least squares with its coefficients as plain arrays.

    Parameters
    ----------
    alpha : float
        L2 penalty on standardised inputs (0 = ordinary least squares).
    """

    def __init__(self, alpha=0.0):
        self.alpha = alpha

    def fit(self, X, y, sample_weight=None):
        from sklearn.linear_model import LinearRegression, Ridge

        X = _as_2d(X)
        mu, sd = X.mean(axis=0), X.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        model = Ridge(alpha=self.alpha) if self.alpha else LinearRegression()
        model.fit((X - mu) / sd, np.asarray(y, dtype=np.float64), sample_weight=sample_weight)
        self.coef_ = model.coef_ / sd
        self.intercept_ = float(model.intercept_ - (model.coef_ / sd) @ mu)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "coef_")
        return _as_2d(X) @ self.coef_ + self.intercept_

    def to_state(self):
        check_is_fitted(self, "coef_")
        return {"params": self.get_params(), "intercept": self.intercept_}, {"coef": self.coef_}

    @classmethod
    def from_state(cls, meta, arrays):
        self = cls(**meta["params"])
        self.coef_, self.intercept_ = arrays["coef"], meta["intercept"]
        _check_finite("coef", self.coef_, ndim=1)
        _check_finite("intercept", self.intercept_, ndim=0)
        self.n_features_in_ = len(self.coef_)
        return self
