"""PROFET's op-name clustering: Levenshtein distance, average linkage, cut at a distance."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._schema import op_columns
from ..errors import ProfetValueError


class OpClusterer(TransformerMixin, BaseEstimator):
    """Group ``Device_*`` ops whose names are close in edit distance and sum their times.

    ``Host_*`` ops stay one feature each. An op unseen in training is put in the cluster whose
    members it is closest to on average if that distance is within ``threshold`` (a new
    ``Conv3DBackpropFilter`` joins the conv-backprop cluster); otherwise it is reported in
    :meth:`unknown_ops` and left out.

    Parameters
    ----------
    threshold : float
        Cophenetic distance at which the average-linkage tree is cut (PROFET used 6).
    """

    def __init__(self, threshold: float = 6.0):
        self.threshold = threshold

    def fit(self, X: pd.DataFrame, y=None):
        """Learn the clusters from the op columns of ``X`` (rows are not used)."""
        ops = op_columns(X.columns)
        device = sorted(c for c in ops if c.startswith("Device_"))
        host = sorted(c for c in ops if c.startswith("Host_"))
        if not ops:
            raise ProfetValueError("no Host_<Op>/Device_<Op> columns to cluster")
        groups: dict[str, list[str]] = {}
        if len(device) == 1:
            groups[device[0]] = device
        elif device:
            dist = cdist(device, device, scorer=Levenshtein.distance, dtype=np.float64)
            labels = fcluster(
                linkage(squareform(dist, checks=False), method="average"),
                t=self.threshold,
                criterion="distance",
            )
            for label in np.unique(labels):
                members = [d for d, lab in zip(device, labels, strict=True) if lab == label]
                # Name a cluster after its shortest member plus a count, so features stay readable.
                head = min(members, key=lambda m: (len(m), m))
                groups[head if len(members) == 1 else f"{head}+{len(members) - 1}"] = members
        for h in host:
            groups[h] = [h]
        self.groups_ = groups
        self.op_to_feature_ = {op: g for g, members in groups.items() for op in members}
        self.feature_names_ = list(groups)
        return self

    def _assign(self, op: str) -> str | None:
        if op in self.op_to_feature_:
            return self.op_to_feature_[op]
        if not op.startswith("Device_"):
            return None
        best, best_d = None, np.inf
        for g, members in self.groups_.items():
            if not members[0].startswith("Device_"):
                continue
            d = float(np.mean(cdist([op], members, scorer=Levenshtein.distance)))
            if d < best_d:
                best, best_d = g, d
        return best if best_d <= self.threshold else None

    def matched_ops(self, columns) -> dict[str, str]:
        """Ops among ``columns`` not seen in training that a cluster takes by spelling.

        Returns
        -------
        dict of str to str
            Each such op -> the member of its cluster nearest in edit distance (the op it was
            taken for: ``Device_Conv2d`` -> ``Device_Conv2D``); ops seen in training and ops no
            cluster takes (:meth:`unknown_ops`) are absent.
        """
        check_is_fitted(self, "groups_")
        out = {}
        for op in op_columns(columns):
            feature = None if op in self.op_to_feature_ else self._assign(op)
            if feature is not None:
                members = self.groups_[feature]
                dist = cdist([op], members, scorer=Levenshtein.distance)[0]
                out[op] = members[int(np.argmin(dist))]
        return out

    def unknown_ops(self, columns) -> list[str]:
        """Ops among ``columns`` that fit no learned cluster (their time is left out)."""
        check_is_fitted(self, "groups_")
        return [op for op in op_columns(columns) if self._assign(op) is None]

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """Sum op times per learned feature.

        Parameters
        ----------
        X : pandas.DataFrame
            ``Host_*``/``Device_*`` columns in microseconds; other columns are ignored.

        Returns
        -------
        pandas.DataFrame
            Shape (n_rows, len(feature_names_)), microseconds.
        """
        check_is_fitted(self, "groups_")
        out = pd.DataFrame(0.0, index=X.index, columns=self.feature_names_)
        for op in op_columns(X.columns):
            feature = self._assign(op)
            if feature is not None:
                out[feature] += X[op].to_numpy(dtype=float)
        return out

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "groups_")
        return np.asarray(self.feature_names_, dtype=object)

    def to_state(self) -> dict:
        """JSON-serialisable learned state."""
        check_is_fitted(self, "groups_")
        return {"threshold": self.threshold, "groups": self.groups_}

    @classmethod
    def from_state(cls, state: dict) -> OpClusterer:
        self = cls(threshold=state["threshold"])
        self.groups_ = {k: list(v) for k, v in state["groups"].items()}
        self.op_to_feature_ = {op: g for g, members in self.groups_.items() for op in members}
        self.feature_names_ = list(self.groups_)
        return self
