"""Data shared by the experiment-design tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from profet_core.doe import make_design

STUDY = [
    "cpu=750m,1500m",
    "memory=1.5Gi,3Gi",
    "network=FashionMNISTCNN,FashionMNISTResNet",
    "epochs=5,10",
]


# Montgomery Problem 8.1 (half of Problem 6.7, replicate 1), published Design-Expert output:
# effects A=-12, B=-1, C=4, D=-1, AB=6, AC=-1, AD=-5 with % contributions, and the ANOVA of the
# reduced model A, B, D, AB, AD (residual SS 34 on 2 df).
PROBLEM_8_1 = pd.DataFrame(
    {
        "A": [-1, 1, -1, 1, -1, 1, -1, 1],
        "B": [-1, -1, 1, 1, -1, -1, 1, 1],
        "C": [-1, -1, -1, -1, 1, 1, 1, 1],
        "D": [-1, 1, 1, -1, 1, -1, -1, 1],
        "yield": [90, 72, 87, 83, 99, 81, 88, 80],
    }
)


def _replicated(design_factors, generators, seed):
    design = make_design(design_factors, generators, replicates=2, seed=seed)
    rng = np.random.default_rng(seed)
    df = design.runs.copy()
    x = design.coded().to_numpy(dtype=float)
    df["y"] = (
        10 + x @ rng.normal(0, 2, x.shape[1]) + 1.5 * x[:, 0] * x[:, 1] + rng.normal(0, 1, len(df))
    )
    return design, df
