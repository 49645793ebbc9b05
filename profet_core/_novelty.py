"""How unlike the training profiles a profile is: a k-nearest-neighbour distance.

Leave-one-architecture-out errors grow with this distance (docs/accuracy.md: the held-out CNNs
farthest from the rest, MobileNetV2, LeNet5, InceptionResNetV2, are the ones predicted worst), so
it widens prediction intervals and warns users whose network is unlike anything trained on.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .errors import ProfetValueError


class ProfileNovelty(BaseEstimator):
    """Mean Euclidean distance to the ``n_neighbors`` nearest training rows, in standardised units.

    Parameters
    ----------
    n_neighbors : int
        Neighbours averaged (several, so one near-duplicate row does not hide novelty).
    scale_floor : float
        Smallest per-feature scale. A feature that is constant in training (an op family no
        training CNN used, e.g. depthwise convolutions) would otherwise make any change in it
        infinitely novel.
    clip : float
        Largest per-feature distance, in scales: one extreme feature counts as very unusual,
        not as everything.
    """

    def __init__(self, n_neighbors=5, scale_floor=0.05, clip=5.0):
        self.n_neighbors = n_neighbors
        self.scale_floor = scale_floor
        self.clip = clip

    def fit(self, X):
        """Remember the training rows.

        Parameters
        ----------
        X : array of shape (n, n_features)
            Features of the training profiles (e.g. ``profile_features`` without latency).
        """
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or len(X) < 1 or not np.isfinite(X).all():
            raise ProfetValueError("novelty needs a finite 2-D feature table with at least one row")
        self.center_ = X.mean(axis=0)
        self.scale_ = np.maximum(X.std(axis=0), self.scale_floor)
        self.reference_ = self._z(X)
        return self

    def _z(self, X):
        return np.clip(
            (np.asarray(X, dtype=float) - self.center_) / self.scale_, -self.clip, self.clip
        )

    def distance(self, X) -> np.ndarray:
        """Novelty of each row of ``X`` (shape (n, n_features)): ndarray of shape (n,), >= 0."""
        check_is_fitted(self, "reference_")
        Z = self._z(X)
        ref = self.reference_
        # Squared distances without an (n, m, d) temporary: |z|^2 - 2 z.r + |r|^2.
        d2 = (Z**2).sum(axis=1)[:, None] - 2 * Z @ ref.T + (ref**2).sum(axis=1)[None, :]
        d = np.sqrt(np.maximum(d2, 0.0))
        k = min(self.n_neighbors, ref.shape[0])
        return np.sort(d, axis=1)[:, :k].mean(axis=1)

    def to_state(self):
        check_is_fitted(self, "reference_")
        return (
            {"params": self.get_params()},
            {"center": self.center_, "scale": self.scale_, "reference": self.reference_},
        )

    @classmethod
    def from_state(cls, meta, arrays):
        self = cls(**meta["params"])
        self.center_, self.scale_, self.reference_ = (
            arrays["center"],
            arrays["scale"],
            arrays["reference"],
        )
        return self
