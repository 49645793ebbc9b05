"""The :class:`Predictor`: the questions asked of trained artifacts (latency on every target,
per-family breakdown, latency at other sizes); ``_load.load_models`` opens them."""

from __future__ import annotations

import pandas as pd

from ..errors import ProfetValueError
from ..inputs._args import frame_arg, is_number, names_arg, numbers_arg
from ..inputs._prepare import prepare_profiles
from ..models._intervals import novelty_band
from ._engine import breakdown_table, pair_interval
from ._request import as_request
from ._result import Prediction, answer_notes
from ._trained import TrainedModels


class Predictor(TrainedModels):
    """Trained PROFET models loaded from an artifacts folder (see ``profet_core.load_artifacts``), and
    the answers they give."""

    def predict(self, anchor, profiles: pd.DataFrame, request=None, **options) -> Prediction:
        """Predict the batch latency of each profile on every other instance.

        Parameters
        ----------
        anchor : str or None
            Instance the profiles were taken on (None: the request's, else the one the profile
            names).
        profiles : pandas.DataFrame
            Shape (n, n_ops): ``Host_*``/``Device_*`` op times in microseconds (as returned by
            ``parse_profile``); a ``batch_latency_s`` column, if present, gives each row's
            measured anchor latency (seconds, NaN where unknown); a ``steps`` column the
            training steps each profile covers (2, PROFET's convention, where absent): op times
            are rescaled to 2 steps, and checked against the latency and against the per-step
            overhead ops; an ``instance`` column, where a row has one, must be ``anchor``.
        request : PredictRequest, optional
            What is asked: the anchor latency, method, targets, steps, sizes, precision, GPUs,
            the whole run (see :class:`~profet_core.PredictRequest`).
        **options
            The request's fields as keywords instead (``anchor_latency_s=0.113,
            precision="amp"``); not with ``request``.

        Returns
        -------
        Prediction
            One row per profile row and GPU configuration; with a run in the request, its
            steps, hours and cost (:meth:`Prediction.with_run`).
        """
        request = as_request(request, options, anchor)
        anchor, profiles = self.resolve(request, profiles)
        pred = self.predict_prepared(anchor, profiles, request)[0]
        if request.run is None:
            return pred
        return pred.with_run(request.dataset_images, request.batch_size, request.epochs)

    def resolve(self, request, profiles) -> tuple[str, pd.DataFrame]:
        """The request's anchor (else the one the profile names) and the profiles with the
        request's step count, if it gives one: what every answer to ``request`` starts from.

        Parameters
        ----------
        request : PredictRequest
        profiles : pandas.DataFrame
            As for :meth:`predict`.

        Returns
        -------
        (str, pandas.DataFrame)
        """
        frame_arg(profiles, "profiles")
        anchor = request.anchor
        traced = "gpu_name" in profiles.columns and "instance" not in profiles
        if anchor is None and traced:
            anchor = self.anchor_of_gpu(profiles)
        elif anchor is not None and traced:
            from ._traced import check_traced_gpu

            check_traced_gpu(self, anchor, profiles)
        if anchor is None:
            from ..inputs._profile import profile_instance

            anchor = profile_instance(profiles)
        if request.steps is not None:
            from ..inputs._profile import with_steps

            profiles = with_steps(profiles, request.steps, "profiles")
        return anchor, profiles

    def anchor_of_gpu(self, profiles: pd.DataFrame) -> str:
        """The instance whose spec line is the GPU a trace names (``gpu_name``, with its
        ``gpu_memory_gib`` and ``gpu_sm_count``): a measured instance of that GPU first, else
        its one-GPU spec line (``_traced.anchor_of_gpu``).

        Raises
        ------
        ProfetValueError
            The rows name several GPUs, or one without a spec line (named, with what to do).
        """
        from ._traced import anchor_of_gpu

        return anchor_of_gpu(self, profiles)

    def predict_prepared(self, anchor, profiles, request, blocks=None):
        """:meth:`predict` of a resolved question (:meth:`resolve`), for callers that answer
        more of it (the offerings, the Anchor page's one call).

        Parameters
        ----------
        anchor : str
        profiles : pandas.DataFrame
        request : PredictRequest
            Its run is not applied (see :meth:`Prediction.with_run`).
        blocks : Blocks, optional
            The engine's work on the same question by an earlier call, reused where its
            profiles and latency are these (each target is evaluated once).

        Returns
        -------
        (Prediction, Asked, Blocks)
            The prediction, the question made ready (its profile prepared and read, which
            :meth:`configure_prepared` takes) and the engine's work.
        """
        from ._asked import answer_targets, asked
        from ._option_checks import check_gpu_answers

        self.check_instance(anchor, "anchor")
        targets = self._target_list(anchor, request.targets)
        # an answer on several GPUs is bounded before the work (profile rows x configurations)
        check_gpu_answers(self, targets, request.options[1], len(profiles))
        question, _, blocks = asked(self, anchor, profiles, request, blocks)
        out = answer_targets(self, question, targets, blocks)
        every = self.targets(anchor)
        if self.cross is not None and set(targets) < set(every):
            # the spec order is among every target: an answer does not depend on the others asked
            from ._options import order_over_all

            out = order_over_all(out, answer_targets(self, question, every, blocks))
        if self.rentals is not None:  # rows: the GPU configurations the price source rents
            from ._configs import configurations

            out = configurations(out, self.rentals, request.options[1])
        return answer_notes(out), question, blocks

    def configure(
        self, anchor, profiles: pd.DataFrame, table: pd.DataFrame, request=None, **options
    ) -> pd.DataFrame:
        """Rows of a one-GPU FP32 table moved to the request's precision and GPUs as
        :meth:`predict` moves its own (e.g. the anchor's own measured latency, priced on other
        offerings of its GPU).

        Parameters
        ----------
        anchor, profiles, request, **options
            As for :meth:`predict`.
        table : pandas.DataFrame
            ``row``, ``target`` (instances of :attr:`all_instances`), ``batch_latency_ms``,
            ``low_ms``, ``high_ms`` (ms, one FP32 step on one GPU).

        Returns
        -------
        pandas.DataFrame
            ``table`` with ``precision``, ``gpus`` and ``images_per_s`` (one row per GPU count).
        """
        from ._asked import asked

        request = as_request(request, options, anchor)
        anchor, profiles = self.resolve(request, profiles)
        return self.configure_prepared(asked(self, anchor, profiles, request)[0], table)

    def configure_prepared(self, question, table: pd.DataFrame) -> pd.DataFrame:
        """:meth:`configure` of a question made ready by :meth:`predict_prepared` (its second
        value: the profile read as the precision and GPU-count models read it)."""
        from ._options import apply_options

        if "usd_per_hour" not in table:
            table = table.assign(usd_per_hour=float("nan"))
        q = question
        pred = Prediction(table, (), "", self.interval_level, q.anchor)
        return apply_options(
            self,
            pred,
            q.anchor,
            q.option_ops,
            q.lat,
            q.options,
            q.batch,
            framework=q.question.framework,
        ).table

    def _target_list(self, anchor: str, targets) -> list[str]:
        """Checked target instances but the anchor: None is every one, a ``str`` is one name
        (not a list of one-letter names), an empty list or only the anchor is refused."""
        names = names_arg(targets, "targets")
        if names is None:
            return self.targets(anchor)
        for t in names:
            self.check_instance(t, "target")
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
        self.check_instance(anchor, "anchor")
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
            self.check_instance(target, "target")
        return scale_warnings(by, dict(zip(sizes, ms, strict=True)))

    def scale_interval_note(self, target: str | None, by: str) -> str:
        """Why :meth:`scale` gives no interval, and how far off it was on CNNs left out of
        training on ``target`` (every measured instance's range for None or an unmeasured
        one), as the CLI prints it."""
        if target is not None:
            self.check_instance(target, "target")
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
