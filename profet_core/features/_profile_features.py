"""Features of anchor profiles: semantic op families, scale-free profile features, novelty.

A new architecture brings op types the training data never had (``Conv3D``, ``LayerNorm``,
``Gelu``...). Keyword rules put them with the ops they resemble in cost, so features built on
families transfer to unseen CNNs; the Levenshtein clustering of the PROFET reference cannot do
that for names that are short edit distances from unrelated ops (``Relu`` vs ``Rsqrt``).
Everything here is computed once per ``Predictor.predict`` call (:class:`ProfileFeatures`), as
none of it depends on the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from .._base import Estimator, check_is_fitted
from .._schema import OP_PREFIXES, op_columns
from ..errors import ProfetValueError

#: (family, regex on the lower-cased op type), first match wins.
FAMILY_RULES = (
    # Depthwise convolutions are memory-bound and scale across GPUs unlike dense ones.
    ("depthwise", r"depthwise"),
    ("conv", r"conv"),
    ("matmul", r"matmul|einsum|batchmatmul|dense"),
    ("norm", r"batchnorm|layernorm|groupnorm|instancenorm|lrn"),
    ("pool", r"pool"),
    ("activation", r"relu|elu|sigmoid|tanh|softplus|swish|gelu|silu"),
    ("optimizer", r"apply|assign"),
    ("transfer", r"send|recv|memcpy|copy"),
    ("input", r"dataset|iterator|decode|prefetch"),
    (
        "elementwise",
        r"add|mul|sub|div|square|sqrt|neg|bias|cast|equal|greater|less|logical|pad"
        r"|slice|concat|tile|transpose|broadcast|sum|mean|max|min|softmax|stitch"
        r"|random|pack|reshape|select|exp|log|argm|gather|where|fill|identity",
    ),
)
FAMILIES = tuple(f for f, _ in FAMILY_RULES) + ("other",)
#: Columns of :func:`family_times`: the families, then idle time.
FAMILY_COLUMNS = (*FAMILIES, "idle")


def op_family(op: str) -> str:
    """Family of an op column (``Device_Conv2DBackpropFilter`` -> ``conv``); IDLE -> ``idle``."""
    name = op.split("_", 1)[1] if op.startswith(OP_PREFIXES) else op
    low = name.lower().lstrip("_")
    if low == "idle":
        return "idle"
    for family, rx in FAMILY_RULES:
        if re.search(rx, low):
            return family
    return "other"


def lookalike_ops(ops, vocabulary, max_distance: float = 6.0) -> dict[str, str]:
    """Ops outside ``vocabulary`` counted in the same family as a known op they resemble.

    Family rules take a misspelt or unseen op (``Device_Conv2DBackpropFiltr``) as the work of
    the known ops of its family; naming the known op nearest in edit distance tells the user
    what it was taken for, as the reference method's clustering does.

    Parameters
    ----------
    ops : iterable of str
        Op columns (``Device_*``; others are skipped).
    vocabulary : collection of str
        The op columns seen in training.
    max_distance : float
        Largest edit distance reported (the op clustering's threshold).

    Returns
    -------
    dict of str to str
        Each unseen ``Device_*`` op -> the nearest known op of its family, where within
        ``max_distance``.
    """
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import extractOne

    known = sorted(v for v in vocabulary if v.startswith("Device_") and v != "Device_IDLE")
    out = {}
    for op in ops:
        if not op.startswith("Device_") or op == "Device_IDLE" or op in vocabulary:
            continue
        same = [v for v in known if op_family(v) == op_family(op)]
        best = extractOne(op, same, scorer=Levenshtein.distance) if same else None
        if best is not None and best[1] <= max_distance:
            out[op] = best[0]
    return out


@lru_cache(maxsize=64)
def _family_matrix(columns: tuple, side: str) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``side``'s columns and their one-hot family matrix (n_cols, n_families)."""
    pos = [i for i, c in enumerate(columns) if c.startswith(side + "_")]
    onehot = np.zeros((len(pos), len(FAMILY_COLUMNS)))
    for row, i in enumerate(pos):
        onehot[row, FAMILY_COLUMNS.index(op_family(columns[i]))] = 1.0
    return np.asarray(pos, dtype=int), onehot


def family_matrix(profiles: pd.DataFrame, side: str = "Device", values=None) -> np.ndarray:
    """Op times summed per family: ndarray of shape (n_rows, len(FAMILY_COLUMNS)), microseconds.

    ``values``: the op columns of ``profiles`` as floats, if at hand (saves converting them).
    """
    cols = tuple(op_columns(profiles.columns))
    pos, onehot = _family_matrix(cols, side)
    if values is None:
        values = _op_values(profiles, cols)
    return values[:, pos] @ onehot


def _op_values(profiles: pd.DataFrame, cols: tuple) -> np.ndarray:
    if not cols:
        return np.zeros((len(profiles), 0))
    if len(cols) == profiles.shape[1] and tuple(profiles.columns) == cols:
        return profiles.to_numpy(dtype=float)  # only op columns (prepared): no selected copy
    return profiles[list(cols)].to_numpy(dtype=float)


def family_times(profiles: pd.DataFrame, side: str = "Device") -> pd.DataFrame:
    """Sum op times per family for one side (``Device`` or ``Host``).

    Parameters
    ----------
    profiles : pandas.DataFrame
        ``Host_*``/``Device_*`` columns in microseconds.
    side : {"Device", "Host"}

    Returns
    -------
    pandas.DataFrame
        Shape (n_rows, len(FAMILIES) + 1): one column per family plus ``idle`` (microseconds).
    """
    return pd.DataFrame(
        family_matrix(profiles, side), index=profiles.index, columns=list(FAMILY_COLUMNS)
    )


#: Rows from which novelty is found with a k-d tree (scipy) instead of brute force.
_KD_MIN_ROWS = 2000


@dataclass(frozen=True)
class ProfileFeatures:
    """What every method needs from n anchor profiles, computed once.

    Attributes
    ----------
    device_families : ndarray of shape (n, len(FAMILY_COLUMNS))
        Device time per family (us), ``idle`` last.
    free : ndarray of shape (n, n_free)
        Latency-free scale-free features (:data:`FREE_FEATURES`).
    log_busy_s : ndarray of shape (n,)
        ``log`` of the device-busy seconds (floored at 1 us).
    """

    device_families: np.ndarray
    free: np.ndarray
    log_busy_s: np.ndarray
    _novelty: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_ops(cls, ops: pd.DataFrame) -> ProfileFeatures:
        """Features of ``ops`` (``Host_*``/``Device_*`` columns, us; any op names)."""
        values = _op_values(ops, tuple(op_columns(ops.columns)))
        dev = family_matrix(ops, "Device", values)
        host = family_matrix(ops, "Host", values)
        fam = dev[:, :-1]
        busy_us = np.maximum(fam.sum(axis=1), 1.0)
        host_busy, dev_idle, host_idle = host[:, :-1].sum(axis=1), dev[:, -1], host[:, -1]
        shares = fam / np.where(fam.sum(axis=1) > 0, fam.sum(axis=1), 1.0)[:, None]
        free = np.column_stack(
            [
                np.log(busy_us),
                np.log1p(dev_idle),
                np.log1p(host_idle),
                np.log1p(host_busy),
                dev_idle / (busy_us + dev_idle),
                np.log1p(host_idle) - np.log(busy_us),
                shares,
            ]
        )
        return cls(dev, free, np.log(busy_us * 1e-6))

    def novelty(self, model: ProfileNovelty) -> np.ndarray:
        """``model.distance(self.free)``, computed once per distinct fitted model.

        The measured pairs of one anchor are usually trained on the same profiles, so their
        novelty models are equal: keyed by content, one k-d tree query serves every target.
        """
        key = model.fingerprint()
        if key not in self._novelty:
            self._novelty[key] = model.distance(self.free)
        return self._novelty[key].copy()

    def with_latency(self, anchor_latency_s: np.ndarray, rows=None) -> np.ndarray:
        """Latency-free features of ``rows`` plus the log anchor latency and its ratio to busy time."""
        free = self.free if rows is None else self.free[rows]
        log_busy_us = free[:, 0]
        lat = np.asarray(anchor_latency_s, dtype=float)
        return np.column_stack([free, np.log(lat), np.log(lat * 1e6) - log_busy_us])


#: Names of the columns of ``ProfileFeatures.free`` (``with_latency`` adds the last two).
FREE_FEATURES = (
    "log_device_busy",
    "log_device_idle",
    "log_host_idle",
    "log_host_busy",
    "device_idle_share",
    "host_idle_vs_busy",
    *(f"share_{f}" for f in FAMILIES),
)
LATENCY_FEATURES = ("log_anchor_latency", "anchor_latency_vs_busy")


def profile_features(ops: pd.DataFrame, anchor_latency_s=None) -> tuple[pd.DataFrame, np.ndarray]:
    """Scale-free features of anchor profiles (a table), and each row's log device-busy time.

    Parameters
    ----------
    ops : pandas.DataFrame
        ``Host_*``/``Device_*`` op times (us); any op names (new ones fall into a family).
    anchor_latency_s : array of shape (n,), optional
        Adds the log anchor latency and its ratio to the device-busy time.

    Returns
    -------
    features : pandas.DataFrame
        Columns :data:`FREE_FEATURES` (+ :data:`LATENCY_FEATURES`).
    log_busy_s : ndarray of shape (n,)
    """
    f = ProfileFeatures.from_ops(ops)
    if anchor_latency_s is None:
        return pd.DataFrame(f.free, index=ops.index, columns=list(FREE_FEATURES)), f.log_busy_s
    X = f.with_latency(anchor_latency_s)
    cols = [*FREE_FEATURES, *LATENCY_FEATURES]
    return pd.DataFrame(X, index=ops.index, columns=cols), f.log_busy_s


class ProfileNovelty(Estimator):
    """Mean Euclidean distance to the ``n_neighbors`` nearest training rows, in standardised units.

    Leave-one-architecture-out errors grow with this distance (docs/accuracy.md), so it widens
    prediction intervals and warns users whose network is unlike anything trained on.

    Parameters
    ----------
    n_neighbors : int
        Neighbours averaged (several, so one near-duplicate row does not hide novelty).
    scale_floor : float
        Smallest per-feature scale. A feature constant in training (an op family no training
        CNN used) would otherwise make any change in it infinitely novel.
    clip : float
        Largest per-feature distance, in scales: one extreme feature counts as very unusual,
        not as everything.
    """

    def __init__(self, n_neighbors=5, scale_floor=0.05, clip=5.0):
        self.n_neighbors = n_neighbors
        self.scale_floor = scale_floor
        self.clip = clip

    def fit(self, X):
        """Remember the training rows (array of shape (n, n_features), finite)."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or len(X) < 1 or not np.isfinite(X).all():
            raise ProfetValueError("novelty needs a finite 2-D feature table with at least one row")
        self.center_ = X.mean(axis=0)
        self.scale_ = np.maximum(X.std(axis=0), self.scale_floor)
        self.reference_ = self._z(X)
        return self

    def _z(self, X):
        z = (np.asarray(X, dtype=float) - self.center_) / self.scale_
        return np.clip(z, -self.clip, self.clip)

    def distance(self, X) -> np.ndarray:
        """Novelty of each row of ``X`` (shape (n, n_features)): ndarray of shape (n,), >= 0."""
        check_is_fitted(self, "reference_")
        Z = self._z(X)
        k = min(self.n_neighbors, self.reference_.shape[0])
        if len(Z) < _KD_MIN_ROWS:  # few rows: no scipy import (a one-profile predict stays light)
            return self._brute(Z, k)
        # A k-d tree over the few hundred training rows answers 200,000 rows in a fraction of
        # the brute-force time (exact distances, every core); it is built once per model.
        tree = getattr(self, "_tree", None)
        if tree is None:
            from scipy.spatial import cKDTree

            tree = self._tree = cKDTree(self.reference_)
        d, _ = tree.query(Z, k=k, workers=-1)
        return np.asarray(d, dtype=float).reshape(len(Z), k).mean(axis=1)

    def fingerprint(self) -> str:
        """A digest of the parameters and fitted arrays: equal digests give equal distances."""
        import hashlib
        import operator

        check_is_fitted(self, "reference_")
        params = repr(sorted(self.get_params().items()))
        state = (self.center_, self.scale_, self.reference_)
        # Kept while the parameters read the same and the fitted arrays are the same objects
        # (a refit assigns new ones): every prediction asks for it.
        memo = getattr(self, "_fingerprint", None)
        if memo is not None and memo[0] == params and all(map(operator.is_, memo[1], state)):
            return memo[2]
        h = hashlib.sha256(params.encode())
        for a in state:
            a = np.ascontiguousarray(a, dtype=float)
            h.update(repr(a.shape).encode() + a.tobytes())
        self._fingerprint = (params, state, h.hexdigest())
        return self._fingerprint[2]

    def _brute(self, Z: np.ndarray, k: int) -> np.ndarray:
        ref = self.reference_
        # Squared distances without an (n, m, d) temporary: |z|^2 - 2 z.r + |r|^2; the k
        # nearest by squared distance are the k nearest, so only they get a sqrt.
        d2 = Z @ ref.T
        d2 *= -2.0
        d2 += (ref**2).sum(axis=1)[None, :]
        d2 += (Z**2).sum(axis=1)[:, None]
        np.maximum(d2, 0.0, out=d2)
        return np.sqrt(np.partition(d2, k - 1, axis=1)[:, :k]).mean(axis=1)

    def to_state(self):
        check_is_fitted(self, "reference_")
        arrays = {"center": self.center_, "scale": self.scale_, "reference": self.reference_}
        return {"params": self.get_params()}, arrays

    @classmethod
    def from_state(cls, meta, arrays):
        self = cls(**meta["params"])
        self.center_, self.scale_ = arrays["center"], arrays["scale"]
        self.reference_ = arrays["reference"]
        return self
