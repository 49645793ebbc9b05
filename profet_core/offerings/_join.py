"""Predictions joined to offerings: a prediction is made once per GPU configuration (a spec
line), then every offering that rents that GPU takes it and adds its own price.

Dozens of offerings of one GPU therefore cost one prediction. The join by positions
(:class:`JoinPlan`) also sorts the table and adds the time-cost front and picks
(:mod:`._front`), once, for the CLI and the app.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .._base import kept_for
from .._schema import MS_PER_HOUR
from ..errors import ProfetValueError
from ..prediction._picks import PER_IMAGE, criterion
from ._front import front_arrays

#: The region of a user's catalog price (``--catalog``): its offering is ``"catalog <instance>
#: (your catalog)"`` in the offerings view and in the per-configuration table alike.
USER_REGION = "(your catalog)"

NO_SPEC = "no spec model"


@functools.lru_cache(maxsize=1)
def shipped_specs() -> pd.DataFrame:
    """The shipped spec sheet (one line per GPU configuration)."""
    from ..inputs._gpu_specs import load_specs

    return load_specs()


def spec_key_of_gpu(specs: pd.DataFrame | None = None) -> dict:
    """``{spec gpu string: spec line key}``: the line (instance) each offering's GPU is
    predicted as (the first line of a GPU, e.g. the measured g4dn.xlarge for the T4)."""
    if specs is None:  # the shipped sheet: its key once per process
        return dict(_shipped_key())
    return dict(reversed(list(zip(specs["gpu"].tolist(), specs["instance"].tolist(), strict=True))))


@functools.lru_cache(maxsize=1)
def _shipped_key() -> dict:
    return spec_key_of_gpu(shipped_specs())


def gpus_used(offered: pd.Series, gpus) -> pd.Series:
    """GPUs an offering uses: ``1`` (one GPU, the whole instance paid), ``"all"`` (its own
    count) or ``N`` (N where it has at least N, else NaN: left out)."""
    if gpus == "all":
        return offered.astype(float)
    if isinstance(gpus, bool) or not isinstance(gpus, (int, np.integer)) or gpus < 1:
        raise ProfetValueError(f"gpus {gpus!r}; allowed: a whole number >= 1 or 'all'")
    return pd.Series(np.where(offered >= gpus, float(gpus), np.nan), index=offered.index)


def offer_side(rows: pd.DataFrame, gpus=1, key=None) -> pd.DataFrame:
    """The offerings' half of :func:`join_offerings` (the same for every prediction): market,
    its price, GPUs used, the spec line each is predicted as, and the notes that do not depend
    on the prediction."""
    key = spec_key_of_gpu() if key is None else key
    off = rows.rename(columns={"usd_per_hour": "on_demand_usd_per_hour"})
    off["usd_per_hour"] = off.pop("price_usd_per_hour")
    spot = off["spot"].to_numpy(dtype=bool)
    off["market"] = np.where(spot, "spot", "on-demand")
    off["gpus_used"] = gpus_used(off["gpus"], gpus)
    off = off[off["gpus_used"].notna()]
    off["target"] = [key.get(g, "") for g in off["gpu"]]
    notes = off["note"].fillna("").astype(str).tolist() if "note" in off else [""] * len(off)
    many = (off["gpus"] > off["gpus_used"]).to_numpy()
    used, count = off["gpus_used"].to_numpy(), off["gpus"].to_numpy()
    for i in np.flatnonzero(many):
        notes[i] = _cat(
            notes[i],
            f"the step time uses {used[i]:.0f} GPU(s); the price is the whole instance's "
            f"({count[i]:.0f} GPUs)",
        )
    for i in np.flatnonzero(off["spot"].to_numpy(dtype=bool)):
        notes[i] = _cat(notes[i], "spot: can be taken back")
    off["note"] = notes
    return off.reset_index(drop=True)


def join_offerings(table: pd.DataFrame, rows: pd.DataFrame, gpus=1, key=None, off=None):
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
    off : pandas.DataFrame, optional
        :func:`offer_side` of ``rows`` when the caller has it.

    Returns
    -------
    pandas.DataFrame
        One row per (input row, offering[, precision]): the offering's columns, ``market``,
        ``usd_per_hour`` (that market's price), ``gpus_used``, the prediction's columns and
        ``usd_per_1000_steps``. Offerings whose GPU has no spec line keep NaN times and
        basis "no spec model"; offerings with fewer GPUs than asked are left out.
    """
    off = offer_side(rows, gpus, key) if off is None else off
    plan = join_plan(table, off, gpus)
    if plan is not None:
        return pd.DataFrame(plan.columns(np.arange(plan.n)), index=pd.RangeIndex(plan.n))
    pred, on = _prediction_side(table, gpus)  # other columns (categories, flags...): pandas'
    out = _joined_frames(off, pred, on)  # own merge keeps their types
    basis, notes = _fixed(out["basis"], out["instance"], out["target"], out["note"].tolist())
    out["basis"], out["note"] = basis, notes
    out["usd_per_1000_steps"] = out["batch_latency_ms"] * (1000 / MS_PER_HOUR) * out["usd_per_hour"]
    return out


