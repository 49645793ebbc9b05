"""One call from a profile to every offering priced: predict once per GPU configuration the
chosen offerings rent, join, cost, front and picks."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import ProfetValueError
from ..prediction._picks import (
    BEST_VALUE,
    CRITERIA,
    PER_IMAGE,
    criterion,
    per_batch,
    picked_rows,
    weak_picks_warning,
)
from ..prediction._request import as_request
from ._args import gpus_arg, no_target, run_arg
from ._filter import OfferingFilter, check_offering_args, choose, why_nothing
from ._front import add_front, front_columns
from ._join import (
    catalog_offerings,
    join_offerings,
    join_plan,
    offer_facts,
    offer_side,
    shipped_specs,
    spec_key_of_gpu,
)
from ._notes import offering_notes
from ._snapshot import load_offerings

#: Columns of the offerings table, in display order (run columns where a run is given).
OFFERING_COLUMNS = (
    "row",
    "cloud",
    "instance",
    "region",
    "gpu",
    "accelerator",
    "gpus",
    "gpus_used",
    "market",
    "usd_per_hour",
    "target",
    "basis",
    "batch_latency_ms",
    "low_ms",
    "high_ms",
    "usd_per_1000_steps",
    "precision",
    "images_per_s",
    "ms_per_batch",
    "usd_per_1000_batches",
    "steps",
    "run_hours",
    "run_usd",
    "run_usd_low",
    "run_usd_high",
    "p_fit",
    "pareto",
    "pick",
    "vcpus",
    "memory_gib",
    "on_demand_usd_per_hour",
    "spot_usd_per_hour",
    "regions_at_price",
    "price_check",
    "note",
)


@dataclass(frozen=True)
class OfferingsResult:
    """Every chosen offering priced with one prediction per GPU configuration.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`OFFERING_COLUMNS` (run columns only with a run): one row per input row and
        offering (market); ``pareto`` on the time-cost front, ``pick`` fastest / cheapest /
        best value (least cost x time) among them.
    prediction : Prediction
        The per-GPU prediction the offerings share (one row per spec line and input row).
    notes : tuple of str
        What every view of it must say: where the prices come from and how old, spot, the
        region view, multi-GPU prices, GPUs without a spec model.
    cost_column : str
        ``run_usd`` with a run, else ``usd_per_1000_steps``, or ``usd_per_1000_batches`` where
        offerings use different GPU counts (1,000 steps of N GPUs do N times the work).
    time_column : str
        ``run_hours`` with a run, else ``batch_latency_ms``, or ``ms_per_batch`` (step time /
        GPUs used: the time per per-GPU batch of work) where GPU counts differ.
    """

    table: pd.DataFrame
    prediction: object
    notes: tuple = ()
    cost_column: str = "usd_per_1000_steps"
    filter: OfferingFilter = field(default_factory=OfferingFilter)
    time_column: str = "batch_latency_ms"

    def to_csv(self) -> bytes:
        """The CSV document (``profet predict --offerings --format csv`` and the app's
        download): every column, numbers to 4 significant digits (at least 4 decimals),
        formula-looking text escaped."""
        from .._format import round_table
        from ..inputs._csv import escape_formulas

        text = round_table(escape_formulas(self.table)).to_csv(index=False, lineterminator="\n")
        return text.encode("utf-8")

    def axis_labels(self) -> tuple[str, str]:
        """``(time label, cost label)`` of the front's axes, with units."""
        return _LABELS[self.time_column], _LABELS[self.cost_column]

    @property
    def criterion(self):
        """The :class:`Criterion` the front and picks rank by (per step, per image, whole run)."""
        return next(c for c in CRITERIA.values() if c.time_column == self.time_column)

    def picks(self, row: int = 0) -> dict:
        """``{"fastest" | "cheapest" | "best value": row of the table or None}``."""
        return picked_rows(self.table, row)

    def where(self, f: OfferingFilter):
        """The same result narrowed to the offerings ``f`` keeps (clouds, GPUs, market, price;
        regions as computed), with the front and picks recomputed; no new prediction."""
        from dataclasses import replace

        from ._filter import matches

        if not isinstance(f, OfferingFilter):
            raise ProfetValueError(f"where takes an OfferingFilter; got {type(f).__name__}")
        t = self.table
        rows = t.assign(spot=t["market"].eq("spot"), price_usd_per_hour=t["usd_per_hour"])
        kept = add_front(t[matches(rows, f)], self.cost_column, self.time_column)
        return replace(self, table=kept.reset_index(drop=True), filter=f)

    def warnings(self, row: int | None = None) -> list[str]:
        """The prediction's warnings about the profile (ops, novelty, fit, input) and the
        offerings' own: the targets' price and basis notes of the per-GPU prediction do not
        apply (offerings carry their own prices), a pick resting on specs is said here."""
        p = self.prediction
        skip = {p.basis_warning(row)}
        kept = [w for w in p.warnings(row) if w not in skip and "of the instance's GPUs" not in w]
        picks = self.picks(0 if row is None else row)
        weak = weak_picks_warning(picks, "offering", self.criterion.name)
        return kept + ([weak] if weak else [])

    def front_text(self, row: int = 0, limit: int = 12) -> str:
        """The Pareto offerings of one input row, fastest first, as one line for people."""
        t = self.table[(self.table["row"] == row) & self.table["pareto"]]
        t = t.sort_values(self.time_column)
        time_label, cost_label = self.axis_labels()
        parts = [
            f"{r.cloud} {r.instance} ({r.region}, {r.market}: "
            f"{time_label} {getattr(r, self.time_column):.4g}, {cost_label} "
            f"{getattr(r, self.cost_column):.4g}{', ' + r.pick if r.pick else ''})"
            for r in t.head(limit).itertuples()
        ]
        more = f" and {len(t) - limit} more" if len(t) > limit else ""
        return (
            f"time-cost front ({len(t)} offerings; picks ({self.criterion.name}); best value = "
            f"{BEST_VALUE}): " + "; ".join(parts) + more
        )


