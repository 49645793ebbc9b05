"""What a prediction is asked for, in one object: :class:`PredictRequest`.

The CLI parses its flags into one, the Anchor page's form returns one, and ``Predictor.predict``,
``predict_offerings``, ``sky_plan`` and ``time_estimator`` take one; each field is declared and
checked here once, against one table of constraints (:data:`CONSTRAINTS`, the pattern of
scikit-learn's ``validate_params``), so a value is refused with the same message whichever door
it came in by. What needs the profile or the trained models (one latency per profile row, an
instance the models know) is checked where those are at hand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._messages import quote
from .._schema import MAX_BATCH_SIZE, MAX_INPUT_SIZE, MAX_STEPS
from ..errors import ProfetValueError
from ..inputs._args import is_number, names_arg, numbers_arg, shown
from ..inputs._rules import check_steps

#: Frameworks a profile can come from (None: the profile's own word, TensorFlow where it has none).
FRAMEWORKS = ("tensorflow", "pytorch")
#: Largest run, so that no cost or step count overflows: 1e11 images, 1e5 epochs, 1e12 steps.
RUN_LIMITS = {"dataset_images": 10**11, "epochs": 10**5, "run_steps": 10**12}


def _text(value, name: str, allowed: str):
    if value is not None and not isinstance(value, str):
        raise ProfetValueError(f"{name} {shown(value)} is not allowed; it must be {allowed}")
    if isinstance(value, str) and not value.strip():
        raise ProfetValueError(f"{name} is empty; it must be {allowed}")
    return value


def _whole(value, name: str, top: int):
    """A whole number 1..top (an int, or a float with no fraction), or None."""
    if value is None:
        return None
    ok = is_number(value) and (
        isinstance(value, (int, np.integer)) or (np.isfinite(value) and float(value).is_integer())
    )
    if not ok or not 1 <= value <= top:
        raise ProfetValueError(
            f"{name} {shown(value)} is not allowed; it must be a whole number 1..{top:,}"
        )
    return int(value)


def _sizes(value, name: str, top: int):
    """A whole number 1..top, one per profile row (a sequence; NaN where unknown), or None.
    The row count and per-row ranges are checked with the profile (``workload_sizes``)."""
    if value is None or is_number(value):
        return _whole(value, name, top)
    numbers_arg(value, name, none_is_nan=True)  # text, bools and objects refused by name
    return tuple(value)


def _latency(value, name: str):
    """Seconds: one number, one per profile row (NaN where unknown), or None. The range and
    the unit mix-ups are judged with the profile (``prepare_profiles``, the sense checks)."""
    if value is None or np.ndim(value) == 0:  # one value: judged with the profile
        return value
    return tuple(numbers_arg(value, name, "seconds", none_is_nan=True).tolist())


def _gpus(value):
    """1..64, "all" or a list of counts (kept as given: a count, "all", or a sorted tuple)."""
    from ._options import check_options

    gpus = check_options("fp32", value, None, None)[1]
    return (
        tuple(gpus) if isinstance(value, (list, tuple)) else int(value) if gpus != "all" else gpus
    )


def _amp_latency(value):
    from ._option_checks import checked_amp_latency

    return checked_amp_latency(value)


def _params(value):
    from ._option_checks import checked_params

    return checked_params(value)


def _precision(value):
    from ._options import check_options

    return check_options(value, 1, None, None)[0]


def _targets(value):
    names = names_arg(value, "targets")
    return None if names is None else tuple(names)


def _framework(value):
    if value is None:
        return None
    if not isinstance(value, str) or value.strip().lower() not in FRAMEWORKS:
        raise ProfetValueError(
            f"framework {quote(value)} is not allowed; use {' or '.join(FRAMEWORKS)} (or None: "
            "the profile's own)"
        )
    return value.strip().lower()


#: Each field's check: ``field -> (what is allowed, check(value) -> normalised value)``.
CONSTRAINTS: dict[str, tuple[str, Callable]] = {
    "anchor": (
        "an instance name, or None (the profile's own)",
        lambda v: _text(v, "anchor", "an instance name"),
    ),
    "anchor_latency_s": (
        "seconds: one number, one per profile row, or None",
        lambda v: _latency(v, "anchor latency"),
    ),
    "method": (
        "a method name, or None (the artifacts' default)",
        lambda v: _text(v, "method", "a method name"),
    ),
    "targets": ("instance names, or None (every one)", _targets),
    "steps": (
        f"training steps the profile covers, 1..{MAX_STEPS}, or None (the profile's own)",
        lambda v: None if v is None else int(check_steps([v], "steps override")[0]),
    ),
    "batch_size": (
        "images per step as profiled, or one per profile row, or None",
        lambda v: _sizes(v, "batch_size", MAX_BATCH_SIZE),
    ),
    "input_size": (
        "input side in px as profiled, or one per profile row, or None",
        lambda v: _sizes(v, "input_size", MAX_INPUT_SIZE),
    ),
    "precision": ("fp32 or amp", _precision),
    "gpus": ("1..64, 'all' or a list of counts", _gpus),
    "anchor_amp_latency_s": ("seconds, or None", _amp_latency),
    "params": ("the model's parameter count, or None", _params),
    "dataset_images": (
        "training images per epoch, or None",
        lambda v: _whole(v, "dataset_images", RUN_LIMITS["dataset_images"]),
    ),
    "epochs": ("epochs of the run, or None", lambda v: _whole(v, "epochs", RUN_LIMITS["epochs"])),
    "run_steps": (
        "training steps of the run on one GPU, or None",
        lambda v: _whole(v, "run_steps", RUN_LIMITS["run_steps"]),
    ),
    "framework": ("tensorflow or pytorch, or None (the profile's own)", _framework),
}


@dataclass(frozen=True)
class PredictRequest:
    """Everything a prediction is asked for, beside the profile itself; checked when made.

    Attributes
    ----------
    anchor : str, optional
        The instance the profile was taken on (None: the one the profile names).
    anchor_latency_s : float or tuple of float, optional
        The measured anchor step latency (s): one number, or one per profile row (NaN where
        unknown); None: each row's ``batch_latency_s``, if any.
    method : str, optional
        A prediction method of the artifacts (None: their default).
    targets : tuple of str, optional
        Target instances (None: every one).
    steps : int, optional
        Training steps the profile covers, overriding its own (None: the profile's, else 2).
    batch_size, input_size : int or tuple, optional
        Images per step and input side (px) as profiled, or one per profile row.
    precision : {"fp32", "amp"}
        ``amp``: mixed precision on each target (the profile stays FP32).
    gpus : int, "all" or list of int
        GPUs used data-parallel at the profile's per-GPU batch.
    anchor_amp_latency_s : float, optional
        A measured AMP step on the anchor (s), with ``precision="amp"``.
    params : float, optional
        The model's parameter count (sizes the all-reduce of several GPUs).
    dataset_images, epochs : int, optional
        The whole run (images per epoch and epochs): adds its time and cost.
    run_steps : int, optional
        The run as training steps on one GPU (SkyPilot's plans), instead of the two above.
    framework : {"tensorflow", "pytorch"}, optional
        The framework the profile comes from (None: the profile's own word).
    """

    anchor: str | None = None
    anchor_latency_s: float | tuple | None = None
    method: str | None = None
    targets: tuple | None = None
    steps: int | None = None
    batch_size: int | tuple | None = None
    input_size: int | tuple | None = None
    precision: str = "fp32"
    gpus: int | str | tuple = 1
    anchor_amp_latency_s: float | None = None
    params: float | None = None
    dataset_images: int | None = None
    epochs: int | None = None
    run_steps: int | None = None
    framework: str | None = None

    def __post_init__(self):
        for field in dataclasses.fields(self):
            check = CONSTRAINTS[field.name][1]
            object.__setattr__(self, field.name, check(getattr(self, field.name)))
        if self.anchor_amp_latency_s is not None and self.precision != "amp":
            raise ProfetValueError("an anchor AMP latency is only used with precision amp")
        if (self.dataset_images is None) != (self.epochs is None):
            raise ProfetValueError(
                "dataset_images and epochs go together: a whole run needs both (batch_size: "
                "the profile's by default)"
            )
        if self.run_steps is not None and self.dataset_images is not None:
            raise ProfetValueError(
                "give the run as dataset_images and epochs, or as run_steps, not both"
            )

    def replace(self, **changes) -> PredictRequest:
        """A copy with ``changes`` (field names), checked as a new request is."""
        unknown = sorted(set(changes) - set(CONSTRAINTS))
        if unknown:
            raise ProfetValueError(_unknown(unknown))
        return dataclasses.replace(self, **changes)

    @property
    def options(self) -> tuple:
        """``(precision, gpus, anchor_amp_latency_s, params)``, as the engine takes them."""
        from ._options import check_options

        gpus = list(self.gpus) if isinstance(self.gpus, tuple) else self.gpus
        return check_options(self.precision, gpus, self.anchor_amp_latency_s, self.params)

    @property
    def run(self) -> dict | None:
        """``{"dataset_images", "batch_size", "epochs"}`` of the whole run, or None."""
        if self.dataset_images is None:
            return None
        return {
            "dataset_images": self.dataset_images,
            "batch_size": self.batch_size,
            "epochs": self.epochs,
        }


def _unknown(names) -> str:
    return (
        f"unknown request field(s) {', '.join(map(quote, names))}; a PredictRequest has "
        f"{', '.join(CONSTRAINTS)}"
    )


def as_request(request, options: dict, anchor=None) -> PredictRequest:
    """The request of a call given either a :class:`PredictRequest` or its fields as keywords
    (``options``), not both; ``anchor`` (a positional argument beside the profile) fills the
    request's, and must agree with it where both are given."""
    if request is not None and not isinstance(request, PredictRequest):
        raise ProfetValueError(
            f"request must be a PredictRequest; got {type(request).__name__} {shown(request)}"
        )
    unknown = sorted(set(options) - set(CONSTRAINTS))
    if unknown:
        raise ProfetValueError(_unknown(unknown))
    if request is not None and options:
        raise ProfetValueError(
            f"give a PredictRequest or its fields as keywords, not both (got the request and "
            f"{', '.join(sorted(options))})"
        )
    req = PredictRequest(**options) if request is None else request
    if anchor is not None:
        _text(anchor, "anchor", "an instance name")
        if req.anchor is not None and req.anchor != anchor:
            raise ProfetValueError(
                f"the anchor {quote(anchor)} differs from the request's {quote(req.anchor)}"
            )
        req = dataclasses.replace(req, anchor=anchor)
    return req


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def request_fields(request: PredictRequest) -> dict:
    """The request's fields as JSON-able values (tuples as lists, numpy numbers as Python's),
    for a child process; :func:`request_of` makes the request again."""
    out = {}
    for field in dataclasses.fields(request):
        value = getattr(request, field.name)
        out[field.name] = [_plain(v) for v in value] if isinstance(value, tuple) else _plain(value)
    return out


def request_of(fields: dict) -> PredictRequest:
    """The :class:`PredictRequest` of :func:`request_fields`' output (checked anew)."""
    if not isinstance(fields, dict):
        raise ProfetValueError(f"request fields must be a dict; got {type(fields).__name__}")
    unknown = sorted(set(fields) - set(CONSTRAINTS))
    if unknown:
        raise ProfetValueError(_unknown(unknown))
    return PredictRequest(**fields)