def _prediction_side(table: pd.DataFrame, gpus) -> tuple[pd.DataFrame, list]:
    """The prediction's columns the join takes (``gpus`` renamed ``gpus_used``) and the keys."""
    pred = table.drop(columns=["gpu", "usd_per_hour", "usd_per_1000_steps"], errors="ignore")
    on = ["target"]
    if "gpus" in pred:
        pred = pred.rename(columns={"gpus": "gpus_used"})
        on.append("gpus_used")
    elif gpus != 1:
        raise ProfetValueError(
            "this prediction is for one GPU; predicting several GPUs needs the multi-GPU model"
        )
    return pred, on


def _fixed(basis, inst, target, notes: list) -> tuple[np.ndarray, list]:
    """Basis and notes of offerings of a measured GPU on another instance type (another host)."""
    basis = np.asarray(basis, dtype=object).copy()
    inst, target = np.asarray(inst, dtype=object), np.asarray(target, dtype=object)
    for i in np.flatnonzero((basis == "measured") & (inst != target)):
        basis[i] = f"measured on {target[i]}"
        notes[i] = _cat(
            f"the GPU measured on {target[i]}, on another host (CPU, PCIe and clocks may differ)",
            notes[i],
        )
    return basis, notes


def _joined_frames(off: pd.DataFrame, pred: pd.DataFrame, on: list) -> pd.DataFrame:
    """The join by pandas' merge (any prediction columns): offerings with a spec line take each
    of its predictions, those without one are repeated once per input row, basis NO_SPEC."""
    has_spec = off["target"].to_numpy() != ""
    spec = off[has_spec].merge(pred, on=on, how="inner")
    runs = pred["row"].unique() if len(pred) else np.array([0])
    none = off[~has_spec]
    none = (
        none.assign(row=runs[0], basis=NO_SPEC)
        if len(runs) == 1
        else pd.concat([none.assign(row=r, basis=NO_SPEC) for r in runs], ignore_index=True)
    )
    out = pd.concat([spec, none], ignore_index=True)
    out["row"] = out["row"].astype(int)
    return out


def _plain(pred: pd.DataFrame, on: list, columns=None) -> bool:
    """Whether :func:`_joined_arrays` gives what :func:`_joined_frames` does: an integer
    ``row``, and every other prediction column (of ``columns``, default all) float or text
    (``str``)."""
    kinds = dict(zip(pred.columns, pred.dtypes, strict=True))
    columns = list(kinds) if columns is None else columns
    if "row" not in columns or kinds["row"].kind not in "iu" or "basis" not in columns:
        return False
    return all(
        c in ("row", "basis", *on) or kinds[c] == np.float64 or kinds[c] == "str" for c in columns
    )


#: Columns of a prediction table the join leaves to the prediction (the offering has its own).
_DROPPED = ("gpu", "usd_per_hour", "usd_per_1000_steps")


def join_plan(table: pd.DataFrame, off: pd.DataFrame, gpus=1, keep=None):
    """:func:`join_offerings` by positions (:class:`JoinPlan`), or None where the prediction
    has columns of other types than float and text, which pandas' merge joins. ``keep``: the
    prediction columns that travel (default: all), read from ``table`` without a copy."""
    names = [c for c in table.columns if keep is None or c in keep]
    if "gpus" not in names and gpus != 1:
        _prediction_side(table[[]], gpus)  # refused: a one-GPU prediction
    on = ["target", *(["gpus"] if "gpus" in names else [])]
    names = [c for c in names if c not in _DROPPED]
    return JoinPlan(off, table, on, names) if _plain(table, on, names) else None


