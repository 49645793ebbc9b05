"""Will it fit? The probability that a training step fits in the target GPU's memory.

The data holds only the workloads that ran, so a (model, input, batch) measured on some instance
but absent on another is taken as "did not fit there" (the 8 GB M60 ran the fewest). A logistic
model on the log of a memory-need proxy and the log of the target's memory: the anchor latency
times the anchor's peak FLOPS (work done, which grows with activations), the pixels per batch
(batch x input^2) and the target's GPU memory.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._base import Estimator, check_is_fitted, kept_for
from ...errors import ProfetValueError
from ...inputs._gpu_specs import effective_tflops
from ._pairs import WORKLOAD


def fit_table(medians: pd.DataFrame, specs: pd.DataFrame) -> pd.DataFrame:
    """One row per (anchor, target, workload) with the workload measured on the anchor.

    Returns
    -------
    pandas.DataFrame
        ``anchor, target``, workload columns, ``anchor_latency_s``, ``fits`` (1 if the target
        measured it, else 0); targets are the instances with any rows.
    """
    lat = medians[["instance", *WORKLOAD, "latency_s"]]
    targets = pd.DataFrame({"target": sorted(lat["instance"].unique())})
    rows = lat.rename(columns={"instance": "anchor", "latency_s": "anchor_latency_s"}).merge(
        targets, how="cross"
    )
    rows = rows[rows["anchor"] != rows["target"]]
    seen = lat.assign(fits=1).rename(columns={"instance": "target"})[["target", *WORKLOAD, "fits"]]
    rows = rows.merge(seen, on=["target", *WORKLOAD], how="left")
    rows["fits"] = rows["fits"].fillna(0).astype(int)
    return rows.reset_index(drop=True)


def fit_features(
    anchor, target, batch_size, input_size, anchor_latency_s, specs, kept: bool = False
) -> np.ndarray:
    """(n, 3) log work proxy, log pixels per batch, log target memory (GB); ``kept``: the
    sheet's arrays read once per sheet (a fitted model's sheet, never changed in place)."""
    where, rate, mem = _spec_arrays(specs) if kept else _read_specs(specs)
    for name in set(np.atleast_1d(anchor)) | set(np.atleast_1d(target)):
        if name not in where:
            raise ProfetValueError(f"instance {name!r} not in the spec catalog")
    n = len(np.atleast_1d(anchor_latency_s))
    a = np.broadcast_to(np.asarray(anchor, dtype=object), (n,))
    t = np.broadcast_to(np.asarray(target, dtype=object), (n,))
    work = np.asarray(anchor_latency_s, dtype=float) * rate[[where[x] for x in a]]
    pixels = np.asarray(batch_size, dtype=float) * np.asarray(input_size, dtype=float) ** 2
    return np.column_stack(
        [
            np.log(work),
            np.broadcast_to(np.log(pixels), (n,)),
            np.log(mem[[where[x] for x in t]]),
        ]
    )


_SPEC_ARRAYS: dict = {}


def _spec_arrays(specs: pd.DataFrame) -> tuple[dict, np.ndarray, np.ndarray]:
    """``({instance: row}, effective TFLOPS, GPU memory GB)`` of a spec sheet, read once per
    sheet (a fitted model's, kept by identity; a few at a time)."""
    return kept_for(_SPEC_ARRAYS, specs, _read_specs, 8)


def _read_specs(specs: pd.DataFrame) -> tuple[dict, np.ndarray, np.ndarray]:
    # Instances are unique in a spec sheet: positions by a dict, the first of a name as
    # ``get_indexer`` would find it.
    names = specs["instance"].tolist()
    where = {name: i for i, name in reversed(list(enumerate(names)))}
    return where, effective_tflops(specs).to_numpy(), specs["gpu_memory_gb"].to_numpy()


#: Workload features (the log work proxy and log pixels per batch) may lie this far (log units:
#: a factor of 2) beyond the trained range; farther, no probability is given (NaN): batch
#: 1,000,000 once "fit" a T4 with P 0.99. The target's memory is not bounded (a new GPU's is
#: often beyond the measured ones').
RANGE_MARGIN = float(np.log(2.0))
#: Artifacts trained before the range was stored: the trained spread taken as mean +- this many
#: standard deviations.
FALLBACK_SDS = 3.0


class FitModel(Estimator):
    """Logistic probability that a workload fits the target's memory.

    Parameters
    ----------
    C : float
        Inverse L2 strength of the logistic regression.
    """

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, table: pd.DataFrame, specs: pd.DataFrame):
        """Fit on :func:`fit_table` rows."""
        from sklearn.linear_model import LogisticRegression

        X = self._X(table, specs)
        self.mean_, self.scale_ = X.mean(axis=0), np.where(X.std(axis=0) > 0, X.std(axis=0), 1)
        self.low_, self.high_ = X.min(axis=0), X.max(axis=0)
        lr = LogisticRegression(C=self.C).fit((X - self.mean_) / self.scale_, table["fits"])
        self.coef_, self.intercept_ = lr.coef_.ravel(), float(lr.intercept_[0])
        return self

    @staticmethod
    def _X(table, specs, kept=False):
        return fit_features(
            np.asarray(table["anchor"]),
            np.asarray(table["target"]),
            table["batch_size"],
            table["input_size"],
            table["anchor_latency_s"],
            specs,
            kept,
        )

    def _range(self) -> tuple[np.ndarray, np.ndarray]:
        low = getattr(self, "low_", None)
        if low is None:  # artifacts from before the range was stored
            return self.mean_ - FALLBACK_SDS * self.scale_, self.mean_ + FALLBACK_SDS * self.scale_
        return low, self.high_

    def in_range(self, table: pd.DataFrame, specs: pd.DataFrame, X=None) -> np.ndarray:
        """Per row, whether the workload lies within the trained range (:data:`RANGE_MARGIN`)."""
        X = self._X(table, specs) if X is None else X
        low, high = self._range()
        w = X[:, :2]
        with np.errstate(invalid="ignore"):
            ok = (w >= low[:2] - RANGE_MARGIN) & (w <= high[:2] + RANGE_MARGIN)
        return ok.all(axis=1)

    def predict_proba_table(
        self, table: pd.DataFrame, specs: pd.DataFrame, kept: bool = False
    ) -> np.ndarray:
        """P(fits) per row of a :func:`fit_table`-like frame (or a dict of its ``anchor``,
        ``target``, ``batch_size``, ``input_size``, ``anchor_latency_s`` arrays), shape (n,);
        NaN for workloads beyond the trained range (:meth:`in_range`), where the logistic curve
        says nothing. ``kept``: ``specs`` is a fitted model's sheet, read once."""
        check_is_fitted(self, "coef_")
        X = self._X(table, specs, kept)
        z = ((X - self.mean_) / self.scale_) @ self.coef_ + self.intercept_
        with np.errstate(over="ignore"):
            p = 1.0 / (1.0 + np.exp(-z))
        return np.where(self.in_range(table, specs, X), p, np.nan)

    def to_state(self):
        """``(meta, arrays)`` without pickle."""
        check_is_fitted(self, "coef_")
        arrays = {"coef": self.coef_, "mean": self.mean_, "scale": self.scale_}
        if getattr(self, "low_", None) is not None:
            arrays |= {"low": self.low_, "high": self.high_}
        return {"params": self.get_params(), "intercept": self.intercept_}, arrays

    @classmethod
    def from_state(cls, meta, arrays):
        """Rebuild from :meth:`to_state`."""
        m = cls(**meta["params"])
        m.coef_, m.mean_, m.scale_ = arrays["coef"], arrays["mean"], arrays["scale"]
        m.low_, m.high_ = arrays.get("low"), arrays.get("high")
        m.intercept_ = float(meta["intercept"])
        return m


