"""What a cross-instance prediction rests on, and its interval per basis."""

from __future__ import annotations

import copy

import numpy as np

from .._base import check_is_fitted
from ..errors import ProfetValueError

#: Kinds of basis, from the strongest to the weakest.
BASES = ("measured", "calibrated", "published", "specs only")


class BasisMixin:
    """Basis and per-basis intervals of :class:`CrossInstanceModel` (``instances_``,
    ``calibration_`` and ``interval_log_`` are its fitted state)."""

    def basis(self, instance: str) -> str:
        """``measured``, ``calibrated (k runs)``, ``published (n)`` (its GPU's efficiency from n
        published pairs) or ``specs only`` for one instance."""
        check_is_fitted(self, "theta_")
        if instance in self.instances_:
            return "measured"
        if instance in self.calibration_:
            return f"calibrated ({self.calibration_[instance]['runs']} runs)"
        row = self.spec_index_.get_loc(instance)
        n = getattr(self, "published_n_", {})
        # Terms are keyed by GPU; by generation where they were fitted per generation.
        for key in (self.specs_["gpu"].iloc[row], self.spec_arch_[row]):
            if key in n:
                return f"published ({n[key]})"
        return "specs only"

    def pair_basis(self, anchor: str, target: str) -> str:
        """The weaker basis of the two instances (what a prediction between them rests on)."""
        kinds = [self.basis(anchor), self.basis(target)]
        return max(kinds, key=lambda b: BASES.index(b.split(" (")[0]))

    def with_intervals(self, log_quantiles: dict):
        """Copy with 80% interval half-widths (log units) per basis kind (:data:`BASES`)."""
        bad = sorted(set(log_quantiles) - set(BASES))
        if bad:
            raise ProfetValueError(f"unknown basis kind(s) {bad}; allowed: {list(BASES)}")
        new = copy.deepcopy(self)
        new.interval_log_ = {k: float(v) for k, v in log_quantiles.items()}
        return new

    def interval(self, latency_s, basis: str):
        """(low, high) 80% interval of predicted latencies for one basis (after calibration)."""
        kind = basis.split(" (")[0]
        if kind not in self.interval_log_:
            raise ProfetValueError(
                f"no interval calibrated for basis {kind!r}; have {sorted(self.interval_log_)}"
            )
        q = self.interval_log_[kind]
        lat = np.asarray(latency_s, dtype=float)
        return lat * np.exp(-q), lat * np.exp(q)
