"""The :class:`Predictor`: trained models loaded from an artifacts folder, and their answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import ArtifactError, ProfetValueError
from ..inputs._catalog import validate_catalog
from ..inputs._prepare import prepare_profiles
from ..models._intervals import novelty_band
from ._engine import breakdown_table, pair_interval, sense_checks, workload_sizes
from ._result import Prediction
from ._scaling import ScalingMixin
from ._store import Bundle, load_bundle, sub_arrays

INTERVAL_LEVEL = 0.8
#: Exceptions a malformed (but checksum-consistent) artifact raises while models are built.
_MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def pair_name(anchor: str, target: str) -> str:
    """``"anchor->target"``: the key of a trained pair in the artifacts."""
    return f"{anchor}->{target}"


@dataclass(frozen=True)
class Predictor(ScalingMixin):
    """Trained PROFET models loaded from an artifacts folder (see :func:`load_artifacts`).

    Models are built from the verified arrays on first use (the reference method's op clustering
    imports rapidfuzz and scipy only when that method is asked for).
    """

    bundle: Bundle
    catalog: pd.DataFrame
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ what the artifacts know
    @property
    def path(self) -> Path:
        return self.bundle.path

    @property
    def metadata(self) -> dict:
        """The manifest (training date, data fingerprint, versions) plus the model's settings."""
        m = self.bundle.model
        keys = ("instances", "methods", "default_method", "interval_level")
        return {**self.bundle.manifest, **{k: m.get(k) for k in keys}}

    @property
    def instances(self) -> list[str]:
        """The measured instances: trained as anchors and targets, with examples and scalers."""
        return list(self.bundle.model["instances"])

    @property
    def all_instances(self) -> list[str]:
        """Every instance predictions reach: the measured ones, then those of the spec catalog
        (predicted by the cross-instance model, basis "specs only" or "calibrated")."""
        extra = (
            []
            if self.cross is None
            else [i for i in self.cross.spec_index_ if i not in self.instances]
        )
        return [*self.instances, *extra]

    @property
    def cross(self):
        """The cross-instance spec model (:class:`profet_core.crossgpu.CrossInstanceModel`), or
        None when the artifacts have none."""
        meta = self.bundle.model.get("cross")
        if meta is None:
            return None

        def build():
            from ..crossgpu import CrossInstanceModel

            return CrossInstanceModel.from_state(meta, sub_arrays(self.bundle.arrays, "cross|"))

        return self._cached(("cross",), build)

    @property
    def fits(self):
        """The will-it-fit model (:class:`profet_core.crossgpu._fit.FitModel`) or None."""
        meta = self.bundle.model.get("fits")
        if meta is None or self.cross is None:
            return None

        def build():
            from ..crossgpu._fit import FitModel

            return FitModel.from_state(meta, sub_arrays(self.bundle.arrays, "fits|"))

        return self._cached(("fits",), build)

    def has_pair(self, anchor: str, target: str, method: str) -> bool:
        """Whether a model was trained for this anchor -> target pair (basis "measured")."""
        return f"{pair_name(anchor, target)}|{method}" in self.bundle.model["models"]

    @property
    def methods(self) -> list[str]:
        return list(self.bundle.model["methods"])

    @property
    def default_method(self) -> str:
        return self.bundle.model["default_method"]

    @property
    def interval_level(self) -> float:
        """Nominal coverage of the prediction intervals (``low_ms``..``high_ms``)."""
        return float(self.bundle.model.get("interval_level", INTERVAL_LEVEL))

    @property
    def intervals(self) -> pd.DataFrame:
        return self.bundle.intervals

    @property
    def validation(self) -> dict:
        """The validation report's tables (parsed on first use: predictions do not need them)."""
        return self._cached(("validation",), self.bundle.read_validation)

    @property
    def examples(self) -> dict:
        """``{instance: {"label", "profile" (op -> us), "batch_latency_s", "model", ...}}``."""
        return self.bundle.examples

    def with_catalog(self, catalog: pd.DataFrame) -> Predictor:
        """The same models with other prices/GPU names (a user's catalog; validated).

        Instances the catalog lacks keep the artifacts' line.
        """
        cat = validate_catalog(catalog)
        keep = self.bundle.catalog[~self.bundle.catalog["instance"].isin(cat["instance"])]
        merged = pd.concat([cat, keep], ignore_index=True)
        return Predictor(self.bundle, merged, self._cache)

    def targets(self, anchor: str) -> list[str]:
        """Every instance but ``anchor``: measured ones and those of the spec catalog."""
        self._check_instance(anchor, "anchor")
        return [t for t in self.all_instances if t != anchor]

    def _check_instance(self, name, role: str, measured: bool = False) -> None:
        known = self.instances if measured else self.all_instances
        if not isinstance(name, str) or name not in known:
            shown = repr(name)[:80]
            raise ProfetValueError(f"unknown {role} instance {shown}; known: {', '.join(known)}")

    def _check_method(self, method) -> str:
        method = method or self.default_method
        if method not in self.methods:
            raise ProfetValueError(
                f"unknown method {str(method)[:80]!r}; allowed: {', '.join(self.methods)}"
            )
        return method

    # ------------------------------------------------------------------ lazily built models
    def _cached(self, key, build):
        if key not in self._cache:
            try:
                self._cache[key] = build()
            except _MALFORMED as exc:
                raise ArtifactError(
                    f"artifacts in {str(self.path)!r} are malformed ({key[0]} "
                    f"{'/'.join(map(str, key[1:]))}): {type(exc).__name__}: {exc}"
                ) from None
        return self._cache[key]

    def _clusterer(self):
        from ..features._clustering import OpClusterer

        return self._cached(
            ("clustering",), lambda: OpClusterer.from_state(self.bundle.model["clustering"])
        )

    def model(self, anchor: str, target: str, method: str):
        """The fitted method for one trained pair."""
        from ..models._methods import METHODS

        def build():
            key = f"{pair_name(anchor, target)}|{method}"
            meta = self.bundle.model["models"][key]
            clusterer = self._clusterer() if method == "profet" else None
            arrays = sub_arrays(self.bundle.arrays, f"{key}|")
            return METHODS[method].from_state(meta, arrays, clusterer)

        return self._cached(("model", anchor, target, method), build)

    def _interval_table(self) -> dict:
        def build():
            iv = self.bundle.intervals
            keys = zip(iv["anchor"], iv["target"], iv["estimator"], iv["with_latency"], strict=True)
            return {k: row for k, row in zip(keys, iv.to_dict("records"), strict=True)}

        return self._cached(("intervals",), build)

    # ------------------------------------------------------------------ predictions
    def predict(
        self,
        anchor: str,
        profiles: pd.DataFrame,
        anchor_latency_s=None,
        method=None,
        targets=None,
        batch_size=None,
        input_size=None,
    ) -> Prediction:
        """Predict the batch latency of each profile on every other instance.

        Parameters
        ----------
        anchor : str
            Instance the profiles were taken on.
        profiles : pandas.DataFrame
            Shape (n, n_ops): ``Host_*``/``Device_*`` op times in microseconds (as returned by
            ``parse_profile``); a ``batch_latency_s`` column, if present, gives each row's
            measured anchor latency (seconds, NaN where unknown); a ``steps`` column the
            training steps each profile covers (2, PROFET's convention, where absent): op times
            are rescaled to 2 steps, and checked against the latency.
        anchor_latency_s : float or array of shape (n,), optional
            Measured anchor batch latency in seconds; overrides the column.
        method : str, optional
            One of :attr:`methods` (default: :attr:`default_method`).
        targets : list of str, optional
            Target instances (default: every instance but the anchor).
        batch_size, input_size : int, optional
            Images per step and pixels per side of the profiled workload (default: the
            profile's ``batch_size``/``input_size`` columns, if any). With them and the anchor
            latency, ``p_fit`` gives the probability that the step fits each target's memory.

        Returns
        -------
        Prediction
        """
        from ._engine import run_prediction

        self._check_instance(anchor, "anchor")
        method = self._check_method(method)
        targets = self.targets(anchor) if targets is None else list(targets)
        for t in targets:
            self._check_instance(t, "target")
        prepared = prepare_profiles(profiles, anchor_latency_s)
        ops, lat = prepared.ops, prepared.latency_s
        notes = sense_checks(self.bundle.model, profiles, anchor_latency_s)
        targets = [t for t in targets if t != anchor]
        sizes = workload_sizes(profiles, batch_size, input_size)
        return run_prediction(self, anchor, ops, lat, method, targets, notes, sizes)

    def interval(self, anchor, target, method, lat, members: dict, novelty=None):
        """Log-space interval bounds and relative novelty per row: see
        :func:`profet_core.prediction._engine.pair_interval`."""
        return pair_interval(self._interval_table(), anchor, target, method, lat, members, novelty)

    def novelty_band(self, novelty: float, with_latency: bool, method=None) -> dict | None:
        """How a method did in validation on held-out profiles about as unusual as this one:
        ``band``, ``share_pct``, ``mape_pct`` (%), or None (see ``_intervals.novelty_band``)."""
        bands = self.validation.get("novelty")
        return novelty_band(bands, novelty, with_latency, method or self.default_method)

    def breakdown(self, anchor: str, profile: pd.DataFrame, targets=None) -> pd.DataFrame:
        """Predicted device time per op family on each target: which kinds of work get faster.

        Parameters
        ----------
        anchor : str
        profile : pandas.DataFrame
            Op columns (us over the profile's ``steps``, 2 where absent, as for
            :meth:`predict`); the first row is used.
        targets : list of str, optional
            Default: every instance but the anchor.

        Returns
        -------
        pandas.DataFrame
            ``target, family, anchor_us, target_us, speedup`` (``anchor_us / target_us``).
        """
        self._check_instance(anchor, "anchor")
        ops = prepare_profiles(profile).ops
        targets = self.targets(anchor) if targets is None else list(targets)
        for target in targets:
            self._check_instance(target, "target")
        return breakdown_table(self, anchor, ops, targets)


