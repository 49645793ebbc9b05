"""The time-cost front of offerings and its picks, per input row (and precision): which
offerings no other beats on both step time and cost, and the fastest, cheapest and best-value
ones among them, computed once for the CLI and the app."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Best value: the offering with the least product of cost per 1,000 steps (or run cost) and
#: step time, i.e. the one where halving either matters equally; always on the front.
BEST_VALUE = "least cost x time"
PICKS = ("fastest", "cheapest", "best value")


def pareto_mask(time, cost) -> np.ndarray:
    """Offerings on the time-cost front: no other is at least as fast and as cheap and better
    in one; NaN never on it."""
    time, cost = np.asarray(time, dtype=float), np.asarray(cost, dtype=float)
    ok = np.isfinite(time) & np.isfinite(cost)
    out = np.zeros(len(time), dtype=bool)
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((time[idx], cost[idx]))]
    best = np.inf
    for i in order:
        if time[i] < best:
            out[i] = True
            best = time[i]
    return out


def add_front(
    out: pd.DataFrame, cost_column: str, time_column: str = "batch_latency_ms"
) -> pd.DataFrame:
    """``pareto`` and ``pick`` per input row (and precision): fastest (least step time, the
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


def front_arrays(t_all: np.ndarray, c_all: np.ndarray, keys: list) -> tuple:
    """:func:`front_columns` of the time and cost arrays, per group of equal ``keys`` (the
    input row, and the precision where there is one): the groups in the order they first
    appear, as pandas' unsorted group-by gives them."""
    n = len(t_all)
    pareto = np.zeros(n, dtype=bool)
    pick = [""] * n
    groups = [np.arange(n)] if all(_single(k) for k in keys) else _groups(keys)
    for idx in groups:
        t, c = t_all[idx], c_all[idx]
        front = pareto_mask(t, c)
        pareto[idx] = front
        if not front.any():
            continue
        f, tf, cf = idx[front], t[front], c[front]
        chosen = (
            ("fastest", f[np.lexsort((cf, tf))[0]]),
            ("cheapest", f[np.lexsort((tf, cf))[0]]),
            ("best value", f[int(np.argmin(tf * cf))]),
        )
        for what, i in chosen:
            pick[i] = f"{pick[i]}, {what}" if pick[i] else what
    return pareto, pick


def _single(values: np.ndarray) -> bool:
    """Whether ``values`` hold at most one distinct value, NaN aside (pandas' ``nunique``)."""
    ok = values[~pd.isna(values)]
    return len(ok) == 0 or bool((ok == ok[0]).all())


def _groups(keys: list) -> list:
    """Positions of each group of equal keys (missing keys dropped, as pandas' group-by does),
    in the order the groups first appear."""
    gid = np.zeros(len(keys[0]), dtype=np.int64)
    for k in keys:  # each key's codes in order of appearance, -1 where missing
        codes, uniques = pd.factorize(np.asarray(k))
        gid = np.where((gid < 0) | (codes < 0), -1, gid * max(len(uniques), 1) + codes)
    rows = np.flatnonzero(gid >= 0)
    if not len(rows):
        return []
    order = rows[np.argsort(gid[rows], kind="stable")]  # by group, rows in order within
    starts = np.flatnonzero(np.diff(gid[order], prepend=-2))
    groups = np.split(order, starts[1:])
    return sorted(groups, key=lambda g: g[0])  # groups in the order they first appear
