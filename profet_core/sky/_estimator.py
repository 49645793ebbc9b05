"""The time estimator SkyPilot's optimizer takes (``Task.set_time_estimator``): a callable from a
``sky.Resources`` to the run's predicted seconds on its accelerators, from one PROFET profile.

It reads only the resource's ``accelerators`` (``{name: count}``), so it imports nothing of
SkyPilot. SkyPilot calls it with each candidate of a task (``Resources(accelerators="H100:8")``)
and with the launchable resources it settles on; every cloud's offering of one configuration
takes the same time.
"""

from __future__ import annotations

import warnings

import pandas as pd

from .._messages import printable
from ..errors import ProfetValueError
from ..inputs._args import frame_arg, shown
from ..offerings import GPU_OF_ACCELERATOR
from ._runs import COMMON_COUNTS, RUN_COLUMNS, UNANSWERED_S, config_label, estimate_runs, run_spec


class SkyTimeEstimator:
    """``estimator(resources) -> seconds``: a whole run's predicted time on a SkyPilot resource.

    A configuration PROFET cannot answer (no accelerator, a TPU, a fraction of a GPU, a GPU
    without a spec line) gets :data:`UNANSWERED_S` seconds, so that the optimizer never prefers
    it to one with a prediction; its reason is kept in :attr:`unanswered` and warned about once
    (``UserWarning``). Build it with :func:`time_estimator`.

    Attributes
    ----------
    run : RunSpec
        The run the times are for.
    anchor : str
    unanswered : dict of str to str
        ``{"MI300X:8": why}`` for every configuration asked about that got no prediction.
    """

    def __init__(self, predictor, profiles: pd.DataFrame, run, request):
        self.anchor, self.run = request.anchor, run
        self._profiles, self._request = profiles, request
        # The predictor holds its artifacts file open: a copy or a pickle (SkyPilot deep-copies
        # a task with ordered resources) keeps where it came from and loads it when it must.
        self._predictor = predictor
        self._artifacts = (predictor.path, predictor.catalog)
        self._rows: dict = {}
        self.unanswered: dict = {}
        # Every accelerator with a spec line at the usual counts, predicted now: a profile
        # PROFET refuses is refused here, not inside SkyPilot's optimizer.
        names = sorted({n for n, gpu in GPU_OF_ACCELERATOR.items() if gpu})
        self.prepare([(n, c) for n in names for c in COMMON_COUNTS])

    def __getstate__(self) -> dict:
        """Everything but the loaded predictor (its open artifacts file pickles nowhere)."""
        return {**self.__dict__, "_predictor": None}

    def _loaded(self):
        """The predictor, loaded again from its artifacts folder in a copy."""
        if self._predictor is None:
            from ..prediction._predictor import Predictor
            from ..prediction._store import load_bundle

            path, catalog = self._artifacts
            self._predictor = Predictor(load_bundle(path), catalog)
        return self._predictor

    def prepare(self, configs) -> None:
        """Predict ``(name, count)`` configurations not yet predicted, in one call."""
        todo = [cfg for cfg in dict.fromkeys(_pairs(configs)) if cfg not in self._rows]
        if not todo:
            return
        table = estimate_runs(self._loaded(), self._profiles, todo, self.run, self._request)[0]
        for cfg, row in zip(todo, table.to_dict("records"), strict=True):
            self._rows[cfg] = row

    def row(self, resources) -> dict:
        """The :data:`~profet_core.sky._runs.RUN_COLUMNS` row of a resource's configuration."""
        cfg = config_of(resources)
        if cfg not in self._rows:
            self.prepare([cfg])
        return self._rows[cfg]

    def __call__(self, resources) -> float:
        """Predicted seconds of the whole run on ``resources`` (all its GPUs, data-parallel)."""
        row = self.row(resources)
        if row["reason"]:
            name, count = config_of(resources)
            label = "a resource without accelerators" if name is None else config_label(name, count)
            if label not in self.unanswered:
                self.unanswered[label] = row["reason"]
                warnings.warn(  # the name is a catalog's or a task's text: printed as data
                    printable(
                        f"PROFET gives no run time ({row['reason']}); SkyPilot is given "
                        f"{UNANSWERED_S:.0e} s for {label}, so that it is never preferred"
                    ),
                    UserWarning,
                    stacklevel=2,
                )
            return UNANSWERED_S
        return float(row["run_hours"]) * 3600.0

    def warnings_for(self, configs) -> list[str]:
        """The prediction's warnings about the profile (ops, novelty, fit, several GPUs) for
        the ``(name, count)`` configurations a task asks about."""
        configs = [cfg for cfg in dict.fromkeys(_pairs(configs)) if cfg[0] is not None]
        if not configs:
            return []
        return estimate_runs(self._loaded(), self._profiles, configs, self.run, self._request)[1]

    def table(self) -> pd.DataFrame:
        """Every configuration predicted so far (:data:`RUN_COLUMNS`)."""
        return pd.DataFrame(list(self._rows.values()), columns=list(RUN_COLUMNS))


