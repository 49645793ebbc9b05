"""Which capture convention and benchmark zoo made a dataset folder (no TensorFlow needed).

PROFET's training data was made with the original generator's convention, named
``profet-2021``: TensorFlow 2.5 with tf.keras (Keras 2), its own CNN zoo, SGD (the legacy
``ResourceApplyGradientDescent``), categorical cross-entropy with the accuracy metric, numpy
arrays with validation data, TensorBoard ``histogram_freq=1`` tracing two steps at 1.5 epochs,
no XLA, FP32. ``profet collect`` reproduces it (TensorFlow 2.x with the ``tf-keras`` package)
and writes :data:`CONVENTION_FILE` beside its tables. A folder without that file is taken as
``profet-2021`` (the shared data, or a user's own data), except a ``profet collect`` folder
(it has ``status.csv``) from before conventions were recorded: its zoo had 7 networks that
differ from the original's, so it is ``unrecorded``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ProfetValueError
from ._outputs import write_atomic

#: The training data's capture convention and zoo (the original generator's).
CONVENTION = "profet-2021"
ZOO_VERSION = "profet-2021"
#: Written by ``profet collect`` beside ``profiles.parquet``/``latencies.parquet``.
CONVENTION_FILE = "convention.json"
#: Largest convention file read (bytes): PROFET writes well under 1 kB.
MAX_CONVENTION_BYTES = 1024 * 1024
#: How ``profet profile``/``collect`` follow it (recorded in profile metadata and folders).
CONVENTION_PARTS = {
    "keras": "Keras 2 (tf-keras)",
    "optimizer": "legacy SGD (ResourceApplyGradientDescent)",
    "loss": "categorical_crossentropy",
    "metrics": ["accuracy"],
    "input": "numpy arrays (the original dataset sizes unless steps per epoch are capped), "
    "with validation data",
    "tensorboard": "histogram_freq=1, two steps traced at 1.5 epochs",
    "xla": False,
    "precision": "float32",
}
#: Convention and zoo of a collect folder written before conventions were recorded.
UNRECORDED = "unrecorded (profet collect before conventions were recorded)"


def folder_convention(folder: str | Path) -> tuple[str, str]:
    """``(convention, zoo)`` of a dataset folder.

    Parameters
    ----------
    folder : path-like
        A dataset folder (``profiles`` and ``latencies`` tables).

    Returns
    -------
    (str, str)
        From :data:`CONVENTION_FILE` when present; ``(UNRECORDED, UNRECORDED)`` for an older
        ``profet collect`` folder (``status.csv`` but no convention file); else
        ``(CONVENTION, ZOO_VERSION)``.

    Raises
    ------
    ProfetValueError
        If the convention file is not a JSON object with text ``convention`` and ``zoo``.
    """
    folder = Path(folder)
    path = folder / CONVENTION_FILE
    if not path.is_file():
        if (folder / "status.csv").is_file():
            return UNRECORDED, UNRECORDED
        return CONVENTION, ZOO_VERSION
    from ._safe_read import read_json_bounded

    data = read_json_bounded(path, MAX_CONVENTION_BYTES, "convention file")
    values = [data.get(k) if isinstance(data, dict) else None for k in ("convention", "zoo")]
    if not all(isinstance(v, str) and 0 < len(v) <= 200 for v in values):
        raise ProfetValueError(
            f"{str(path)!r} must be a JSON object with text 'convention' and 'zoo'"
        )
    return values[0], values[1]


def convention_name(optimizer: str | None = None) -> str:
    """The convention of rows trained with ``optimizer``: :data:`CONVENTION` for SGD (or
    None), else ``"profet-2021+<optimizer>"``, so that they never join SGD rows."""
    return CONVENTION if optimizer in (None, "sgd") else f"{CONVENTION}+{optimizer}"


def write_folder_convention(
    folder: str | Path, details: dict | None = None, convention: str = CONVENTION
) -> Path:
    """Write :data:`CONVENTION_FILE` (``convention``, this zoo, plus ``details``) into
    ``folder``."""
    path = Path(folder) / CONVENTION_FILE
    record = {"convention": convention, "zoo": ZOO_VERSION, **(details or {})}
    write_atomic(path, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return path


def check_same_convention(labels) -> None:
    """Refuse joining datasets whose convention or zoo differ.

    Parameters
    ----------
    labels : sequence of (source, convention, zoo)
        One per dataset; ``source`` names it (a folder) in the message.

    Raises
    ------
    ProfetValueError
        One line naming the first two that differ.
    """
    labels = list(labels)
    for source, convention, zoo in labels[1:]:
        first = labels[0]
        if (convention, zoo) != (first[1], first[2]):
            raise ProfetValueError(
                f"cannot join {first[0]} (convention {first[1]!r}, zoo {first[2]!r}) with "
                f"{source} (convention {convention!r}, zoo {zoo!r}): their profiles were taken "
                "differently and their same-named workloads are not the same; collect both "
                "with the same PROFET version"
            )
