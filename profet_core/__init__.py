"""PROFET: predict CNN training-step latency and cost on GPU cloud instances from one profile.

Typical use::

    from profet_core import load_artifacts, read_profile
    predictor = load_artifacts()
    result = predictor.predict("g3s.xlarge", read_profile("profile.json"), anchor_latency_s=0.12)
    result.table  # batch_latency_ms, low_ms, high_ms per target instance
"""

from ._artifacts import Prediction, Predictor, load_artifacts, train
from ._catalog import load_catalog
from ._cost import estimate_run
from ._data import Dataset, load_dataset, make_dataset, make_pairs
from ._profile import parse_profile, read_profile
from ._validate import NOVELTY_WARN, cross_validate, summarize
from .errors import ArtifactError, ProfetError, ProfetFileNotFoundError, ProfetValueError

__all__ = [
    "NOVELTY_WARN",
    "ArtifactError",
    "Dataset",
    "Prediction",
    "Predictor",
    "ProfetError",
    "ProfetFileNotFoundError",
    "ProfetValueError",
    "cross_validate",
    "estimate_run",
    "load_artifacts",
    "load_catalog",
    "load_dataset",
    "make_dataset",
    "make_pairs",
    "parse_profile",
    "read_profile",
    "summarize",
    "train",
]
