"""The :class:`Predictor`: the questions asked of trained artifacts (latency on every target,
per-family breakdown, latency at other sizes) and :func:`load_artifacts`, which opens them."""

from __future__ import annotations

import os

import pandas as pd

from ..errors import ArtifactError, ProfetValueError
from ..inputs._args import frame_arg, is_number, names_arg, numbers_arg, path_arg
from ..inputs._catalog import merge_catalogs, validate_catalog
from ..inputs._prepare import prepare_profiles
from ..models._intervals import novelty_band
from ._engine import breakdown_table, pair_interval, sense_checks, workload_sizes
from ._result import Prediction, answer_notes
from ._store import load_bundle
from ._trained import TrainedModels


class Predictor(TrainedModels):
    """Trained PROFET models loaded from an artifacts folder (see :func:`load_artifacts`), and
    the answers they give."""

    def predict(
        self,
        anchor: str,
        profiles: pd.DataFrame,
        anchor_latency_s=None,
        method=None,
        targets=None,
        batch_size=None,
        input_size=None,
        precision="fp32",
        gpus=1,
        anchor_amp_latency_s=None,
        params=None,
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
            are rescaled to 2 steps, and checked against the latency and against the per-step
            overhead ops; an ``instance`` column, where a row has one, must be ``anchor``.
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
        precision : {"fp32", "amp"}
            ``amp``: mixed precision (Keras ``mixed_float16`` / PyTorch autocast) on each target;
            the profile stays an FP32 one. Targets without tensor cores keep their FP32 time.
        gpus : int, "all" or list of int
            GPUs used data-parallel at the profile's per-GPU batch (1: today's answer; "all":
            each target's own count; a list: one row per count a target has).
        anchor_amp_latency_s : float, optional
            A measured AMP step on the anchor (s): corrects the predicted AMP gains.
        params : float, optional
            The model's parameter count (else estimated from the profile's optimizer time).

        Returns
        -------
        Prediction
        """
        from ._scaling import check_options

        options = check_options(precision, gpus, anchor_amp_latency_s, params)
        args = (anchor, profiles, anchor_latency_s, method, targets, batch_size, input_size)
        return self._predict(*args, options)[0]

    def _predict(
        self, anchor, profiles, anchor_latency_s, method, targets, batch_size, input_size, options
    ):
        """:meth:`predict` with checked ``options``; also the prepared profiles (op times at 2
        steps, latency), which :meth:`_configure` takes instead of preparing them again."""
        from ._engine import run_prediction
        from ._option_checks import batch_notes, check_gpu_answers
        from ._scaling import apply_options

        self._check_instance(anchor, "anchor")
        method = self._check_method(method)
        targets = self._target_list(anchor, targets)
        check_gpu_answers(self, targets, options[1], len(profiles))
        prepared = prepare_profiles(profiles, anchor_latency_s, anchor)
        ops, lat = prepared.ops, prepared.latency_s
        model, arrays = self.bundle.model, self.bundle.arrays
        checks = sense_checks(model, profiles, anchor_latency_s, anchor, arrays)
        sizes = workload_sizes(profiles, batch_size, input_size)  # checks the sizes first
        notes = (*self.catalog_notes, *checks, *batch_notes(profiles, batch_size))
        batch = _batch(profiles, batch_size)

        def answer(names):
            pred = run_prediction(self, anchor, ops, lat, method, names, notes, sizes)
            ref = None
            if self.cross is not None and method != self.default_method:
                # another method's own answers neither move nor move others (issue 40): the
                # others are ordered against the default method's answers
                dflt = run_prediction(
                    self, anchor, ops, lat, self.default_method, names, notes, sizes
                )
                ref = apply_options(self, dflt, anchor, ops, lat, options, batch)
            return apply_options(self, pred, anchor, ops, lat, options, batch, reference=ref)

        out = answer(targets)
        every = self.targets(anchor)
        if self.cross is not None and set(targets) < set(every):
            # the spec order is among every target: an answer does not depend on the others asked
            from ._scaling import order_over_all

            out = order_over_all(out, answer(every))
        if self.rentals is not None:  # rows: the GPU configurations the price source rents
            from ._configs import configurations

            out = configurations(out, self.rentals, options[1])
        return answer_notes(out), prepared

    def configure(
        self,
        anchor: str,
        profiles: pd.DataFrame,
        anchor_latency_s,
        table: pd.DataFrame,
        batch_size=None,
        precision="fp32",
        gpus=1,
        anchor_amp_latency_s=None,
        params=None,
    ) -> pd.DataFrame:
        """Rows of a one-GPU FP32 table moved to ``precision`` and ``gpus`` as :meth:`predict`
        moves its own (e.g. the anchor's own measured latency, priced on other offerings of
        its GPU).

        Parameters
        ----------
        anchor, profiles, anchor_latency_s, batch_size, precision, gpus, anchor_amp_latency_s, params
            As for :meth:`predict`.
        table : pandas.DataFrame
            ``row``, ``target`` (instances of :attr:`all_instances`), ``batch_latency_ms``,
            ``low_ms``, ``high_ms`` (ms, one FP32 step on one GPU).

        Returns
        -------
        pandas.DataFrame
            ``table`` with ``precision``, ``gpus`` and ``images_per_s`` (one row per GPU count).
        """
        from ._scaling import check_options

        options = check_options(precision, gpus, anchor_amp_latency_s, params)
        prepared = prepare_profiles(profiles, anchor_latency_s, anchor)
        return self._configure(anchor, profiles, prepared, table, batch_size, options)

    def _configure(self, anchor, profiles, prepared, table, batch_size, options):
        """:meth:`configure` of profiles already prepared (:meth:`_predict`) with checked
        ``options``."""
        from ._scaling import apply_options

        if "usd_per_hour" not in table:
            table = table.assign(usd_per_hour=float("nan"))
        pred = Prediction(table, (), "", self.interval_level, anchor)
        batch = _batch(profiles, batch_size)
        return apply_options(
            self, pred, anchor, prepared.ops, prepared.latency_s, options, batch
        ).table

    def _target_list(self, anchor: str, targets) -> list[str]:
        """Checked target instances but the anchor: None is every one, a ``str`` is one name
        (not a list of one-letter names), an empty list or only the anchor is refused."""
        names = names_arg(targets, "targets")
        if names is None:
            return self.targets(anchor)
        for t in names:
            self._check_instance(t, "target")
        out = [t for t in dict.fromkeys(names) if t != anchor]
        if not out:
            raise ProfetValueError(
                f"targets name only the anchor {anchor!r}; give another instance (or None: all)"
            )
        return out

    def interval(self, anchor, target, method, lat, members: dict, novelty=None):
        """Log-space interval bounds and relative novelty per row: see
        :func:`profet_core.prediction._engine.pair_interval`."""
        return pair_interval(self._interval_table(), anchor, target, method, lat, members, novelty)

    def novelty_band(self, novelty: float, with_latency: bool, method=None) -> dict | None:
        """How a method did in validation on held-out profiles about as unusual as this one:
        ``band``, ``share_pct``, ``mape_pct`` (%), or None (see ``_intervals.novelty_band``)."""
        if not is_number(novelty):
            raise ProfetValueError(f"novelty {str(novelty)[:40]!r} is not a number")
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
        targets = self._target_list(anchor, targets)
        ops = prepare_profiles(profile, anchor=anchor).ops
        return breakdown_table(self, anchor, ops, targets)

    def scale_notes(self, by: str, target: str | None = None) -> list[str]:
        """What a two-point answer on ``target`` rests on, as notes (an instance never measured
        at several sizes: scaled as the measured ones are), as the CLI prints them."""
        note = self.scaler_note(target, by)
        return [] if note is None else [note]

    def scale_warnings(self, by: str, points: dict, target: str | None = None) -> list[str]:
        """Warnings about measured ``{size: latency_ms}`` points (e.g. a latency that falls as
        the size grows), as the CLI prints and the Scaler page shows them (``target`` is
        checked; what its curve rests on is :meth:`scale_notes`')."""
        from ._two_point import scale_warnings

        if not isinstance(points, dict):
            raise ProfetValueError(
                f"measured points must be {{size: ms}}; got {type(points).__name__} "
                f"{str(points)[:40]!r}"
            )
        sizes = numbers_arg(list(points), f"measured {by} size")
        ms = numbers_arg(list(points.values()), "latency", "milliseconds")
        if target is not None:
            self._check_instance(target, "target")
        return scale_warnings(by, dict(zip(sizes, ms, strict=True)))

    def scale_interval_note(self, target: str | None, by: str) -> str:
        """Why :meth:`scale` gives no interval, and how far off it was on CNNs left out of
        training on ``target`` (every measured instance's range for None or an unmeasured
        one), as the CLI prints it."""
        if target is not None:
            self._check_instance(target, "target")
        report = self.validation.get("scalers")
        from ._two_point import two_point_accuracy

        return two_point_accuracy(report, target, by, self.instances)

    def size_range(self, by: str, target: str | None = None) -> tuple[float, float]:
        """The trained size range along ``by``: (16, 256) images or (32, 256) px by default."""
        return tuple(float(v) for v in self.scaler(target, by).size_range_)

    def scale(self, target, by: str, points: dict, size):
        """Latency (ms) at ``size`` through latencies measured at two or more sizes.

        Parameters
        ----------
        target : str or None
            Instance the latencies are for, any of :attr:`all_instances` (None, or one never
            measured at several sizes: the default scaler, the same on every measured
            instance; :meth:`scale_warnings` says so).
        by : {"batch", "input"}
            Scale by batch size (images) or by input image side length (px).
        points : dict of float to float
            ``{size: latency_ms}``, two or more sizes within :meth:`size_range`, each latency
            > 0 ms. The smallest and largest sizes are the curve's ends; sizes between them
            bend it (the curve runs through every point).
        size : float or array
            Size(s) to predict, within the trained range.

        Returns
        -------
        ndarray
            Predicted latency in ms, same shape as ``size``.
        """
        from ._two_point import scale_latency

        return scale_latency(self.scaler(target, by), by, points, size)

    def scale_from_point(self, target, by, latency_ms, size_from, size, other_size, profile=None):
        """Latency (ms, with an interval) on ``target`` at other sizes, from one latency there.

        The curve's shape is learned per instance from the training CNNs (every one measured at
        five batch and five input sizes): from the anchor profile's scale-free features when
        ``profile`` is given, else from the latency and the sizes alone.

        Parameters
        ----------
        target : str
            Any instance of :attr:`all_instances`; one never measured at several sizes takes the
            median curve of the measured ones (said in ``notes``).
        by : {"batch", "input"}
        latency_ms : float
            Batch latency (ms, > 0) on ``target`` at ``size_from``: measured, or predicted by
            :meth:`predict` for the profiled size.
        size_from : float
            Batch size (images) or input side length (px) of ``latency_ms``.
        size : float or array of shape (n,)
            Size(s) to predict, within the trained range (16..256 images, 32..256 px).
        other_size : float
            The size held fixed: the input side length (px) when scaling the batch, the batch
            size (images) when scaling the input.
        profile : pandas.DataFrame, optional
            One row of ``Host_*``/``Device_*`` op times (us) taken at ``size_from`` on any
            anchor, as :func:`parse_profile` returns it (a ``steps`` column is honoured).

        Returns
        -------
        PointScale
        """
        from ..onepoint._scale import scale_one_point

        return scale_one_point(self, target, by, latency_ms, size_from, size, other_size, profile)


def _batch(profiles: pd.DataFrame, batch_size):
    """Images per step per row (NaN where unknown)."""
    import numpy as np

    if batch_size is not None:
        return np.broadcast_to(np.asarray(batch_size, dtype=float), (len(profiles),))
    if "batch_size" in profiles.columns:
        from ._engine import numeric_column

        return numeric_column(profiles["batch_size"])
    return np.full(len(profiles), np.nan)


def load_artifacts(path=None, catalog=None) -> Predictor:
    """Load and verify trained artifacts, unpriced: :func:`profet_core.load_artifacts` prices
    every GPU configuration from the offerings (the one price source).

    Parameters
    ----------
    path : path-like, optional
        Artifacts folder; default: ``$PROFET_ARTIFACTS`` or the project's ``artifacts/``.
    catalog : pandas.DataFrame, optional
        An instance catalog (``instance, gpu, usd_per_hour``) giving prices and GPU names,
        without touching the models; an empty price leaves the instance unpriced. Its
        lines that no prediction uses, or that lack a price, are named in
        :attr:`Predictor.catalog_notes` and in every prediction's warnings.

    Raises
    ------
    ArtifactError
        If the folder, its manifest or a file is missing, edited or malformed.
    """
    if path is not None:
        checked = path_arg(path, "the artifacts path")
        if not os.fsdecode(path).strip():
            raise ProfetValueError(
                f"the artifacts path {str(path)!r} is empty; give a folder, or None for the default"
            )
        path = checked
    if catalog is not None:
        frame_arg(catalog, "the instance catalog")
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
        raise ArtifactError(f"the artifacts' prices are invalid: {exc}") from None
    # Prices belong to offerings (profet_core.load_artifacts prices every configuration from
    # the offerings snapshot); the artifacts' own (the training data's 2021 list) are not used.
    base_catalog = base_catalog.assign(usd_per_hour=float("nan"))
    predictor = Predictor(bundle, base_catalog)
    if predictor.cross is not None:
        specs = predictor.cross.specs_[["instance", "gpu", "gpu_count"]]
        specs = specs.assign(usd_per_hour=float("nan"))
        catalog_all = merge_catalogs(base_catalog, specs, prefer="base")
        predictor = Predictor(bundle, catalog_all, predictor._cache)
    return predictor.with_catalog(catalog) if catalog is not None else predictor
