"""The one-point scaler model: how a CNN's step latency on one instance grows with the size.

From one latency ``L0`` at size ``s0`` on a target instance, the latency at size ``s1`` is
``L0 * (s1 / s0) ** (p * e)`` with ``p`` the work's power of the size (1 for the batch, 2 for the
input side length: the pixel count) and ``e`` an elasticity learned from the training CNNs: 1 is
linear in the work, 0 a step whose time is all fixed overhead. ``e`` is predicted by extra-trees
from the target instance, the sizes, the given latency and (when there is one) the anchor
profile's scale-free features; clipping it to ``0..ELASTICITY_MAX`` keeps every curve rising.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._base import Estimator, check_is_fitted
from ..errors import ProfetValueError
from ..features._profile_features import FREE_FEATURES, ProfileFeatures
from ..models._estimators import ForestRegressor

#: Power of the size that is proportional to a step's work, per scaling dimension.
POWER = {"batch": 1.0, "input": 2.0}
#: The size column of each dimension, and the column held fixed along it.
SIZE_COLUMN = {"batch": "batch_size", "input": "input_size"}
OTHER_COLUMN = {"batch": "input_size", "input": "batch_size"}
#: Elasticities are clipped to this range (above 1.5 would mean a step that slows down more than
#: its work grows by half as much again; none of the training curves does).
ELASTICITY_MAX = 1.5
#: Log-space interval columns stored per (target, step): ``step`` is ``|log2(s1 / s0)|``.
INTERVAL_COLUMNS = ("target", "step", "q_lo", "q_hi")
_KEY = ["instance", "model", "input_size", "batch_size"]


def one_point_pairs(dataset, by: str) -> pd.DataFrame:
    """Every (size, other size) pair of one CNN's latency curve on each instance, with the
    anchor profiles taken at the first size.

    Parameters
    ----------
    dataset : Dataset
    by : {"batch", "input"}

    Returns
    -------
    pandas.DataFrame
        One row per target, anchor, model, ``other`` (the fixed size), ``s0 != s1``:
        ``L0_s``/``L1_s`` (median batch latency over the repetitions, seconds, on the target at
        ``s0``/``s1``) and the anchor profile's :data:`FREE_FEATURES` at ``s0`` (median op
        times over the repetitions).
    """
    if by not in POWER:
        raise ProfetValueError(f"scale by {str(by)[:40]!r}; allowed: batch, input")
    size, other = SIZE_COLUMN[by], OTHER_COLUMN[by]
    lat = dataset.latencies.groupby(_KEY, as_index=False)["batch_latency_s"].median()
    lat = lat.rename(columns={"instance": "target", other: "other"})
    a = lat.rename(columns={size: "s0", "batch_latency_s": "L0_s"})
    b = lat.rename(columns={size: "s1", "batch_latency_s": "L1_s"})
    pairs = a.merge(b, on=["target", "model", "other"])
    pairs = pairs[pairs["s0"] != pairs["s1"]]
    ops = list(dataset.ops)
    prof = dataset.profiles.groupby(_KEY, as_index=False)[ops].median()
    free = pd.DataFrame(ProfileFeatures.from_ops(prof[ops]).free, columns=list(FREE_FEATURES))
    free[["anchor", "model", "other", "s0"]] = prof[["instance", "model", other, size]].to_numpy()
    free[["other", "s0"]] = free[["other", "s0"]].astype(float)
    pairs = pairs.astype({"other": float, "s0": float, "s1": float})
    return pairs.merge(free, on=["model", "other", "s0"]).reset_index(drop=True)


def elasticity(pairs: pd.DataFrame, by: str) -> np.ndarray:
    """``log(L1 / L0) / (p log(s1 / s0))`` of each pair: shape (n,)."""
    step = POWER[by] * np.log(pairs["s1"].to_numpy() / pairs["s0"].to_numpy())
    return np.log(pairs["L1_s"].to_numpy() / pairs["L0_s"].to_numpy()) / step


class OnePointScaler(Estimator):
    """Latency at any size on a target instance from one latency there (see module docstring).

    Parameters
    ----------
    by : {"batch", "input"}
    use_profile : bool
        Use the anchor profile's features; without, only the target, the sizes and the latency.
    n_estimators, min_samples_leaf : int
        Of the extra-trees regressor of the elasticity.
    random_state : int
    """

    def __init__(
        self, by="batch", use_profile=True, n_estimators=30, min_samples_leaf=10, random_state=0
    ):
        self.by = by
        self.use_profile = use_profile
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def _design(self, onehot, s0, s1, other, latency_s, free) -> np.ndarray:
        cols = [
            onehot,
            np.log(s1 / s0)[:, None],
            np.log(s0)[:, None],
            np.log(other)[:, None],
            np.log(latency_s)[:, None],
        ]
        if self.use_profile:
            # The latency against the anchor's device-busy time (log us): how much of the step
            # the profiled work explains.
            cols += [free, (np.log(latency_s * 1e6) - free[:, 0])[:, None]]
        return np.column_stack(cols)

    def fit(self, pairs: pd.DataFrame):
        """Fit on :func:`one_point_pairs` rows (latency-only: one row per distinct curve pair)."""
        if self.by not in POWER:
            raise ProfetValueError(f"scale by {str(self.by)[:40]!r}; allowed: batch, input")
        if not self.use_profile:
            pairs = pairs.drop_duplicates(["target", "model", "other", "s0", "s1"])
        if pairs.empty:
            raise ProfetValueError("no latency curve pairs to fit the one-point scaler on")
        self.targets_ = sorted(pairs["target"].unique())
        self.size_range_ = (float(pairs["s0"].min()), float(pairs["s0"].max()))
        self.sizes_ = sorted(float(v) for v in set(pairs["s0"]) | set(pairs["s1"]))
        self.other_range_ = (float(pairs["other"].min()), float(pairs["other"].max()))
        onehot = (pairs["target"].to_numpy()[:, None] == np.array(self.targets_)).astype(float)
        X = self._design(onehot, *self._columns(pairs))
        forest = ForestRegressor(
            n_estimators=self.n_estimators,
            min_samples_leaf=self.min_samples_leaf,
            extra=True,
            random_state=self.random_state,
        )
        self.forest_ = forest.fit(X, elasticity(pairs, self.by))
        self.intervals_ = pd.DataFrame(columns=list(INTERVAL_COLUMNS))
        return self

    def _columns(self, pairs):
        free = pairs[list(FREE_FEATURES)].to_numpy(dtype=float) if self.use_profile else None
        return (*(pairs[c].to_numpy(dtype=float) for c in ("s0", "s1", "other", "L0_s")), free)

    def predict_log_ratio(self, target, s0, s1, other, latency_s, free=None) -> np.ndarray:
        """``log(L(s1) / L(s0))`` on ``target``: shape (n,).

        Parameters
        ----------
        target : str or None
            A trained target; any other (or None) takes the median over the trained targets.
        s0, s1, other, latency_s : float or array of shape (n,)
            Given size, size to predict, the fixed other size, latency at ``s0`` (seconds).
        free : ndarray of shape (n, len(FREE_FEATURES)), optional
            The anchor profile's features (required when ``use_profile``).
        """
        check_is_fitted(self, "forest_")
        s0, s1, other, lat = np.broadcast_arrays(
            *(np.atleast_1d(np.asarray(v, dtype=float)) for v in (s0, s1, other, latency_s))
        )
        if self.use_profile:
            if free is None:
                raise ProfetValueError("this one-point scaler needs the anchor profile's features")
            free = np.broadcast_to(np.atleast_2d(free), (len(s0), len(FREE_FEATURES)))
        known = target in self.targets_
        chosen = [self.targets_.index(target)] if known else range(len(self.targets_))
        preds = []
        for i in chosen:
            onehot = np.zeros((len(s0), len(self.targets_)))
            onehot[:, i] = 1.0
            preds.append(self._smooth_elasticity(onehot, s0, s1, other, lat, free))
        return np.median(preds, axis=0) * POWER[self.by] * np.log(s1 / s0)

    def _knots(self):
        """The sizes the curves were measured at; None in artifacts from before they were
        stored (retrain to smooth their curves)."""
        sizes = getattr(self, "sizes_", None)
        return None if not sizes else np.asarray(sizes, dtype=float)

    def _smooth_elasticity(self, onehot, s0, s1, other, lat, free) -> np.ndarray:
        """The clipped elasticity at ``s1``: the forest's at the measured sizes, linear in
        ``log s1`` between them. The forest alone is a step function of ``log(s1 / s0)`` (its
        random split thresholds fall anywhere between two measured sizes), which drew jumps into
        the curve between them (e.g. near 203, 209 and 218 px)."""

        def forest(rows, sizes):
            f = None if free is None else free[rows]
            X = self._design(onehot[rows], s0[rows], sizes, other[rows], lat[rows], f)
            return np.clip(self.forest_.predict(X), 0.0, ELASTICITY_MAX)

        knots = self._knots()
        if knots is None:
            return forest(np.arange(len(s1)), s1)
        e = np.empty(len(s1))
        at = np.isin(s1, knots)
        if at.any():
            e[at] = forest(np.flatnonzero(at), s1[at])
        off = np.flatnonzero(~at)
        if off.size:
            rows = np.repeat(off, len(knots))
            ek = forest(rows, np.tile(knots, off.size)).reshape(off.size, len(knots))
            x, xk = np.log(s1[off]), np.log(knots)
            j = np.clip(np.searchsorted(xk, x), 1, len(knots) - 1)
            w = np.clip((x - xk[j - 1]) / (xk[j] - xk[j - 1]), 0.0, 1.0)
            n = np.arange(off.size)
            e[off] = (1 - w) * ek[n, j - 1] + w * ek[n, j]
        return e

    def interval(self, target, s0, s1) -> tuple[np.ndarray, np.ndarray]:
        """Log-space bounds ``(lo, hi)`` around :meth:`predict_log_ratio`: validation quantiles
        interpolated in ``|log2(s1 / s0)|`` (0 at ``s0``); NaN where not calibrated. Targets not
        trained take the widest trained target's bounds."""
        check_is_fitted(self, "forest_")
        step = np.abs(np.log2(np.asarray(s1, dtype=float) / np.asarray(s0, dtype=float)))
        iv = self.intervals_
        rows = iv[iv["target"] == target] if target in self.targets_ else iv
        if rows.empty:
            return np.full(np.shape(step), np.nan), np.full(np.shape(step), np.nan)
        g = rows.groupby("step").agg(q_lo=("q_lo", "min"), q_hi=("q_hi", "max")).sort_index()
        x = np.concatenate([[0.0], g.index.to_numpy(dtype=float)])
        return tuple(
            np.interp(step, x, np.concatenate([[0.0], g[q].to_numpy(dtype=float)]))
            for q in ("q_lo", "q_hi")
        )

    def to_state(self):
        check_is_fitted(self, "forest_")
        meta, arrays = self.forest_.to_state()
        iv = self.intervals_
        return {
            "params": self.get_params(),
            "targets": list(self.targets_),
            "size_range": list(self.size_range_),
            "sizes": list(getattr(self, "sizes_", None) or []),
            "other_range": list(self.other_range_),
            "forest": meta,
            "intervals": {c: iv[c].tolist() for c in INTERVAL_COLUMNS},
        }, arrays

    @classmethod
    def from_state(cls, meta, arrays):
        self = cls(**meta["params"])
        self.targets_ = list(meta["targets"])
        self.size_range_ = tuple(meta["size_range"])
        # stored since the curves were smoothed; older artifacts draw the forest's steps (_knots)
        self.sizes_ = [float(v) for v in meta.get("sizes", [])]
        self.other_range_ = tuple(meta["other_range"])
        self.forest_ = ForestRegressor.from_state(meta["forest"], arrays)
        self.intervals_ = pd.DataFrame(meta["intervals"], columns=list(INTERVAL_COLUMNS))
        return self
