"""Scalers: latency at any batch size (or input size) from latencies measured at two sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._base import Estimator, check_is_fitted
from ..errors import ProfetValueError

#: For each scaling dimension: the size column, and the columns that identify one curve.
DIMENSIONS = {
    "batch": ("batch_size", ["exp", "instance", "model", "input_size"]),
    "input": ("input_size", ["exp", "instance", "model", "batch_size"]),
}


#: Scaler settings per variant; "profet" is the paper's, "default" is what predictions use.
SCALER_VARIANTS = {
    "profet": {"batch": {"degree": 2}, "input": {"degree": 2}},
    # Latency linear in the work: batch size, or pixel count (side length squared). It has
    # nothing fitted to the 12 training CNNs, and on leave-one-architecture-out it had the
    # lowest worst-instance error in both dimensions (docs/accuracy.md; the learned,
    # ratio-aware shape that was the input default before missed by 3.9-8.6% / 7.9-10.2%).
    "default": {
        "batch": {"degree": 1, "through_ends": True},
        "input": {"degree": 1, "through_ends": True, "size_power": 2.0},
    },
}


def scaling_curves(latencies: pd.DataFrame, by: str) -> pd.DataFrame:
    """Latency curves along one dimension, each normalised to its two ends.

    Parameters
    ----------
    latencies : pandas.DataFrame
        Columns ``exp, instance, model, input_size, batch_size, batch_latency_s``.
    by : {"batch", "input"}

    Returns
    -------
    pandas.DataFrame
        Curves that reach both the smallest and the largest size of the table: the curve key,
        ``size``, ``latency_s``, ``lat_lo_s`` and ``lat_hi_s`` (the curve's latencies at the two
        ends). Curves whose ends are equal are dropped (nothing to interpolate).
    """
    if by not in DIMENSIONS:
        raise ProfetValueError(f"scale by {by!r}; allowed: {sorted(DIMENSIONS)}")
    size_col, group = DIMENSIONS[by]
    lo, hi = latencies[size_col].min(), latencies[size_col].max()
    df = latencies[[*group, size_col, "batch_latency_s"]].rename(
        columns={size_col: "size", "batch_latency_s": "latency_s"}
    )
    ends = df[df["size"].isin([lo, hi])].pivot_table(
        index=group, columns="size", values="latency_s"
    )
    if lo not in ends.columns or hi not in ends.columns:
        return df.iloc[:0].assign(lat_lo_s=[], lat_hi_s=[])
    ends = ends[[lo, hi]].dropna().set_axis(["lat_lo_s", "lat_hi_s"], axis=1).reset_index()
    ends = ends[ends["lat_hi_s"] != ends["lat_lo_s"]]
    return df.merge(ends, on=group, how="inner")


class CurveScaler(Estimator):
    """A normalised latency-vs-size curve ``f`` with ``f(lo) ~ 0`` and ``f(hi) ~ 1``.

    Latency at size ``n``, given latencies ``La`` at size ``a`` and ``Lb`` at size ``b``::

        L(n) = La + (f(n) - f(a)) / (f(b) - f(a)) * (Lb - La)

    With ``a, b`` the trained ends this is PROFET's scaler: ``L(n) = La + f(n) (Lb - La)``.

    Parameters
    ----------
    degree : int
        Polynomial degree of ``f`` in the normalised size ``x`` (1 = linear in the work).
    through_ends : bool
        Constrain ``f`` to pass exactly through (0, 0) and (1, 1):
        ``f = x + x (1 - x) sum_k c_k x^k``. PROFET fits an unconstrained polynomial.
    size_power : float
        Normalise ``size ** size_power`` (2 for the input side length makes ``x`` the pixel
        count); PROFET uses 1.
    """

    def __init__(self, degree=2, through_ends=False, size_power=1.0):
        self.degree = degree
        self.through_ends = through_ends
        self.size_power = size_power

    def _x(self, size):
        s = np.asarray(size, dtype=float) ** self.size_power
        lo, hi = self.size_range_
        return (s - lo**self.size_power) / (hi**self.size_power - lo**self.size_power)

    def _design(self, x):
        x = np.asarray(x, dtype=float)
        cols = [x * (1 - x) * x**k for k in range(self.degree - 1)]
        return np.stack(cols, axis=-1) if cols else np.zeros((*np.shape(x), 0))

    def fit(self, sizes, y, size_range):
        """Fit ``f`` to normalised latencies.

        Parameters
        ----------
        sizes : array of shape (n,)
            Batch or input sizes.
        y : array of shape (n,)
            ``(latency - latency_at_lo) / (latency_at_hi - latency_at_lo)``.
        size_range : tuple (lo, hi)
        """
        if self.degree < 1:
            raise ProfetValueError(f"scaler degree {self.degree!r}; allowed: 1 or more")
        self.size_range_ = (float(size_range[0]), float(size_range[1]))
        x, y = self._x(sizes), np.asarray(y, dtype=float)
        if self.through_ends:
            A = self._design(x)
            coef = np.zeros(A.shape[1])
            if A.shape[1]:
                coef, *_ = np.linalg.lstsq(A, y - x, rcond=None)
        else:
            coef = np.polyfit(x, y, self.degree)
        self.coef_ = np.asarray(coef, dtype=float)
        return self

    def curve(self, size) -> np.ndarray:
        """``f(size)``: the fitted normalised curve."""
        check_is_fitted(self, "coef_")
        x = self._x(size)
        if not self.through_ends:
            return np.polyval(self.coef_, x)
        return x + self._design(x) @ self.coef_

    def predict(self, latency_a, latency_b, size, size_a=None, size_b=None) -> np.ndarray:
        """Latency at ``size`` from latencies at ``size_a`` and ``size_b`` (default: trained ends).

        Units of the result are those of ``latency_a``/``latency_b``.
        """
        check_is_fitted(self, "coef_")
        lo, hi = self.size_range_
        size_a = lo if size_a is None else size_a
        size_b = hi if size_b is None else size_b
        la, lb = np.asarray(latency_a, dtype=float), np.asarray(latency_b, dtype=float)
        fa, fb = self.curve(size_a), self.curve(size_b)
        if np.any(fa == fb):
            raise ProfetValueError(
                f"sizes {size_a} and {size_b} give the same scaler value; pick two different sizes"
            )
        frac = (self.curve(size) - fa) / (fb - fa)
        return la + frac * (lb - la)

    def predict_points(self, sizes, latencies, size) -> np.ndarray:
        """Latency at ``size`` from latencies measured at two or more sizes.

        Between two neighbouring measured sizes this is :meth:`predict` on that pair; outside
        them, the nearest pair's curve is extended. With the default (linear-in-work) scaler this
        is piecewise-linear interpolation through every measured point.

        Parameters
        ----------
        sizes : sequence of float, length k >= 2
            Distinct measured sizes, in any order.
        latencies : sequence of length k of float or of arrays of shape (n,)
            Latency at each size (any unit; the result has the same), one value per curve.
        size : float or array of shape (n,)
            Size(s) to predict.
        """
        check_is_fitted(self, "coef_")
        sizes = np.asarray(sizes, dtype=float)
        if sizes.ndim != 1 or len(sizes) < 2 or len(np.unique(sizes)) != len(sizes):
            raise ProfetValueError(f"sizes {sizes.tolist()!r}: need two or more distinct sizes")
        if len(latencies) != len(sizes):
            raise ProfetValueError(f"{len(latencies)} latencies for {len(sizes)} sizes")
        order = np.argsort(sizes)
        sizes = sizes[order]
        lats = [np.asarray(latencies[i], dtype=float) for i in order]
        size = np.asarray(size, dtype=float)
        segment = np.clip(np.searchsorted(sizes, size, side="right") - 1, 0, len(sizes) - 2)
        out = np.full(np.broadcast_shapes(size.shape, *(v.shape for v in lats)), np.nan)
        for i in range(len(sizes) - 1):
            part = self.predict(lats[i], lats[i + 1], size, sizes[i], sizes[i + 1])
            out = np.where(segment == i, part, out)
        return out

    def to_state(self):
        check_is_fitted(self, "coef_")
        return {"params": self.get_params(), "size_range": list(self.size_range_)}, {
            "coef": self.coef_
        }

    @classmethod
    def from_state(cls, meta, arrays):
        self = cls(**meta["params"])
        self.size_range_ = tuple(meta["size_range"])
        self.coef_ = arrays["coef"]
        return self


def fit_scaler(curves: pd.DataFrame, size_range, **params) -> CurveScaler:
    """Fit a :class:`CurveScaler` on curves from :func:`scaling_curves`."""
    if curves.empty:
        raise ProfetValueError("no complete latency curves to fit a scaler on")
    span = curves["lat_hi_s"] - curves["lat_lo_s"]
    y = (curves["latency_s"] - curves["lat_lo_s"]) / span
    return CurveScaler(**params).fit(curves["size"].to_numpy(), y.to_numpy(), size_range)
