"""Cross-instance prediction: GPUs the data never measured, from their spec sheets."""

from ._basis import BASES
from ._model import CrossInstanceModel
from ._pairs import all_pairs, median_table

__all__ = ["BASES", "CrossInstanceModel", "all_pairs", "median_table"]