def validate_fit(medians: pd.DataFrame, specs: pd.DataFrame) -> pd.DataFrame:
    """Leave-one-architecture-out accuracy and Brier score per target, vs the base rate.

    Returns
    -------
    pandas.DataFrame
        Per target and ``all``: ``rows``, ``not_fit`` (negatives), ``accuracy_pct``,
        ``brier``, ``brier_base_rate`` (constant training share of fits) and
        ``recall_not_fit_pct`` (negatives given P < 0.5).
    """
    table = fit_table(medians, specs)
    p = np.empty(len(table))
    base = np.empty(len(table))
    for arch in table["model"].unique():
        test = (table["model"] == arch).to_numpy()
        model = FitModel().fit(table[~test], specs)
        p[test] = model.predict_proba_table(table[test], specs)
        base[test] = table.loc[~test, "fits"].mean()
    table = table.assign(p=p, base=base)
    out = []
    for name, g in [*table.groupby("target"), ("all", table)]:
        y = g["fits"].to_numpy()
        neg = y == 0
        out.append(
            {
                "target": name,
                "rows": len(g),
                "not_fit": int(neg.sum()),
                "accuracy_pct": 100 * np.mean((g["p"] >= 0.5) == y),
                "brier": np.mean((g["p"] - y) ** 2),
                "brier_base_rate": np.mean((g["base"] - y) ** 2),
                "recall_not_fit_pct": 100 * np.mean(g["p"][neg] < 0.5) if neg.any() else np.nan,
            }
        )
    return pd.DataFrame(out)


