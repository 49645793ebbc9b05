"""Scalers: latency at any batch size (or input size) from latencies measured at two sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._errors import ProfetValueError

#: For each scaling dimension: the size column, and the columns that identify one curve.
DIMENSIONS = {
    "batch": ("batch_size", ["exp", "instance", "model", "input_size"]),
    "input": ("input_size", ["exp", "instance", "model", "batch_size"]),
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
        columns={size_col: "size", "batch_latency_s": "latency_s"})
    ends = df[df["size"].isin([lo, hi])].pivot_table(index=group, columns="size", values="latency_s")
    if lo not in ends.columns or hi not in ends.columns:
        return df.iloc[:0].assign(lat_lo_s=[], lat_hi_s=[])
    ends = ends[[lo, hi]].dropna().set_axis(["lat_lo_s", "lat_hi_s"], axis=1).reset_index()
    ends = ends[ends["lat_hi_s"] != ends["lat_lo_s"]]
    return df.merge(ends, on=group, how="inner")


class CurveScaler(BaseEstimator):
    """A normalised latency-vs-size curve ``f`` with ``f(lo) = 0`` and ``f(hi) = 1``.

    Latency at size ``n``, given latencies ``La`` at size ``a`` and ``Lb`` at size ``b``::

        L(n) = La + (f(n) - f(a)) / (f(b) - f(a)) * (Lb - La)

    With ``a, b`` the trained ends this is PROFET's scaler: ``L(n) = La + f(n) (Lb - La)``.

    Parameters
    ----------
    degree : int
        Polynomial degree of ``f`` in the normalised size.
    through_ends : bool
        Constrain ``f`` to pass exactly through (0, 0) and (1, 1) (``f = x + x(1-x)(c0 + c1 x...)``);
        PROFET fits an unconstrained polynomial.
    size_power : float
        Normalise ``size ** size_power``: 2 for input side length makes ``x`` the pixel count,
        which the work grows with; PROFET uses 1.
    """

    def __init__(self, degree=2, through_ends=False, size_power=1.0):
        self.degree = degree
        self.through_ends = through_ends
        self.size_power = size_power

    def _x(self, size):
        s = np.asarray(size, dtype=float) ** self.size_power
        lo, hi = self.size_range_
        return (s - lo**self.size_power) / (hi**self.size_power - lo**self.size_power)

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
            base = x * (1 - x)
            c = []
            if self.degree > 1:
                A = np.column_stack([base * x**k for k in range(self.degree - 1)])
                c, *_ = np.linalg.lstsq(A, y - x, rcond=None)
            # Expand x + x(1-x) * sum c_k x^k into plain polynomial coefficients (highest first).
            poly = np.polynomial.Polynomial([0, 1])
            for k, ck in enumerate(c):
                poly = poly + ck * np.polynomial.Polynomial([0, 1, -1]) * np.polynomial.Polynomial([0] * k + [1])
            coef = poly.coef[::-1]
        else:
            coef = np.polyfit(x, y, self.degree)
        self.coef_ = np.asarray(coef, dtype=float)
        return self

    def curve(self, size) -> np.ndarray:
        """``f(size)``: the fitted normalised curve."""
        check_is_fitted(self, "coef_")
        return np.polyval(self.coef_, self._x(size))

    def predict(self, latency_a, latency_b, size, size_a=None, size_b=None) -> np.ndarray:
        """Latency at ``size`` from latencies at ``size_a`` and ``size_b`` (default: trained ends).

        Units of the result are those of ``latency_a``/``latency_b``.
        """
        check_is_fitted(self, "coef_")
        lo, hi = self.size_range_
        size_a = lo if size_a is None else size_a
        size_b = hi if size_b is None else size_b
        fa, fb = self.curve(size_a), self.curve(size_b)
        if np.any(fa == fb):
            raise ProfetValueError(f"sizes {size_a} and {size_b} give the same scaler value; pick two different sizes")
        frac = (self.curve(size) - fa) / (fb - fa)
        return np.asarray(latency_a, dtype=float) + frac * (np.asarray(latency_b, dtype=float) - latency_a)

    def to_state(self):
        check_is_fitted(self, "coef_")
        return {"params": self.get_params(), "size_range": list(self.size_range_)}, {"coef": self.coef_}

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
    y = (curves["latency_s"] - curves["lat_lo_s"]) / (curves["lat_hi_s"] - curves["lat_lo_s"])
    return CurveScaler(**params).fit(curves["size"].to_numpy(), y.to_numpy(), size_range)
