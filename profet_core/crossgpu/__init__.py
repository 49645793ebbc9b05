"""Cross-instance prediction: GPUs the data never measured, from their spec sheets."""

from .spec._basis import BASES
from .spec._model import CrossInstanceModel
from .spec._pairs import all_pairs, median_table

__all__ = ["BASES", "CrossInstanceModel", "all_pairs", "median_table"]