class JoinPlan:
    """The join of offerings to predictions by positions: each offering row takes its
    prediction rows in their order, offerings without a spec line follow once per input row
    (as pandas' inner merge and concat order them). Columns are taken once, in the order the
    caller asks for (:meth:`columns`): the same rows, columns and types as the merge gives.

    Attributes
    ----------
    n : int
        Rows of the join.
    values : dict of str to ndarray
        In join order: ``row``, ``batch_latency_ms``, ``usd_per_hour``, ``gpus_used``,
        ``usd_per_1000_steps`` and, where predicted, ``precision``.
    """

    def __init__(self, off: pd.DataFrame, pred: pd.DataFrame, on: list, columns=None):
        """``on``: the prediction's key columns (``target``, and ``gpus``: the offerings'
        ``gpus_used``); ``columns``: the prediction columns that travel (default: all)."""
        columns = list(pred.columns) if columns is None else columns
        side = offer_facts(off)
        row = pred["row"].to_numpy()
        keys = tuple(zip(*(pred[c].tolist() for c in on), strict=True))
        self.rows, right, runs, none = _matched(side, len(on) > 1, keys, row)
        m = len(none) * len(runs)
        self.n = len(self.rows)
        self._off, self._side, self._pred = off, side, {}
        kinds = dict(zip(pred.columns, pred.dtypes, strict=True))
        self._text_target = kinds["target"] == "str"
        for c in columns:
            if c in on:
                continue
            values = pred[c].to_numpy()
            if c == "row":
                got = np.concatenate([values[right], np.repeat(runs, len(none))]).astype(int)
            elif c == "basis":
                got = np.concatenate([values.astype(object)[right], np.full(m, NO_SPEC, object)])
            elif values.dtype == np.float64:
                got = np.concatenate([values[right], np.full(m, np.nan)])
            else:  # text: missing for offerings without a spec line
                got = (np.concatenate([values.astype(object)[right], np.full(m, np.nan, object)]),)
                got += (kinds[c],)
            self._pred[c] = got
        self._basis, self._notes = _fixed(
            self._pred["basis"],
            side["instance"][self.rows],
            side["target"][self.rows],
            side["note"][self.rows].tolist(),
        )
        self.values = {
            c: self._pred[c] if c in self._pred else side["arrays"][c].to_numpy()[self.rows]
            for c in ("row", "batch_latency_ms", "usd_per_hour", "gpus_used")
        }
        self.values["usd_per_1000_steps"] = (
            self.values["batch_latency_ms"] * (1000 / MS_PER_HOUR) * self.values["usd_per_hour"]
        )
        if "precision" in self._pred:
            self.values["precision"] = pd.array(*self._pred["precision"])

    def columns(self, order: np.ndarray) -> dict:
        """The join's columns with its rows in ``order`` (positions), for one frame."""
        rows, index = self.rows[order], pd.RangeIndex(len(order))
        arrays = self._side["arrays"]
        cols = {c: a.take(rows) for c, a in arrays.items() if c != "note"}
        if not self._text_target:  # merged with categories or objects: objects
            cols["target"] = pd.Series(self._side["target"][rows], index, object)
        cols["note"] = [self._notes[i] for i in order]
        cols = {c: cols[c] for c in arrays}  # the offerings' column order
        for c, got in self._pred.items():
            if c == "basis":
                cols[c] = self._basis[order]
            elif isinstance(got, tuple):
                cols[c] = pd.array(got[0][order], dtype=got[1])
            else:
                cols[c] = got[order]
        cols["usd_per_1000_steps"] = self.values["usd_per_1000_steps"][order]
        return cols

    def front_table(self, columns) -> tuple[pd.DataFrame, str, str]:
        """The joined table without a run, with the front and picks, sorted by row, cost and
        time, ``columns`` kept in their order: what ``add_front`` and a stable
        ``sort_values`` (NaN last) of :func:`join_offerings`' table give; and the cost and
        time columns (per per-GPU batch where offerings use different GPU counts)."""
        v, extra = self.values, {}
        crit = criterion(False, v["gpus_used"])
        if crit is PER_IMAGE:
            extra["ms_per_batch"] = v["batch_latency_ms"] / v["gpus_used"]
            extra["usd_per_1000_batches"] = v["usd_per_1000_steps"] / v["gpus_used"]
        time, cost = crit.time_column, crit.cost_column
        t, c = {**v, **extra}[time], {**v, **extra}[cost]
        keys = [v["row"], *([self._pred["precision"][0]] if "precision" in v else [])]
        pareto, pick = front_arrays(t, c, keys)
        order = np.lexsort((t, c, v["row"]))
        cols = self.columns(order)
        cols.update({k: a[order] for k, a in extra.items()})
        cols["pareto"], cols["pick"] = pareto[order], [pick[i] for i in order]
        table = {k: cols[k] for k in columns if k in cols}
        return pd.DataFrame(table, index=pd.RangeIndex(self.n)), cost, time


