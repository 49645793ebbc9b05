"""One-point scaler: the latency at any batch or input size on an instance from one latency
there (measured, or predicted on the Anchor page), the curve's shape learned per instance."""

from ._model import POWER, OnePointScaler, one_point_pairs
from ._validate import VARIANTS, cross_validate_one_point, fit_one_point, summarize_one_point

__all__ = [
    "POWER",
    "VARIANTS",
    "OnePointScaler",
    "cross_validate_one_point",
    "fit_one_point",
    "one_point_pairs",
    "summarize_one_point",
]