def extended(predictor, specs: pd.DataFrame | None = None):
    """The predictor whose cross-instance model also knows the spec lines it was not trained
    with (new GPUs predicted from their specs without retraining), cached on it."""
    if specs is None:  # the shipped sheet: the same wider predictor on every call
        # Kept with the catalog it was built from (predictors of other catalogs share caches).
        return predictor.derived(
            ("offerings-shipped",),
            predictor.catalog,
            lambda _: extended(predictor, shipped_specs()),
        )
    cross = predictor.cross
    if cross is None:
        return predictor
    new = specs[~specs["instance"].isin(list(cross.spec_index_))]
    if new.empty:
        return predictor
    cache_key = ("offerings-specs", tuple(new["instance"]))
    # Kept with the catalog it was built from: predictors of other catalogs (a user's
    # prices, ``with_catalog``) share this cache and must not get another's.
    return predictor.derived(cache_key, predictor.catalog, lambda _: _wider(predictor, new))


def _wider(predictor, new: pd.DataFrame):
    """A predictor whose cross-instance model also knows the spec lines ``new``."""
    import copy

    from ..inputs._catalog import merge_catalogs

    cross = predictor.cross
    # A shallow copy with its own spec attributes: the fitted arrays are shared, never
    # changed, and a deep copy of the tree ensembles would cost a process 0.1-0.3 s.
    wider = copy.copy(cross)
    wider._set_specs(pd.concat([cross.specs_, new], ignore_index=True))
    catalog = merge_catalogs(
        predictor.catalog,
        new[["instance", "gpu", "gpu_count"]].assign(usd_per_hour=float("nan")),
        "base",
    )
    return predictor.with_cross(wider, catalog)