def fit_probability(predictor, anchor, targets, lat, sizes, n) -> tuple[np.ndarray, tuple]:
    """P(the step fits the target's memory) per (row, target), NaN without sizes or latency or
    beyond the workloads trained on; and a note naming the rows left without one.

    Parameters
    ----------
    predictor : Predictor
        Its ``fits`` (:class:`FitModel` or None) and ``cross.specs_`` are used.
    anchor : str
    targets : list of str
    lat : ndarray of shape (n,) or None
        Anchor latency per row (s).
    sizes : (ndarray, ndarray) or None
        Batch and input sizes per row.
    n : int
        Rows.

    Returns
    -------
    (ndarray of shape (n * len(targets),), tuple of str)
    """
    fits = predictor.fits
    out = np.full(n * len(targets), np.nan)
    if fits is None or sizes is None or lat is None:
        return out, ()
    specs = predictor.cross.specs_
    have = _spec_arrays(specs)[0]
    known = [t for t in targets if t in have]
    if anchor not in have or not known:
        return out, ()
    # Plain arrays, not a frame: the model reads these columns only.
    lat_rows = np.repeat(np.asarray(lat, dtype=float), len(targets))
    ok = np.tile([t in have for t in targets], n) & np.isfinite(lat_rows)
    if ok.any():
        rows = {
            "anchor": np.full(int(ok.sum()), anchor, dtype=object),
            "target": np.tile(np.asarray(targets, dtype=object), n)[ok],
            "batch_size": np.repeat(sizes[0], len(targets))[ok],
            "input_size": np.repeat(sizes[1], len(targets))[ok],
            "anchor_latency_s": lat_rows[ok],
        }
        out[ok] = fits.predict_proba_table(rows, specs, kept=True)  # the model's own sheet
    far = ok & np.isnan(out)
    if not far.any():
        return out, ()
    i = int(np.flatnonzero(far)[0]) // len(targets)
    where = "" if n == 1 else f" (row {i} and any like it)"
    return out, (
        f"no P(fits) for batch {sizes[0][i]:,.0f} at {sizes[1][i]:,.0f} px with "
        f"{lat[i] * 1e3:.4g} ms per step{where}: the workload is far beyond those the memory "
        "model was trained on (batch 16-256, 32-256 px), where it can say nothing",
    )
