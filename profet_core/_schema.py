"""The names and limits every layer shares: the data's key columns, the op-column prefixes, and
the bounds on what any input may hold.

This module sits at the bottom of the package (it imports nothing of PROFET's), so the readers,
the dataset loader and the models agree on one definition of each.
"""

from __future__ import annotations

KEY = ("exp", "instance", "model", "input_size", "batch_size")
#: Columns that join an anchor's profile to a target's latency (the instance differs).
PAIR_KEY = ("exp", "model", "input_size", "batch_size")
OP_PREFIXES = ("Host_", "Device_")
#: The data's architectures no model is fitted on (VGG16 and Inception-v3: the published
#: measurements' independent check); the default of every fit that takes ``reserved``.
RESERVED_ARCHITECTURES = ("VGG16", "InceptionV3")


def op_columns(columns) -> list[str]:
    """Return the op-time columns (``Host_<Op>`` / ``Device_<Op>``) among ``columns``, in order."""
    # A pandas Index of text yields its names far faster as one list than one by one.
    names = columns.tolist() if hasattr(columns, "tolist") else columns
    return [c for c in names if isinstance(c, str) and c.startswith(OP_PREFIXES)]


#: Largest profile file accepted (bytes). A single profile is a few kB; tables of thousands of
#: profiles stay well under this.
MAX_PROFILE_BYTES = 50 * 1024 * 1024
#: Longest op name (characters). TensorFlow op types are short (the longest in the training data
#: has 33); 256 leaves room for custom ops while keeping every later step cheap.
MAX_OP_NAME_CHARS = 256
#: Most distinct ops per input (union over its rows). The training data has 65 op columns and a
#: large network's tensorflow_stats a few hundred types.
MAX_OPS = 5_000
#: Most rows (profiles) per table, and rows of a tensorflow_stats export.
MAX_ROWS = 200_000
#: Most cells (rows x op columns) built in memory: 20 M float64 = 160 MB.
MAX_CELLS = 20_000_000
#: Most columns a table may have (op columns plus others).
MAX_COLUMNS = 2 * MAX_OPS
#: Largest op time accepted (us): 1e12 us is 11.6 days of one op type within one profile.
#: Real totals are below 1e8 us; the bound keeps sums over <= MAX_OPS ops far from float overflow
#: (5e15), so no later total turns into inf or NaN.
MAX_OP_TIME_US = 1e12
#: Shortest and longest plausible training step (s): 1 us and 11.6 days. Below 1 us no GPU
#: finishes a step of any CNN (the training data's shortest is 2.6 ms); a denormal such as 1e-320
#: would make every ratio overflow.
MIN_LATENCY_S = 1e-6
MAX_LATENCY_S = 1e6
#: Least total op time of one profile row (us): a real step's profile holds thousands of us;
#: below 1 us the times are zero in all but name (e.g. denormals) or not microseconds.
MIN_ROW_TOTAL_US = 1.0
#: Largest batch size (images) and input side (px) accepted.
MAX_BATCH_SIZE = 1_000_000
MAX_INPUT_SIZE = 100_000
#: Seconds per unit a latency may be typed in.
LATENCY_UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}
#: Steps a profile may cover (PROFET's training profiles cover 2).
MAX_STEPS = 1_000
DEFAULT_STEPS = 2
LATENCY_COLUMN = "batch_latency_s"
STEPS_COLUMN = "steps"
#: ``DataFrame.attrs`` key under which the readers list the rows whose step count was assumed
#: (the input did not say; 2, PROFET's convention, was taken).
STEPS_ASSUMED = "steps_assumed_rows"
#: Longest user string quoted in a message (characters).
QUOTE_CHARS = 80
#: Milliseconds per hour, for costs (USD/h x ms).
MS_PER_HOUR = 3.6e6
