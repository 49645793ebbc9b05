"""What a cross-instance prediction rests on, and its interval per basis."""

from __future__ import annotations

import copy

import numpy as np

from ..._base import check_is_fitted
from ...errors import ProfetValueError

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
        row = spec_positions(self, [instance])[0]
        n = getattr(self, "published_n_", {})
        # Terms are keyed by GPU; by generation where they were fitted per generation.
        for key in (self.specs_["gpu"].iat[row], self.spec_arch_[row]):
            if key in n:
                return f"published ({n[key]})"
        return "specs only"

    def pair_basis(self, anchor: str, target: str) -> str:
        """The weaker basis of the two instances (what a prediction between them rests on)."""
        check_is_fitted(self, "theta_")
        # Remembered per fitted state: a profile priced on every spec line asks it of each
        # line on every call.
        memo = fitted_memo(self, "pair_basis")
        got = memo.get((anchor, target))
        if got is None:
            kinds = [self.basis(anchor), self.basis(target)]
            got = max(kinds, key=lambda b: BASES.index(b.split(" (")[0]))
            memo[(anchor, target)] = got
        return got

    def pair_bases(self, anchor: str, targets) -> list[str]:
        """:meth:`pair_basis` of the anchor and each target."""
        check_is_fitted(self, "theta_")
        memo = fitted_memo(self, "pair_basis")
        return [memo.get((anchor, t)) or self.pair_basis(anchor, t) for t in targets]

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


def fitted_memo(model, name: str, size: int = 4096) -> dict:
    """A dict kept on ``model`` for values derived from its fitted state alone (attributes
    ending in ``_``): a new one whenever any of them is another object (a refit, a copy with
    other specs or calibrations); emptied beyond ``size`` entries."""
    # A copy of the attributes first: another thread may add one (its memo) meanwhile.
    state = [v for k, v in list(vars(model).items()) if k.endswith("_") and k[0] != "_"]
    key = f"_{name}_memo"
    memo = vars(model).get(key)
    if (
        memo is None
        or len(memo[0]) != len(state)
        or any(a is not b for a, b in zip(memo[0], state, strict=True))
    ):
        memo = (state, {})
        setattr(model, key, memo)
    if len(memo[1]) >= size:
        memo[1].clear()
    return memo[1]


def bounded_delta(instance: str, loss, excess) -> float:
    """The efficiency ``delta`` (log units) minimising ``loss`` within +-3; refused when pinned
    at that bound, saying ``exp(excess())`` (per pair: log measured / predicted at delta 0)."""
    from scipy.optimize import minimize_scalar

    delta = float(minimize_scalar(loss, bounds=(-3.0, 3.0), method="bounded").x)
    if abs(delta) > 2.95:  # pinned at its bound: these runs are not this GPU's
        raise far_off(instance, excess())
    return delta


def far_off(instance: str, log_excess) -> ProfetValueError:
    """The refusal of a new instance's runs ``exp(log_excess)`` times (per pair) what its GPU's
    specs predict, beyond the 20x (``exp(3)``) a calibrated efficiency can explain."""
    ratio = float(np.exp(np.median(log_excess)))
    return ProfetValueError(
        f"the runs of {instance!r} take {ratio:.3g}x what its GPU's specs predict (median over "
        f"{len(log_excess)} pairs), beyond the {np.exp(3):.0f}x an efficiency can explain; check "
        "the instance name, its spec line and the latency unit (seconds); nothing was changed"
    )


def spec_positions(model, names) -> np.ndarray:
    """Row of each instance name in ``model``'s spec sheet (a dict look-up, built once).

    Raises
    ------
    ProfetValueError
        Naming the instances the sheet lacks and those it has.
    """
    pos = getattr(model, "_spec_pos_", None)
    if pos is None:
        pos = model._spec_pos_ = {n: i for i, n in enumerate(model.spec_index_)}
    names = list(names)
    unknown = sorted({n for n in names if n not in pos})
    if unknown:
        raise ProfetValueError(
            f"instance(s) {unknown} not in the spec catalog; known: {list(model.spec_index_)}"
        )
    return np.fromiter((pos[n] for n in names), dtype=np.intp, count=len(names))
