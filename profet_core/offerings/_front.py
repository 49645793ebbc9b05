"""The time-cost front of offerings and its picks, per input row (and precision): which
offerings no other beats on both step time and cost, and the fastest, cheapest and best-value
ones among them, computed once for the CLI and the app by the same rule as the per-target
table's picks (:mod:`profet_core.prediction._picks`)."""

from __future__ import annotations

import pandas as pd

from ..prediction._picks import BEST_VALUE, PICKS, front_arrays, pareto_mask

__all__ = ["BEST_VALUE", "PICKS", "add_front", "front_arrays", "front_columns", "pareto_mask"]


def add_front(
    out: pd.DataFrame, cost_column: str, time_column: str = "batch_latency_ms"
) -> pd.DataFrame:
    """``pareto`` and ``pick`` per input row (and precision): fastest (least time, the
    cheaper on a tie), cheapest (least cost, the faster on a tie) and best value
    (:data:`BEST_VALUE`)."""
    out = out.reset_index(drop=True)
    pareto, pick = front_columns(out, cost_column, time_column)
    return out.assign(pareto=pareto, pick=pick)


def front_columns(out: pd.DataFrame, cost_column: str, time_column: str) -> tuple:
    """``(pareto, pick)`` of :func:`add_front`, as a bool array and a list of str, in the rows'
    order."""
    keys = [out[k].to_numpy() for k in ("row", "precision") if k in out]
    return front_arrays(out[time_column].to_numpy(float), out[cost_column].to_numpy(float), keys)
