"""Residual diagnostics of a fitted factorial model: residual table and Shapiro-Wilk test."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class ShapiroResult:
    """Shapiro-Wilk test of the residuals."""

    statistic: float
    p_value: float


def _residuals(data: pd.DataFrame, y: np.ndarray, model) -> pd.DataFrame:
    if "run" in data.columns and pd.api.types.is_numeric_dtype(data["run"]):
        run_order = data["run"].to_numpy()
    else:
        run_order = np.arange(1, len(y) + 1)
    return pd.DataFrame(
        {
            "run_order": run_order,
            "observed": y,
            "fitted": model.fittedvalues.to_numpy(),
            "residual": model.resid.to_numpy(),
        }
    )


def _shapiro(residuals: pd.DataFrame, df_resid: int) -> ShapiroResult | None:
    r, y = residuals["residual"], residuals["observed"]
    if df_resid > 0 and len(r) >= 3 and np.ptp(r) > 1e-12 * max(1.0, np.ptp(y)):
        sw = stats.shapiro(r)
        return ShapiroResult(float(sw.statistic), float(sw.pvalue))
    return None
