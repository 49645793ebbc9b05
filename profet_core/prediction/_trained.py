"""What a trained artifacts folder holds, found and built on first use: the per-pair methods,
the cross-instance and will-it-fit models, the scalers, intervals, examples and validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._base import sub_arrays
from ..errors import ArtifactError, ProfetValueError
from ..inputs._catalog import merge_catalogs, override_notes, validate_catalog
from ._store import Bundle

INTERVAL_LEVEL = 0.8
#: Exceptions a malformed (but checksum-consistent) artifact raises while models are built.
_MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def pair_name(anchor: str, target: str) -> str:
    """``"anchor->target"``: the key of a trained pair in the artifacts."""
    return f"{anchor}->{target}"


@dataclass(frozen=True)
class TrainedModels:
    """What an artifacts folder holds: the trained models, built from the verified arrays on first
    use, the catalog and the validation report (see :func:`profet_core.load_artifacts`).

    :class:`~profet_core.Predictor` adds the questions asked of them; this class only finds and
    builds models.

    Models are built from the verified arrays on first use (the reference method's op clustering
    imports rapidfuzz and scipy only when that method is asked for).
    """

    bundle: Bundle
    catalog: pd.DataFrame
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    #: Warnings about the user's catalog (:meth:`with_catalog`), which every prediction repeats.
    catalog_notes: tuple = field(default=(), compare=False)
    #: What the price source rents (:class:`~profet_core.prediction._configs.Rentals`): with it,
    #: a prediction's rows are GPU configurations priced by their cheapest offering; None
    #: (unpriced artifacts, :meth:`with_catalog`): the spec lines at the catalog's prices.
    rentals: object = field(default=None, compare=False, repr=False)

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
        return list(self._reach()[0])

    def _reach(self) -> tuple[tuple, frozenset]:
        """:attr:`all_instances` and their set, built once per cross-instance model."""

        def build(cross):
            have = set(self.instances)
            extra = [] if cross is None else [i for i in cross.spec_index_ if i not in have]
            names = (*self.instances, *extra)
            return names, frozenset(names)

        return self.derived(("reach",), self.cross, build)

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
        """The will-it-fit model (:class:`profet_core.crossgpu.spec._memory.FitModel`) or None."""
        meta = self.bundle.model.get("fits")
        if meta is None or self.cross is None:
            return None

        def build():
            from ..crossgpu.spec._memory import FitModel

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
    def validation(self):
        """The validation report's tables by name, a read-only mapping (each parsed on first
        use: a prediction needs only ``novelty``)."""
        return self._cached(("validation",), self.bundle.read_validation)

    @property
    def examples(self) -> dict:
        """``{instance: {"label", "profile" (op -> us), "batch_latency_s", "model", ...}}``."""
        return self.bundle.examples

    def with_catalog(self, catalog: pd.DataFrame):
        """The same models with other prices/GPU names (a user's catalog; validated).

        Instances the catalog lacks keep their line (prices from the offerings), and so do the
        values a line leaves empty (an empty price keeps the offering's). :attr:`catalog_notes` names
        the lines that change less than they seem to: instances no prediction reaches, and
        those without a price.
        """
        catalog = validate_catalog(catalog, missing_price_ok=True)
        merged = merge_catalogs(self.catalog, catalog)
        notes = override_notes(self.catalog, catalog, self.all_instances)
        return type(self)(self.bundle, merged, self._cache, notes)

    def instance_table(self) -> pd.DataFrame:
        """Every instance predictions reach, with its GPU, price and basis.

        Returns
        -------
        pandas.DataFrame
            ``instance, gpu, gpus, usd_per_hour, offering, basis``, in :attr:`all_instances`
            order. ``gpus`` is the instance's GPU count (1 where the catalog does not say);
            the price is that of ``offering``, the offering renting the configuration cheapest
            (empty: none does). ``basis``: ``"measured"`` or the cross-instance model's
            (``"specs only"``, ``"calibrated (k runs)"``, ``"published (n)"``).
        """
        cat = self.catalog.set_index("instance")
        offers = cat["offering"].fillna("") if "offering" in cat else pd.Series(dtype=str)
        gpus = pd.to_numeric(cat.get("gpu_count", pd.Series(dtype=float)), errors="coerce")
        rows = [
            {
                "instance": i,
                "gpu": cat["gpu"].get(i, ""),
                "gpus": int(gpus.get(i, 1)) if pd.notna(gpus.get(i, 1)) else 1,
                "usd_per_hour": cat["usd_per_hour"].get(i),
                "offering": offers.get(i, ""),
                "basis": "measured" if i in self.instances else self.cross.basis(i),
            }
            for i in self.all_instances
        ]
        cols = ["instance", "gpu", "gpus", "usd_per_hour", "offering", "basis"]
        return pd.DataFrame(rows, columns=cols)

    def targets(self, anchor: str) -> list[str]:
        """Every instance but ``anchor``: measured ones and those of the spec catalog."""
        self.check_instance(anchor, "anchor")
        return [t for t in self.all_instances if t != anchor]

    def repriced(self, catalog: pd.DataFrame):
        """The same models with ``catalog`` (instances, GPUs, counts, prices) instead of this
        one's, sharing the built models; no rentals."""
        return type(self)(self.bundle, catalog, self._cache, self.catalog_notes)

    def with_cross(self, cross, catalog: pd.DataFrame):
        """The same models with another cross-instance model ``cross`` (e.g. one that knows
        more spec lines) and ``catalog``: the other built models are shared, what was derived
        for the offerings is not."""
        cache = {k: v for k, v in self._cache.items() if not str(k[0]).startswith("offerings-")}
        cache[("cross",)] = cross
        return type(self)(self.bundle, catalog, cache, self.catalog_notes)

    def check_instance(self, name, role: str, measured: bool = False) -> None:
        """Refuse ``name`` unless it is an instance the models know (``measured``: one with
        trained pairs), naming its ``role`` (anchor, target) and what is allowed."""
        if not measured and isinstance(name, str) and name in self._reach()[1]:
            return
        known = self.instances if measured else self.all_instances
        if not isinstance(name, str) or name not in known:
            from ..inputs._args import shown

            raise ProfetValueError(
                f"unknown {role} instance {shown(name)}; known: {', '.join(known)}"
            )

    def _check_method(self, method) -> str:
        from ..inputs._args import shown

        if method is None or (isinstance(method, str) and not method):
            method = self.default_method
        if not isinstance(method, str) or method not in self.methods:
            raise ProfetValueError(
                f"unknown method {shown(method)}; allowed: {', '.join(self.methods)}"
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

    def derived(self, key, source, build):
        """``build(source)``, kept under ``key`` while ``source`` is the same object: predictors
        sharing this cache may hold another (a wider spec sheet, a merged catalog)."""
        got = self._cache.get(key)
        if got is None or got[0] is not source:
            got = (source, build(source))
            self._cache[key] = got
        return got[1]

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

    def scaler(self, target: str | None, by: str):
        """The fitted :class:`CurveScaler` of ``target`` along ``by`` (``"batch"``/``"input"``).

        The default scaler is linear in the work and the same for every instance: ``target``
        None, or an instance never measured at several sizes (one of the spec catalog's), takes
        the first measured instance's (:meth:`scaler_note` says so).
        """
        from ..models._curve_scaler import CurveScaler

        if target is not None:
            self.check_instance(target, "target")
        if target is None or target not in self.instances:
            target = self.instances[0]
        _check_by(by)
        meta = self.bundle.model.get("scalers", {}).get(f"{target}|{by}")
        if meta is None:
            raise ProfetValueError(f"the artifacts hold no {by} scaler for {target}")
        arrays = sub_arrays(self.bundle.arrays, f"scaler|{target}|{by}|")
        return self._cached(("scaler", target, by), lambda: CurveScaler.from_state(meta, arrays))

    def scaler_note(self, target: str | None, by: str) -> str | None:
        """What the two-point scaler of ``target`` rests on, where it is not the instance's own
        curve: a note for an instance never measured at several sizes (else None)."""
        if target is None or target in self.instances:
            return None
        self.check_instance(target, "target")
        what = "batch sizes" if by == "batch" else "input sizes"
        return (
            f"{target} was never measured at several {what}: its latency is scaled through the "
            f"given points linearly in the work, as on every measured instance "
            f"({', '.join(self.instances)})"
        )

    def one_point_scaler(self, by: str, use_profile: bool = True):
        """The fitted :class:`~profet_core.onepoint.OnePointScaler` along ``by``, with or
        without the anchor profile's features."""
        from ..onepoint import OnePointScaler

        _check_by(by)
        name = "profile" if use_profile else "latency"
        meta = self.bundle.model.get("onepoint", {}).get(f"{by}|{name}")
        if meta is None:
            raise ProfetValueError(
                f"the artifacts hold no one-point {by} scaler: retrain them with this version"
            )
        arrays = sub_arrays(self.bundle.arrays, f"onepoint|{by}|{name}|")
        return self._cached(("onepoint", by, name), lambda: OnePointScaler.from_state(meta, arrays))


def _check_by(by) -> None:
    """Refuse a scaling dimension other than batch size or input size."""
    if by not in ("batch", "input"):
        raise ProfetValueError(f"scale by {str(by)[:40]!r}; allowed: batch, input")
