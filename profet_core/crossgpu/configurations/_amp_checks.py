"""Where the AMP model is known to miss: measured AMP gains against its own predictions.

``profet_core/data/amp_checks.csv`` (written by ``bench/claims/amp_hopper_blackwell.py
--record``) holds, per GPU and measured set (Lambda's PyTorch tables, the in-house runs), the
measured one-GPU AMP gain of ResNet-50, the shipped model's predicted gain for the data's
ResNet-50 profile and the miss (predicted / measured - 1, %). Nothing is fitted on it: an AMP
answer on a GPU whose miss exceeds :data:`MISS_NOTE_PCT` says by how much and where, so a user
reads the predicted gain with the measured one beside it.
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

import pandas as pd

CHECKS_PATH = Path(__file__).resolve().parents[1] / "data" / "amp_checks.csv"
#: A measured gain this far (%) from the prediction is said in the AMP answer's note.
MISS_NOTE_PCT = 15.0
COLUMNS = ("gpu", "measured", "measured_gain", "predicted_gain", "miss_pct")


def load_amp_checks() -> pd.DataFrame:
    """The package's check table (empty, with :data:`COLUMNS`, where there is none)."""
    path = resources.files("profet_core").joinpath("data/amp_checks.csv")
    if not path.is_file():
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.read_csv(io.StringIO(path.read_text(encoding="utf-8")))


def amp_miss_notes(targets: dict[str, str], checks: pd.DataFrame | None = None) -> list[str]:
    """One note per target whose GPU's measured AMP gains miss the model by more than
    :data:`MISS_NOTE_PCT` (``targets``: instance -> catalog GPU; ``checks``: a table with
    :data:`COLUMNS`, default the package's)."""
    checks = load_amp_checks() if checks is None else checks
    notes = []
    for target, gpu in sorted(targets.items()):
        rows = checks[checks["gpu"] == gpu]
        if rows.empty or rows["miss_pct"].abs().max() <= MISS_NOTE_PCT:
            continue
        said = "; ".join(
            f"{r.measured}: x{r.measured_gain:.2f} measured, x{r.predicted_gain:.2f} predicted "
            f"({r.miss_pct:+.0f}%)"
            for r in rows.itertuples(index=False)
        )
        notes.append(
            f"amp on {target} ({gpu}): the AMP gains measured on this GPU miss this model's by "
            f"more than {MISS_NOTE_PCT:g}% for ResNet-50 (the data's profile, 224 px, batch 64; "
            f"+: the model predicts more gain): {said}. Read its AMP time as that uncertain "
            "(bench/claims/amp_hopper_blackwell.py)."
        )
    return notes