def load_artifacts(path=None, catalog=None) -> Predictor:
    """Load and verify trained artifacts.

    Parameters
    ----------
    path : path-like, optional
        Artifacts folder; default: ``$PROFET_ARTIFACTS`` or the project's ``artifacts/``.
    catalog : pandas.DataFrame, optional
        An instance catalog (``instance, gpu, usd_per_hour``) overriding the artifacts' prices
        and GPU names, without touching the models.

    Raises
    ------
    ArtifactError
        If the folder, its manifest or a file is missing, edited or malformed.
    """
    bundle = load_bundle(path)
    model = bundle.model
    for key, kind in (
        ("instances", list),
        ("methods", list),
        ("models", dict),
        ("default_method", str),
    ):
        if not isinstance(model.get(key), kind):
            raise ArtifactError(f"model.json: {key!r} must be a {kind.__name__}")
    try:
        base_catalog = validate_catalog(bundle.catalog)
    except ProfetValueError as exc:
        raise ArtifactError(f"instances.csv in the artifacts is invalid: {exc}") from None
    predictor = Predictor(bundle, base_catalog)
    if predictor.cross is not None:
        specs = predictor.cross.specs_[["instance", "gpu", "gpu_count", "usd_per_hour"]]
        extra = specs[~specs["instance"].isin(base_catalog["instance"])]
        catalog_all = pd.concat([base_catalog, extra], ignore_index=True)
        predictor = Predictor(bundle, catalog_all, predictor._cache)
    return predictor.with_catalog(catalog) if catalog is not None else predictor