def predict_offerings(
    predictor,
    anchor,
    profiles: pd.DataFrame,
    request=None,
    *,
    filter: OfferingFilter | None = None,
    offerings: pd.DataFrame | None = None,
    catalog: pd.DataFrame | None = None,
    **options,
) -> OfferingsResult:
    """Predict a profile on every offering that ``filter`` keeps.

    Parameters
    ----------
    predictor : Predictor
    anchor, profiles, request, **options
        As for :meth:`Predictor.predict`: the request's ``gpus`` is the GPUs each offering
        uses (1: one GPU, the whole instance paid; N; or ``"all"``), its run (``dataset_images``,
        ``epochs``, ``batch_size``) adds the whole run's time and cost; ``targets`` is not
        used (the filter chooses).
    filter : OfferingFilter, optional
        Which offerings (default: on-demand, every cloud, each type at its cheapest region).
    offerings : pandas.DataFrame, optional
        A snapshot (default: the shipped one).
    catalog : pandas.DataFrame, optional
        A user's price catalog, merged in as offerings of cloud ``catalog``.

    Returns
    -------
    OfferingsResult
    """
    request = as_request(request, options, anchor)
    check_offering_args(predictor, filter, catalog, offerings)
    anchor, profiles = predictor.resolve(request, profiles)
    return offerings_answer(predictor, anchor, profiles, request, filter, offerings, catalog)


def offerings_answer(
    predictor, anchor, profiles, request, filter, offerings=None, catalog=None, blocks=None
) -> OfferingsResult:
    """:func:`predict_offerings` of checked arguments (``anchor`` resolved, the request's steps
    applied); ``blocks``: the engine's work on the same question by an earlier call."""
    f = OfferingFilter() if filter is None else filter
    gpus = gpus_arg(request.gpus)
    run = run_arg(request.run)
    if offerings is None and catalog is None:
        off = _shipped_side(f, gpus)
    else:
        off = offer_side(choose(_table(predictor, offerings, catalog), f), gpus)
    if off.empty:  # which filter leaves nothing, and what there is
        raise ProfetValueError(why_nothing(_table(predictor, offerings, catalog), f, gpus))
    key = spec_key_of_gpu()
    side = offer_facts(off)
    wanted = side["wanted"]
    wide = _unrented(_with_counts(extended(predictor), off))
    reach = set(wide.all_instances)
    targets = [t for t in wanted if t != anchor and t in reach]
    wide.check_instance(anchor, "anchor")
    if not targets:
        raise ProfetValueError(no_target(off, anchor))
    counts = list(side["counts"]) or [1]
    asked = replace(
        request, anchor=anchor, targets=tuple(targets), gpus=1 if counts == [1] else tuple(counts)
    )
    prediction, question, _ = wide.predict_prepared(anchor, profiles, asked, blocks)
    own = _anchor_rows(prediction, profiles, request.anchor_latency_s, anchor, wanted)
    if len(own):  # the anchor's own GPU: its measured latency, moved to the same options
        own = wide.configure_prepared(question, own)
    # Only the columns an offering shows travel through the join (the members, novelty and
    # ensemble names stay on the prediction).
    pred = prediction.table
    if len(own):
        pred = pd.concat([_shown(pred), _shown(own)], ignore_index=True)
    plan = join_plan(pred, off, gpus, keep=_KEPT) if run is None else None
    if plan is not None:  # by positions: each column taken once, in the final order
        out, cost, time = plan.front_table(OFFERING_COLUMNS)
    else:
        out, cost, time = _costed(join_offerings(_shown(pred), None, gpus, key, off), run)
    notes = offering_notes(out, f, offerings)
    crit = next(c for c in CRITERIA.values() if c.time_column == time)
    notes = (*notes, crit.describe()[:1].upper() + crit.describe()[1:] + ".")
    return OfferingsResult(out, prediction, notes, cost, f, time)


_KEPT = frozenset(OFFERING_COLUMNS)


def _unrented(wide):
    """``wide`` without its rentals: one row per spec line and count, which the offerings join
    (the per-target table's configurations are priced by the same rule)."""
    return wide if wide.rentals is None else replace(wide, rentals=None)


