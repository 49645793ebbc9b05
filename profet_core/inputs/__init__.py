"""What a user or a data folder hands PROFET: profile readers (JSON, CSV, Parquet,
tensorflow_stats, torch.profiler traces and key_averages exports) and their rules, bounded file
reading, the profile sense checks, training datasets, the price catalog, the GPU spec sheet, the
data convention and the one rule of everything PROFET writes (``_outputs``).

Layer 1: imports only ``profet_core.errors``, ``_schema`` and ``_base``.
"""
