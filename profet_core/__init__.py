"""PROFET: predict CNN training-step latency and cost on GPU cloud instances from one profile.

Typical use::

    from profet_core import load_artifacts, read_profile
    predictor = load_artifacts()
    result = predictor.predict("g3s.xlarge", read_profile("profile.json"), anchor_latency_s=0.12)
    # or: predictor.predict("g3s.xlarge", profile, PredictRequest(anchor_latency_s=0.12, gpus="all"))
    result.table  # batch_latency_ms, low_ms, high_ms per target instance

This package exports the prediction side. Training (``train``, ``validate``, ``add_instance``,
``load_dataset``, ``cross_validate``) and the experiment-design subpackage
(``profet_core.doe``) and SkyPilot's planning (``sky_plan``, ``time_estimator``: the ``sky``
extra) are imported only when used, so ``import profet_core`` stays light (no
scikit-learn, scipy, statsmodels, plotly or TensorFlow).
"""

from importlib import import_module

from ._format import format_number
from ._schema import LATENCY_UNITS, STEPS_ASSUMED
from .errors import (
    ArtifactError,
    NotFittedError,
    ProfetError,
    ProfetFileNotFoundError,
    ProfetValueError,
)
from .inputs._catalog import estimate_run, load_catalog
from .inputs._csv import escape_formulas
from .inputs._profile import parse_profile, read_profile
from .inputs._rules import latency_seconds
from .offerings._prices import load_artifacts
from .prediction._predictor import Predictor
from .prediction._request import PredictRequest
from .prediction._result import NOVELTY_WARN, Prediction

#: Public names loaded on first use: ``name -> module``.
_LAZY = {
    "train": ".training._train",
    "validate": ".training._validate",
    "Validation": ".training._validate",
    "add_instance": ".training._add_instance",
    "cross_validate": ".training._cross_validate",
    "summarize": ".training._cross_validate",
    "Dataset": ".inputs._dataset",
    "load_dataset": ".inputs._dataset",
    "make_dataset": ".inputs._dataset",
    "make_pairs": ".inputs._dataset",
    "Answer": ".offerings",
    "answer": ".offerings",
    "OfferingFilter": ".offerings",
    "load_offerings": ".offerings",
    "offerings_meta": ".offerings",
    "predict_offerings": ".offerings",
    "price_source": ".offerings",
    "refresh_offerings": ".offerings",
    "write_offerings": ".offerings",
    "list_offerings": ".offerings",
    "offerings_changes_text": ".offerings",
    "SkyPlan": ".sky",
    "sky_plan": ".sky",
    "time_estimator": ".sky",
}

__all__ = [
    "LATENCY_UNITS",
    "NOVELTY_WARN",
    "Answer",
    "STEPS_ASSUMED",
    "ArtifactError",
    "Dataset",
    "NotFittedError",
    "OfferingFilter",
    "PredictRequest",
    "Prediction",
    "Predictor",
    "ProfetError",
    "ProfetFileNotFoundError",
    "ProfetValueError",
    "SkyPlan",
    "Validation",
    "add_instance",
    "answer",
    "cross_validate",
    "escape_formulas",
    "estimate_run",
    "format_number",
    "latency_seconds",
    "load_artifacts",
    "load_catalog",
    "list_offerings",
    "load_dataset",
    "load_offerings",
    "make_dataset",
    "make_pairs",
    "offerings_changes_text",
    "offerings_meta",
    "parse_profile",
    "predict_offerings",
    "price_source",
    "read_profile",
    "refresh_offerings",
    "sky_plan",
    "summarize",
    "time_estimator",
    "train",
    "validate",
    "write_offerings",
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    if name == "doe":
        return import_module(".doe", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
