"""The one set of picks: the fastest, the cheapest and the best value, computed once
per input row (and precision) for the precision, GPU count and run the user chose, by one named
criterion; the per-target table, the offerings, the CLI's table, CSV and JSON and the app's
metrics, chart and front all read them from here.

The criterion follows what the rows compare:

- **whole run** (a run is given): its time (``run_hours``) and cost (``run_usd``), at each
  configuration's global batch (per-GPU batch x GPUs used);
- **per image** (no run, GPU counts differ): time and cost per per-GPU batch of work
  (``ms_per_batch`` = step time / GPUs used, ``usd_per_1000_batches``), i.e. the most images/s
  is the fastest: a step of N GPUs does N batches;
- **per step** (no run, one GPU count): the step time (``batch_latency_ms``) and the cost of
  1,000 steps (``usd_per_1000_steps``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

PICKS = ("fastest", "cheapest", "best value")
#: Best value: the least product of cost and time, i.e. the one where halving either matters
#: equally; always on the time-cost front.
BEST_VALUE = "least cost x time"


@dataclass(frozen=True)
class Criterion:
    """What the picks rank by: ``name`` (``per step``, ``per image`` or ``whole run``), the time
    and cost columns, and their labels with units."""

    name: str
    time_column: str
    cost_column: str
    time_label: str
    cost_label: str

    def describe(self) -> str:
        """The criterion in one sentence, naming the columns the picks rest on."""
        return (
            f"picks ({self.name}): fastest = least {self.time_label} [{self.time_column}], "
            f"cheapest = least {self.cost_label} [{self.cost_column}], best value = "
            f"{BEST_VALUE}"
        )


PER_STEP = Criterion(
    "per step", "batch_latency_ms", "usd_per_1000_steps", "step time (ms)", "USD per 1,000 steps"
)
PER_IMAGE = Criterion(
    "per image",
    "ms_per_batch",
    "usd_per_1000_batches",
    "time per per-GPU batch (ms)",
    "USD per 1,000 per-GPU batches",
)
WHOLE_RUN = Criterion("whole run", "run_hours", "run_usd", "run time (h)", "USD per run")
#: The criteria by name.
CRITERIA = {c.name: c for c in (PER_STEP, PER_IMAGE, WHOLE_RUN)}


def criterion(run: bool, gpus_used=()) -> Criterion:
    """The criterion for a table with (``run``) or without a whole run whose rows use
    ``gpus_used`` GPUs (an array; NaN ignored)."""
    if run:
        return WHOLE_RUN
    used = np.asarray(gpus_used, dtype=float)
    return PER_IMAGE if len(np.unique(used[np.isfinite(used)])) > 1 else PER_STEP


def criterion_of(table: pd.DataFrame) -> Criterion:
    """:func:`criterion` of a prediction or offerings table: a run where it has ``run_usd``, the
    GPUs used from ``gpus_used`` (offerings) or ``gpus``."""
    used = "gpus_used" if "gpus_used" in table else "gpus"
    return criterion("run_usd" in table, table[used] if used in table else ())


def per_batch(table: pd.DataFrame) -> dict:
    """``ms_per_batch`` and ``usd_per_1000_batches`` of a table (step time and cost of 1,000
    steps divided by the GPUs used)."""
    used = "gpus_used" if "gpus_used" in table else "gpus"
    n = table[used].to_numpy(float)
    return {
        "ms_per_batch": table["batch_latency_ms"].to_numpy(float) / n,
        "usd_per_1000_batches": table["usd_per_1000_steps"].to_numpy(float) / n,
    }


def with_picks(table: pd.DataFrame) -> tuple[pd.DataFrame, Criterion]:
    """``table`` with the columns its criterion rests on (per image: :func:`per_batch`) and
    ``pick`` (``"fastest"``, ``"cheapest"``, ``"best value"``, joined by ``", "``, or ``""``)
    per input row and precision; and the criterion."""
    crit = criterion_of(table)
    out = table.copy(deep=False)
    if crit is PER_IMAGE:
        for c, v in per_batch(table).items():
            out[c] = v
    keys = [out[k].to_numpy() for k in ("row", "precision") if k in out]
    t, c = (out[col].to_numpy(float) for col in (crit.time_column, crit.cost_column))
    out["pick"] = pick_arrays(t, c, group_ids(keys))
    return out, crit


def pareto_mask(time, cost) -> np.ndarray:
    """Rows on the time-cost front: no other is at least as fast and as cheap and better in one;
    NaN never on it."""
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


def pick_arrays(time: np.ndarray, cost: np.ndarray, gid: np.ndarray) -> np.ndarray:
    """The ``pick`` of each row (object array of str), per group ``gid`` (-1: no group).

    Fastest: least time, the cheaper on a tie (among rows with a cost where the group has any);
    cheapest: least cost, the faster on a tie; best value: least time x cost (both known).
    Vectorised: a 100,000-profile table has 100,000 groups."""
    n = len(time)
    out = np.full(n, "", dtype=object)
    if not n or not (gid >= 0).any():
        return out
    tf, cf = np.isfinite(time), np.isfinite(cost)
    both = tf & cf & (gid >= 0)
    priced = np.zeros(int(gid.max()) + 1, dtype=bool)
    priced[gid[both]] = True
    ok = gid >= 0
    fast_ok = ok & tf & (cf | ~priced[np.where(ok, gid, 0)])
    product = time * cost
    chosen = (
        ("fastest", _first(fast_ok, gid, time, cost)),
        ("cheapest", _first(ok & cf, gid, cost, time)),
        ("best value", _first(both, gid, product, np.zeros(n))),
    )
    for what, rows in chosen:
        for i in rows:
            out[i] = f"{out[i]}, {what}" if out[i] else what
    return out


def _first(mask: np.ndarray, gid: np.ndarray, first: np.ndarray, then: np.ndarray) -> np.ndarray:
    """Per group of ``gid`` among ``mask``'s rows, the row with the least ``first``, then
    ``then`` (NaN last), then the earliest."""
    idx = np.flatnonzero(mask)
    if not len(idx):
        return idx
    order = idx[np.lexsort((idx, then[idx], first[idx], gid[idx]))]
    g = gid[order]
    return order[np.flatnonzero(np.diff(g, prepend=g[0] - 1))]


def group_ids(keys: list) -> np.ndarray:
    """One id per row for each distinct combination of ``keys`` (arrays), -1 where a key is
    missing (as pandas' group-by drops it); a key with one value (NaN aside) splits nothing."""
    if not keys:
        return np.zeros(0, dtype=np.int64)
    gid = np.zeros(len(keys[0]), dtype=np.int64)
    keys = [k for k in keys if not _single(np.asarray(k))]
    for k in keys:  # each key's codes in order of appearance, -1 where missing
        codes, uniques = pd.factorize(np.asarray(k))
        gid = np.where((gid < 0) | (codes < 0), -1, gid * max(len(uniques), 1) + codes)
    return gid


def _single(values: np.ndarray) -> bool:
    """Whether ``values`` hold at most one distinct value, NaN aside (pandas' ``nunique``)."""
    ok = values[~pd.isna(values)]
    return len(ok) == 0 or bool((ok == ok[0]).all())


def front_arrays(t_all: np.ndarray, c_all: np.ndarray, keys: list) -> tuple:
    """``(pareto, pick)`` of the time and cost arrays per group of equal ``keys`` (the input
    row, and the precision where there is one): a bool array and a list of str."""
    gid = group_ids(keys) if keys else np.zeros(len(t_all), dtype=np.int64)
    pareto = np.zeros(len(t_all), dtype=bool)
    for g in np.unique(gid[gid >= 0]):
        idx = np.flatnonzero(gid == g)
        pareto[idx] = pareto_mask(t_all[idx], c_all[idx])
    return pareto, list(pick_arrays(t_all, c_all, gid))


def picked_rows(table: pd.DataFrame, row: int = 0) -> dict:
    """``{"fastest" | "cheapest" | "best value": row of ``table`` (a Series) or None}`` from
    its ``pick`` column, for one input row."""
    t = table[(table["row"] == row) & (table["pick"] != "")]
    named = [(p.split(", "), i) for i, p in zip(t.index, t["pick"], strict=True)]
    return {p: next((t.loc[i] for names, i in named if p in names), None) for p in PICKS}


#: An 80% interval is called wide from this far from the prediction on either side (a fifth):
#: over twice the spec model's one-GPU FP32 interval (about 9% either side on the example
#: profile) and three times a measured pair's (4-6%); AMP's and several GPUs' reach 25-37%.
WIDE = 0.2


def interval_words(r) -> str:
    """How far one row's 80% interval reaches below and above its step time, and ", wide"
    beyond :data:`WIDE` on either side."""
    p, lo, hi = (float(r.get(c, np.nan)) for c in ("batch_latency_ms", "low_ms", "high_ms"))
    if not (np.isfinite(p) and np.isfinite(lo) and np.isfinite(hi) and p > 0):
        return "its interval is unknown"
    below, above = 1 - lo / p, hi / p - 1
    wide = ", wide" if max(below, above) > WIDE else ""
    return f"its 80% interval runs {below:.0%} below to {above:.0%} above its step time{wide}"


def pick_name(r) -> str:
    """How a picked row of the per-target table is named: its configuration and the offering
    renting it cheapest (``"8 x H100 SXM5 80GB on aws p5.48xlarge (us-east-1)"``), or its
    target where the table has no configurations (unpriced artifacts)."""
    if "configuration" not in r.index:
        return str(r["target"])
    where = str(r.get("offering", "") or "")
    return f"{r['configuration']} on {where}" if where else str(r["configuration"])


def weak_picks_warning(picks: dict, kind: str, name: str, advise: bool = False) -> str | None:
    """The warning when picks (:func:`picked_rows`) rest on specs, not measurements: each named
    with its basis and its interval's width, in words that follow the width. ``kind``:
    ``"target"`` or ``"offering"``; ``name``: the criterion's name."""
    weak = []
    for what, r in picks.items():
        if r is None or str(r["basis"]).startswith(("measured", "anchor")):
            continue
        who = pick_name(r) if kind == "target" else f"{r['cloud']} {r['instance']}"
        weak.append(
            f"the {what} {kind} ({name}), {who}, rests on {r['basis']} ({interval_words(r)})"
        )
    if not weak:
        return None
    text = "; ".join(weak)
    advice = (
        " Measure it (profet collect --quick, then profet add-instance) before committing to it."
        if advise
        else ""
    )
    return f"{text[:1].upper()}{text[1:]}: no training run of that GPU backs it.{advice}"


def steps_text(table: pd.DataFrame) -> str | None:
    """How many steps each GPU count runs (``steps`` of a table with run totals, one input
    row), as one sentence; None without a run."""
    if "steps" not in table or not len(table):
        return None
    used = "gpus_used" if "gpus_used" in table else "gpus"
    n = table[used] if used in table else pd.Series(1, index=table.index)
    per = table.assign(_n=n.to_numpy()).groupby("_n", sort=True)["steps"].first()
    parts = [f"{int(s):,} on {int(g)} GPU{'s' if g > 1 else ''}" for g, s in per.items()]
    return (
        f"Steps in the run: {', '.join(parts)} (each configuration's global batch = GPUs used "
        "x the per-GPU batch)."
    )
