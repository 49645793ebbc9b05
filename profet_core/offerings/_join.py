"""Predictions joined to offerings: a prediction is made once per GPU configuration (a spec
line), then every offering that rents that GPU takes it and adds its own price.

Dozens of offerings of one GPU therefore cost one prediction. The time-cost front (``pareto``)
and the picks (fastest, cheapest, best value) are computed here once, for the CLI and the app.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .._schema import MS_PER_HOUR
from ..errors import ProfetValueError

NO_SPEC = "no spec model"
#: Best value: the offering with the least product of cost per 1,000 steps (or run cost) and
#: step time, i.e. the one where halving either matters equally; always on the front.
BEST_VALUE = "least cost x time"
PICKS = ("fastest", "cheapest", "best value")


@functools.lru_cache(maxsize=1)
def shipped_specs() -> pd.DataFrame:
    """The shipped spec sheet (one line per GPU configuration)."""
    from ..inputs._gpu_specs import load_specs

    return load_specs()


def spec_key_of_gpu(specs: pd.DataFrame | None = None) -> dict:
    """``{spec gpu string: spec line key}``: the line (instance) each offering's GPU is
    predicted as (the first line of a GPU, e.g. the measured g4dn.xlarge for the T4)."""
    specs = shipped_specs() if specs is None else specs
    return dict(reversed(list(zip(specs["gpu"], specs["instance"], strict=True))))


def gpus_used(offered: pd.Series, gpus) -> pd.Series:
    """GPUs an offering uses: ``1`` (one GPU, the whole instance paid), ``"all"`` (its own
    count) or ``N`` (N where it has at least N, else NaN: left out)."""
    if gpus == "all":
        return offered.astype(float)
    if isinstance(gpus, bool) or not isinstance(gpus, (int, np.integer)) or gpus < 1:
        raise ProfetValueError(f"gpus {gpus!r}; allowed: a whole number >= 1 or 'all'")
    return pd.Series(np.where(offered >= gpus, float(gpus), np.nan), index=offered.index)


def join_offerings(table: pd.DataFrame, rows: pd.DataFrame, gpus=1, key=None) -> pd.DataFrame:
    """Join a prediction table to offerings (market rows).

    Parameters
    ----------
    table : pandas.DataFrame
        A prediction table: ``row``, ``target`` (spec line), ``basis``, ``batch_latency_ms``,
        ``low_ms``, ``high_ms``, ``p_fit``; when it has ``gpus`` (GPUs used) and
        ``precision`` columns the join is on them too (one configuration per count).
    rows : pandas.DataFrame
        Offerings per market (:func:`~profet_core.offerings._filter.choose`).
    gpus : int or "all"
        GPUs each offering uses (:func:`gpus_used`).
    key : dict, optional
        ``{spec gpu: target}`` (default: :func:`spec_key_of_gpu`).

    Returns
    -------
    pandas.DataFrame
        One row per (input row, offering[, precision]): the offering's columns, ``market``,
        ``usd_per_hour`` (that market's price), ``gpus_used``, the prediction's columns and
        ``usd_per_1000_steps``. Offerings whose GPU has no spec line keep NaN times and
        basis "no spec model"; offerings with fewer GPUs than asked are left out.
    """
    key = spec_key_of_gpu() if key is None else key
    off = rows.rename(columns={"usd_per_hour": "on_demand_usd_per_hour"}).copy()
    off["usd_per_hour"] = off.pop("price_usd_per_hour")
    off["market"] = np.where(off["spot"], "spot", "on-demand")
    off["gpus_used"] = gpus_used(off["gpus"], gpus)
    off = off[off["gpus_used"].notna()]
    off["target"] = off["gpu"].map(key).fillna("")
    pred = table.drop(columns=["gpu", "usd_per_hour", "usd_per_1000_steps"], errors="ignore")
    on = ["target"]
    if "gpus" in pred:
        pred = pred.rename(columns={"gpus": "gpus_used"})
        on.append("gpus_used")
    elif gpus != 1:
        raise ProfetValueError(
            "this prediction is for one GPU; predicting several GPUs needs the multi-GPU model"
        )
    runs = pred["row"].unique() if len(pred) else np.array([0])
    spec = off[off["target"] != ""].merge(pred, on=on, how="left")
    spec = spec[spec["row"].notna()] if len(pred) else spec
    none = off[off["target"] == ""]
    none = pd.concat([none.assign(row=r) for r in runs], ignore_index=True)
    none["basis"] = NO_SPEC
    out = pd.concat([spec, none], ignore_index=True)
    out["row"] = out["row"].astype(int)
    other = out["basis"].eq("measured") & (out["instance"] != out["target"])
    out.loc[other, "basis"] = "measured on " + out.loc[other, "target"]
    out.loc[other, "note"] = _join_text(
        out.loc[other, "note"],
        "the GPU measured on " + out.loc[other, "target"] + ", on another host (CPU, PCIe "
        "and clocks may differ)",
    )
    out["usd_per_1000_steps"] = out["batch_latency_ms"] * 1000 / MS_PER_HOUR * out["usd_per_hour"]
    many = (out["gpus"] > out["gpus_used"]) & out["batch_latency_ms"].notna()
    note = np.where(
        many,
        "the step time uses " + out["gpus_used"].map("{:.0f}".format) + " GPU(s); the price is "
        "the whole instance's (" + out["gpus"].astype(int).astype(str) + " GPUs)",
        "",
    )
    out["note"] = _join_text(out.get("note", ""), note)
    out.loc[out["spot"], "note"] = _join_text(
        out.loc[out["spot"], "note"], "spot: can be taken back"
    )
    return out


def _join_text(a, b):
    a = pd.Series(a).fillna("").astype(str).to_numpy() if not isinstance(a, str) else a
    b = pd.Series(b).fillna("").astype(str).to_numpy() if not isinstance(b, str) else b
    joined = np.char.add(np.char.add(np.asarray(a, dtype=str), "; "), np.asarray(b, dtype=str))
    return np.char.strip(np.char.strip(np.asarray(joined, dtype=str)), "; ")


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


def add_front(out: pd.DataFrame, cost_column: str) -> pd.DataFrame:
    """``pareto`` and ``pick`` per input row (and precision): fastest (least step time, the
    cheaper on a tie), cheapest (least cost, the faster on a tie) and best value
    (:data:`BEST_VALUE`)."""
    out = out.copy()
    out["pareto"] = False
    out["pick"] = ""
    groups = ["row", *(["precision"] if "precision" in out else [])]
    for _, g in out.groupby(groups, sort=False):
        t, c = g["batch_latency_ms"].to_numpy(float), g[cost_column].to_numpy(float)
        front = pareto_mask(t, c)
        out.loc[g.index, "pareto"] = front
        if not front.any():
            continue
        f = g[front]
        tf, cf = t[front], c[front]
        chosen = {
            "fastest": f.index[np.lexsort((cf, tf))[0]],
            "cheapest": f.index[np.lexsort((tf, cf))[0]],
            "best value": f.index[int(np.argmin(tf * cf))],
        }
        for what, i in chosen.items():
            prev = out.at[i, "pick"]
            out.at[i, "pick"] = f"{prev}, {what}" if prev else what
    return out