def _table(predictor, offerings, catalog) -> pd.DataFrame:
    """The offerings chosen from: the snapshot (given or shipped) and a user's catalog."""
    out = load_offerings() if offerings is None else offerings
    if catalog is not None:
        out = pd.concat([out, catalog_offerings(catalog, predictor)], ignore_index=True)
    return out


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """The prediction columns the offerings table keeps (and ``gpus``, a join key)."""
    return table[[c for c in table.columns if c in OFFERING_COLUMNS]]


def _with_counts(predictor, off: pd.DataFrame):
    """The predictor whose catalog lets each spec line have as many GPUs as its offerings rent
    (a GPU line is a GPU, not an instance: its count is the offering's)."""
    if (off["gpus_used"].to_numpy() <= 1).all():  # one GPU everywhere: nothing to widen
        return predictor
    most = off[off["target"] != ""].groupby("target")["gpus_used"].max()
    if most.empty or (most <= 1).all():
        return predictor
    cat = predictor.catalog.copy()
    have = pd.to_numeric(cat.get("gpu_count"), errors="coerce").fillna(1)
    cat["gpu_count"] = np.maximum(have, cat["instance"].map(most).fillna(1))
    return predictor.repriced(cat)


#: Axis labels (units included) of the front's time and cost columns.
_LABELS = {
    **{c.time_column: c.time_label for c in CRITERIA.values()},
    **{c.cost_column: c.cost_label for c in CRITERIA.values()},
}


def _costed(out: pd.DataFrame, run: dict | None) -> tuple[pd.DataFrame, str, str]:
    """The whole run's time and cost (with ``run``), the front and picks, sorted by cost
    (``out``, the join's own frame, gains columns in place).

    Offerings that use different GPU counts are compared on the same work: with a run, its
    time and cost (steps at the global batch); without, per per-GPU batch (a step of N GPUs
    does N batches), never per step."""
    crit = criterion(run is not None, out["gpus_used"])
    if run is not None:
        from ..inputs._catalog import estimate_run

        out = estimate_run(out, run["dataset_images"], run["batch_size"], run["epochs"])
    elif crit is PER_IMAGE:  # the join's own frame: in place
        for c, v in per_batch(out).items():
            out[c] = v
    time, cost = crit.time_column, crit.cost_column
    out["pareto"], out["pick"] = front_columns(out, cost, time)
    # By row, cost, time (stable, NaN last: numpy's order, as sort_values'), in one take.
    keys = [out[c].to_numpy() for c in (time, cost, "row")]
    cols = [out.columns.get_loc(c) for c in OFFERING_COLUMNS if c in out.columns]
    out = out.iloc[np.lexsort(keys), cols]
    return out.set_axis(pd.RangeIndex(len(out))), cost, time


@functools.lru_cache(maxsize=16)
def _shipped_side(f: OfferingFilter, gpus) -> pd.DataFrame:
    """:func:`offer_side` of the shipped snapshot for one filter (the same for every profile)."""
    return offer_side(choose(load_offerings(), f), gpus)


def _anchor_rows(prediction, profiles, anchor_latency_s, anchor, wanted) -> pd.DataFrame:
    """Offerings of the anchor's own GPU take the anchor's measured latency (NaN if not given)."""
    if anchor not in wanted:
        return pd.DataFrame()
    n = len(profiles)
    if anchor_latency_s is not None:
        lat = np.broadcast_to(np.asarray(anchor_latency_s, dtype=float), (n,))
    elif "batch_latency_s" in profiles:
        lat = profiles["batch_latency_s"].to_numpy(dtype=float)
    else:
        lat = np.full(n, np.nan)
    ms = np.asarray(lat, dtype=float) * 1000
    return pd.DataFrame(
        {
            "row": np.arange(n),
            "target": anchor,
            "basis": "anchor (your measured latency)",
            "batch_latency_ms": ms,
            "low_ms": ms,
            "high_ms": ms,
            "p_fit": np.nan,
        }
    )