def _cat(a: str, b: str) -> str:
    return f"{a}; {b}" if a and b else a or b


#: The offerings' arrays each join reads, kept per offerings frame (a frame the caches hold:
#: the shipped snapshot's per filter), checked by identity; a few at a time.
_FACTS: dict = {}


def offer_facts(off: pd.DataFrame) -> dict:
    """The offerings' columns as arrays (``arrays``: each column's, ``target``, ``instance``,
    ``note`` as objects), the spec lines they want (``wanted``, sorted) and the GPU counts they
    use (``counts``, sorted), built once per frame."""
    return kept_for(_FACTS, off, _facts, 16)


def _facts(off: pd.DataFrame) -> dict:
    facts = {
        "arrays": {c: off[c].array for c in off.columns},
        **{c: off[c].to_numpy(dtype=object) for c in ("target", "instance", "note")},
    }
    used = off["gpus_used"].tolist()
    facts["keys"] = list(zip(off["target"].tolist(), used, strict=True))
    facts["wanted"] = tuple(sorted(set(facts["target"].tolist()) - {""}))
    facts["counts"] = sorted({int(n) for n in used})
    facts["matches"] = {}
    return facts


#: Prediction rows (input rows x spec lines) up to which a join's matching is kept.
_KEPT_ROWS = 2_000


def _matched(side: dict, by_count: bool, keys: tuple, row: np.ndarray) -> tuple:
    """(offering row of each joined row, prediction row of each matched one, the input rows,
    the offerings without a spec line) of the prediction's ``keys`` (target[, GPUs used]) and
    input ``row`` per prediction row; kept per offerings and keys (the same on every call)."""
    kept = len(row) <= _KEPT_ROWS  # a few profile rows (the usual question): kept, bounded
    cache_key = (by_count, keys, row.tobytes()) if kept else None
    got = side["matches"].get(cache_key) if kept else None
    if got is not None:
        return got
    target = side["target"]
    found: dict = {}
    for j, k in enumerate(keys):
        found.setdefault(k, []).append(j)
    off_keys = side["keys"] if by_count else [(t,) for t in target.tolist()]
    left, right = [], []
    for i in np.flatnonzero(target != ""):
        for j in found.get(off_keys[i], ()):
            left.append(i)
            right.append(j)
    runs = pd.unique(row) if len(row) else np.array([0])
    none = np.flatnonzero(target == "")
    rows = np.concatenate([np.asarray(left, dtype=np.intp), np.tile(none, len(runs))])
    got = (rows, np.asarray(right, dtype=np.intp), runs, none)
    if kept:
        for a in got:
            a.flags.writeable = False
        if len(side["matches"]) >= 32:
            side["matches"].clear()
        side["matches"][cache_key] = got
    return got


def catalog_offerings(catalog: pd.DataFrame, predictor) -> pd.DataFrame:
    """A user's price catalog (``instance, gpu, usd_per_hour``) as offerings of cloud
    ``catalog``, merged with the snapshot's (an instance predictions reach keeps its GPU)."""
    specs = shipped_specs().set_index("instance")["gpu"]
    known = predictor.catalog.set_index("instance")
    counts = pd.to_numeric(known.get("gpu_count", pd.Series(dtype=float)), errors="coerce")
    rows = catalog.dropna(subset=["usd_per_hour"])
    return pd.DataFrame(
        {
            "cloud": "catalog",
            "instance": rows["instance"].to_numpy(),
            "region": USER_REGION,
            "gpu": [specs.get(i, "") for i in rows["instance"]],
            "accelerator": rows["gpu"].astype(str).to_numpy(),
            "gpus": [
                int(counts.get(i, 1)) if pd.notna(counts.get(i, 1)) else 1 for i in rows["instance"]
            ],
            "vcpus": np.nan,
            "memory_gib": np.nan,
            "usd_per_hour": rows["usd_per_hour"].astype(float).to_numpy(),
            "spot_usd_per_hour": np.nan,
            "zones": 0,
            "note": "your catalog's price",
        }
    )
