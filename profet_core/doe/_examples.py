"""Example results: Montgomery's published filtration experiment and made-up demo responses."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._design import Design
from ._factors import as_number


def montgomery_filtration_example() -> pd.DataFrame:
    """Montgomery's filtration-rate 2^(4-1) experiment (I = ABCD), unreplicated.

    Design and Analysis of Experiments (Montgomery), Example 8.1: A = temperature, B = pressure,
    C = formaldehyde concentration, D = stirring rate (D = ABC), response filtration rate in gal/h.
    Published effects: A = 19.00, B = 1.50, C = 14.00, D = 16.50, AB + CD = -1.00,
    AC + BD = -18.50, AD + BC = 19.00.

    Returns
    -------
    pandas.DataFrame
        Columns ``run``, ``temperature``, ``pressure``, ``concentration``, ``stirring_rate`` (coded
        -1/+1) and ``filtration_rate``, in standard order.
    """
    a = [-1, 1, -1, 1, -1, 1, -1, 1]
    b = [-1, -1, 1, 1, -1, -1, 1, 1]
    c = [-1, -1, -1, -1, 1, 1, 1, 1]
    return pd.DataFrame(
        {
            "run": range(1, 9),
            "temperature": a,
            "pressure": b,
            "concentration": c,
            "stirring_rate": [x * y * z for x, y, z in zip(a, b, c, strict=True)],
            # treatment combinations (1), ad, bd, ab, cd, ac, bc, abcd
            "filtration_rate": [45.0, 100.0, 45.0, 65.0, 75.0, 60.0, 80.0, 96.0],
        }
    )


#: How a factor named like these moves the made-up training time (a power of its level ratio:
#: time ~ level ** power) and accuracy (change from low to high): the run time grows with the
#: epochs, falls with more CPU (less than proportionally), barely moves with memory.
_RESOURCE_EFFECTS = (
    ("epoch", 1.0, 0.02),
    ("cpu", -0.5, 0.0),
    ("mem", -0.05, 0.0),
)
#: Any other factor (e.g. the network): its high level takes this many times as long, and its
#: accuracy changes by up to this much, with a random sign.
_OTHER_TIME, _OTHER_ACCURACY = 1.6, 0.015


def _demo_effects(design: Design, rng) -> tuple[np.ndarray, np.ndarray]:
    """Half-effects (coded -1/+1) of each factor on log time and on accuracy."""
    log_time, accuracy = [], []
    for f in design.factors:
        lo, hi = as_number(f.low), as_number(f.high)
        rule = next((r for r in _RESOURCE_EFFECTS if r[0] in f.name.lower()), None)
        if rule is not None and lo and hi and lo > 0 and hi > 0:
            log_time.append(0.5 * rule[1] * np.log(hi / lo))
            accuracy.append(0.5 * rule[2] * np.sign(hi - lo))
        else:  # a larger network, say: slower at its high level, accuracy either way
            log_time.append(0.5 * np.log(_OTHER_TIME))
            accuracy.append(0.5 * _OTHER_ACCURACY * rng.choice([-1, 1]))
    return np.array(log_time), np.array(accuracy)


def demo_results(design: Design, seed: int = 0) -> pd.DataFrame:
    """Synthetic results for a design's run sheet, to try the analysis without real data.

    The responses ``accuracy`` and ``train_time_s`` are made up but physically plausible for
    factors named like Kubernetes training jobs: the run time is proportional to the epochs,
    falls with more CPU (as its square root) and slightly with more memory, and any other
    factor (the network) makes its high level 1.6x slower; accuracy grows with the epochs and
    moves with the network. Effects multiply (so epochs and network interact on the time) and
    noise is Gaussian. For demonstration only.

    Parameters
    ----------
    design : Design
        The design whose run sheet is filled in (its low/high levels as set).
    seed : int, default 0
        Seed of the made-up effects and noise.

    Returns
    -------
    pandas.DataFrame
        The run sheet with two extra columns, ``accuracy`` and ``train_time_s`` (seconds).
    """
    rng = np.random.default_rng(seed)
    x = design.coded().to_numpy(dtype=float)
    log_time, gain = _demo_effects(design, rng)
    acc = 0.85 + x @ gain + rng.normal(0, 0.004, len(x))
    time = 600 * np.exp(x @ log_time + rng.normal(0, 0.02, len(x)))
    out = design.runs.copy()
    out["accuracy"] = np.clip(acc, 0, 1).round(4)
    out["train_time_s"] = time.round(1)
    return out