def _pairs(configs) -> list[tuple]:
    """``configs`` as ``(accelerator name or None, GPU count)`` pairs, or one line saying why
    they are none."""
    try:
        pairs = [None if isinstance(c, (str, bytes)) else tuple(c) for c in configs]
    except TypeError:
        pairs = None
    if pairs is None or any(p is None or len(p) != 2 for p in pairs):
        raise ProfetValueError(
            f"configs must be (accelerator name, GPU count) pairs, e.g. [('H100', 8)]; got "
            f"{shown(configs)}"
        )
    return pairs


def config_of(resources) -> tuple:
    """``(accelerator name or None, count)`` of a ``sky.Resources`` (one accelerator type)."""
    acc = getattr(resources, "accelerators", None)
    if not acc:
        return (None, 0)
    if not isinstance(acc, dict) or len(acc) != 1:
        raise ProfetValueError(
            f"resources with accelerators {str(acc)[:80]!r}; expected one type, {{name: count}}"
        )
    ((name, count),) = acc.items()
    return (str(name), count)


def time_estimator(
    profiles: pd.DataFrame, request=None, *, predictor=None, **options
) -> SkyTimeEstimator:
    """A time estimator for SkyPilot's optimizer from one profile.

    Parameters
    ----------
    profiles : pandas.DataFrame
        One profile row (``Host_*``/``Device_*`` op times in us), as
        :func:`~profet_core.read_profile` returns it.
    request : PredictRequest, optional
        What is asked (:class:`~profet_core.PredictRequest`): the run, as ``dataset_images``
        and ``epochs`` or as ``run_steps`` (training steps on one GPU, ``run_steps x
        batch_size`` images of work); ``batch_size``, images per step on one GPU as profiled
        (default: the profile's; on N GPUs the step is data-parallel at this per-GPU batch,
        global batch N x batch); the anchor (default: the one the profile names), its latency,
        precision and the rest as for :meth:`~profet_core.Predictor.predict`. Its ``gpus`` and
        ``targets`` are not used (each candidate uses all its GPUs).
    predictor : Predictor, optional
        Default: :func:`~profet_core.load_artifacts`'s shipped models.
    **options
        The request's fields as keywords instead; not with ``request``.

    Returns
    -------
    SkyTimeEstimator
        ``estimator(resources) -> seconds``, for ``sky.Task.set_time_estimator``.

    Raises
    ------
    ProfetValueError
        A profile of other than one row, no run length, a bad option, or a profile PROFET
        refuses (as :meth:`~profet_core.Predictor.predict` would).
    """
    from ..inputs._profile import profile_instance
    from ..prediction._load import load_models
    from ..prediction._request import as_request

    request = as_request(request, options)
    frame_arg(profiles, "the profile")
    if len(profiles) != 1:
        raise ProfetValueError(
            f"the profile has {len(profiles):,} rows; a run time is for one workload: give one row"
        )
    if request.anchor is None:
        request = request.replace(anchor=profile_instance(profiles))
    r = request
    run = run_spec(profiles, r.dataset_images, r.epochs, r.run_steps, r.batch_size)
    predictor = load_models() if predictor is None else predictor
    return SkyTimeEstimator(predictor, profiles, run, request)
