"""Example results: Montgomery's published filtration experiment and made-up demo responses."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._design import Design


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


def demo_results(design: Design, seed: int = 0) -> pd.DataFrame:
    """Synthetic results for a design's run sheet, to try the analysis without real data.

    The responses ``accuracy`` and ``train_time_s`` are made up: a few factors have large effects,
    the first two interact, and noise is Gaussian. They are for demonstration only.

    Parameters
    ----------
    design : Design
        The design whose run sheet is filled in.
    seed : int, default 0
        Seed of the made-up effects and noise.

    Returns
    -------
    pandas.DataFrame
        The run sheet with two extra columns, ``accuracy`` and ``train_time_s``.
    """
    rng = np.random.default_rng(seed)
    x = design.coded().to_numpy(dtype=float)
    k = x.shape[1]
    # sparse effects: a geometric fall-off makes the first factors matter most, as in screening
    scale = 0.5 ** np.arange(k)
    inter = x[:, 0] * x[:, 1] if k > 1 else np.zeros(len(x))
    acc = (
        0.85
        + x @ (0.03 * scale * rng.choice([-1, 1], k))
        + 0.01 * inter
        + rng.normal(0, 0.005, len(x))
    )
    time = 600 + x @ (120 * scale * rng.choice([-1, 1], k)) - 40 * inter + rng.normal(0, 15, len(x))
    out = design.runs.copy()
    out["accuracy"] = np.clip(acc, 0, 1).round(4)
    out["train_time_s"] = time.round(1)
    return out
