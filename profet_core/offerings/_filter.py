"""Choosing among offerings: one filter dataclass and one pure ``matches`` function, shared by
the command line, the app and the tests; one offering per market (on-demand, spot)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._messages import quote, quote_list
from ..errors import ProfetValueError
from ._checks import cat, price_check_codes

SPOT_NOTE = "spot capacity can be taken back at any time (the run must resume from checkpoints)"
CHEAPEST_NOTE = (
    "each instance type is shown once per cloud, at its cheapest region (--region or "
    "--all-regions shows regions); where regions tie, the note names the others"
)
LISTING_NOTE = (
    "each instance type is shown once per cloud, at its cheapest region: usd_per_hour at its "
    "cheapest on-demand region (region; regions_at_price: how many regions share that price, "
    "the first by name shown), spot_usd_per_hour at its cheapest spot region (spot_region; "
    "spot_regions_at_price: how many share it), which may be another region; --region or "
    "--all-regions shows each region's own prices"
)
#: The listing's note with --spot: its lines are the cheapest spot regions'.
LISTING_SPOT_NOTE = (
    "each instance type is shown once per cloud, at its cheapest spot region (region = "
    "spot_region; spot_regions_at_price: how many regions share that spot price, the first by "
    "name shown): spot_usd_per_hour there, and usd_per_hour the on-demand price of that same "
    "region, which may not be the type's cheapest on-demand (profet instances without --spot "
    "shows that); --region or --all-regions shows each region's own prices"
)


@dataclass(frozen=True)
class OfferingFilter:
    """Which offerings to keep.

    Attributes
    ----------
    clouds, regions : tuple of str
        Keep these (case-insensitive; empty: all).
    gpus : tuple of str
        GPU names: an offering matches when every word of one name is a word of its catalog
        accelerator or spec GPU (``A100`` matches A100-80GB, ``L4`` not L40S).
    spot : bool or None
        True: spot offerings only; False: on-demand only; None: both markets.
    max_usd_per_hour : float, optional
        Upper bound on the offering's price in its market (the whole instance, USD per hour).
    all_regions : bool
        Keep every region; otherwise each instance type once per cloud and market, at its
        cheapest region (unless ``regions`` names some).
    """

    clouds: tuple = ()
    regions: tuple = ()
    gpus: tuple = ()
    spot: bool | None = False
    max_usd_per_hour: float | None = None
    all_regions: bool = False

    def __post_init__(self):
        for name in ("clouds", "regions", "gpus"):
            value = getattr(self, name)
            if isinstance(value, str) or not _names_ok(value):
                raise ProfetValueError(
                    f"{name} must be a sequence of names, got {quote(value)}; e.g. ('aws',), "
                    "or () for all"
                )
            wordless = [v for v in value if not _words(v)]
            if wordless:  # "" or "-" would match every offering
                raise ProfetValueError(
                    f"{name} names {quote(wordless[0])}, which has no letter or digit; give a "
                    "name (e.g. aws, A100, us-east-1)"
                )
            object.__setattr__(self, name, tuple(value))
        m = self.max_usd_per_hour
        if m is not None and (
            isinstance(m, bool) or not isinstance(m, (int, float)) or not math.isfinite(m) or m <= 0
        ):
            raise ProfetValueError(
                f"max_usd_per_hour {m!r} is not allowed; it must be a finite price > 0 (USD/h)"
            )
        if self.spot not in (True, False, None):
            raise ProfetValueError(f"spot {self.spot!r}; allowed: True, False, None")
        if not isinstance(self.all_regions, (bool, np.bool_)):  # 'no' is truthy
            raise ProfetValueError(
                f"all_regions {quote(self.all_regions)} is not allowed; give True or False"
            )


def _names_ok(value) -> bool:
    try:
        return all(isinstance(v, str) for v in value)
    except TypeError:  # None, a number: not a sequence
        return False


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", str(text).lower()) if w}


def markets(table: pd.DataFrame) -> pd.DataFrame:
    """One row per offering and market: the on-demand row where there is an on-demand price, the
    spot row only where there is a spot price (never the on-demand price in its place).

    Returns
    -------
    pandas.DataFrame
        ``table``'s columns plus ``spot`` (bool) and ``price_usd_per_hour`` (that market's).
    """
    od = table[table["usd_per_hour"].notna()].assign(spot=False)
    od["price_usd_per_hour"] = od["usd_per_hour"]
    sp = table[table["spot_usd_per_hour"].notna()].assign(spot=True)
    sp["price_usd_per_hour"] = sp["spot_usd_per_hour"]
    out = pd.concat([_noted(od, "price_note"), _noted(sp, "spot_note")], ignore_index=True)
    # merged into each market row's note: fewer text columns for every later take
    return out.drop(columns=["price_note", "spot_note"], errors="ignore")


def _noted(rows: pd.DataFrame, col: str) -> pd.DataFrame:
    """``rows`` whose ``note`` also says what their market's price needs said (``col``), and
    ``price_check`` its short words (only the rows it speaks of are read)."""
    check = np.full(len(rows), "", dtype=object)
    if col not in rows or "note" not in rows:
        return rows.assign(price_check=check)
    extra = rows[col].fillna("").astype(str).to_numpy(dtype=object)
    said = np.flatnonzero(extra != "")
    if len(said):
        notes = rows["note"].fillna("").astype(str).to_numpy(dtype=object)
        notes[said] = [cat(notes[i], extra[i]) for i in said]
        check[said] = price_check_codes(extra[said])
        return rows.assign(note=notes, price_check=check)
    return rows.assign(price_check=check)


def matches(rows: pd.DataFrame, f: OfferingFilter) -> np.ndarray:
    """Boolean mask of the market rows (:func:`markets`) that ``f`` keeps (regions aside)."""
    keep = np.ones(len(rows), dtype=bool)
    if f.clouds:
        keep &= rows["cloud"].str.lower().isin([c.lower() for c in f.clouds]).to_numpy()
    if f.regions:
        keep &= rows["region"].str.lower().isin([r.lower() for r in f.regions]).to_numpy()
    if f.gpus:
        wanted = [_words(g) for g in f.gpus]
        names = (rows["accelerator"].astype(str) + " " + rows["gpu"].astype(str)).to_numpy()
        cache = {n: _words(n) for n in set(names)}
        keep &= np.array([any(w <= cache[n] for w in wanted) for n in names], dtype=bool)
    if f.spot is not None:
        keep &= (rows["spot"] == f.spot).to_numpy()
    if f.max_usd_per_hour is not None:
        keep &= (rows["price_usd_per_hour"] <= f.max_usd_per_hour).to_numpy()
    return keep


def choose(table: pd.DataFrame, f: OfferingFilter) -> pd.DataFrame:
    """The market rows of a snapshot that ``f`` keeps, each instance type once per cloud and
    market at its cheapest region unless ``f`` names regions or asks for all."""
    rows = markets(table)
    rows = rows[matches(rows, f)]
    if not (f.all_regions or f.regions) and len(rows):
        key = ["cloud", "instance", "spot"]
        order = rows.sort_values(["price_usd_per_hour", "region"], kind="stable")
        tied, count = _tied(order, key)
        rows = order.drop_duplicates(key).sort_index()
        rows = rows.assign(regions_at_price=count.reindex(rows.index).to_numpy())
        more = tied.reindex(rows.index)
        said = np.flatnonzero(more.notna().to_numpy())
        if len(said):
            notes = rows["note"].fillna("").astype(str).to_numpy(dtype=object)
            notes[said] = [cat(notes[i], more.iat[i]) for i in said]
            rows = rows.assign(note=notes)
    else:  # each region shown: none stands for others
        rows = rows.assign(regions_at_price=np.nan)
    return rows.reset_index(drop=True)


def _tied(order: pd.DataFrame, key: list) -> tuple[pd.Series, pd.Series]:
    """For the first (shown) row of each ``key`` in ``order`` (sorted by price, region): a note
    naming the other regions with the same price, where there are any, and for every row how
    many regions share its group's least price (vectorised: one Python step per tied row
    only)."""
    group = order.groupby(key, sort=False).ngroup().to_numpy()
    price = order["price_usd_per_hour"].to_numpy(dtype=float)
    best = np.full(group.max() + 1 if len(group) else 0, np.inf)
    np.minimum.at(best, group, price)
    at_min = np.isclose(price, best[group], rtol=1e-9, atol=0)
    count = np.bincount(group[at_min], minlength=len(best))
    at_count = pd.Series(count[group], index=order.index)
    tied = at_min & (count[group] > 1)
    names: dict = {}
    first: dict = {}
    labels, regions = order.index.to_numpy()[tied], order["region"].to_numpy()[tied]
    for label, g, r in zip(labels, group[tied], regions, strict=True):
        names.setdefault(g, []).append(str(r))
        first.setdefault(g, label)
    out = {}
    for g, regions in names.items():
        shown = ", ".join(regions[1:5]) + (
            f" and {len(regions) - 5} more" if len(regions) > 5 else ""
        )
        out[first[g]] = (
            f"the same price in {len(regions) - 1} other region(s) ({shown}); "
            f"{regions[0]} shown, first by name"
        )
    return pd.Series(out, dtype=object), at_count


def choose_lines(table: pd.DataFrame, f: OfferingFilter) -> pd.DataFrame:
    """The snapshot lines (both prices side by side) that ``f`` keeps, for listing instances:
    each instance type once per cloud at its cheapest region (on-demand price, or spot where
    ``f.spot`` is True or the line has no on-demand price) unless ``f`` names regions or asks
    for all."""
    rows = markets(table)
    rows = rows[matches(rows, f)]
    cols = [c for c in table.columns if c not in ("price_note", "spot_note")]
    if f.all_regions or f.regions or not len(rows):
        lines = rows.drop_duplicates(["cloud", "instance", "region"])
        lines = table.loc[_positions(table, lines)].copy() if len(lines) else table.iloc[:0].copy()
        lines["spot_region"] = np.where(lines["spot_usd_per_hour"].notna(), lines["region"], "")
        lines["regions_at_price"] = lines["spot_regions_at_price"] = np.nan
        lines["note"] = _with_notes(lines, ("price_note", "spot_note"))
    else:
        lines = _cheapest_lines(table, rows)
    lines["price_check"] = price_check_codes(lines["note"].tolist())
    shown = [*cols, "spot_region", "regions_at_price", "spot_regions_at_price", "price_check"]
    return lines[shown].reset_index(drop=True)


def _positions(table: pd.DataFrame, rows: pd.DataFrame) -> list:
    """Index labels of ``table``'s lines (cloud, instance, region) that ``rows`` name."""
    key = ["cloud", "instance", "region"]
    names = zip(*(table[c].tolist() for c in key), strict=True)  # lists: fast to walk
    at = dict(zip(names, table.index.tolist(), strict=True))
    return [at[k] for k in zip(*(rows[c].tolist() for c in key), strict=True)]


def _cheapest_lines(table: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """The default listing: each type's line at its cheapest on-demand region (or cheapest spot
    where it has no on-demand price), ``regions_at_price`` how many regions share that price,
    and the type's cheapest spot price with its region (``spot_region``), which may be another
    line's; ``note`` with what the shown prices need said."""
    key = ["cloud", "instance"]
    order = rows.sort_values(["spot", "price_usd_per_hour", "region"], kind="stable")
    lines = table.loc[_positions(table, order.drop_duplicates(key))].copy()
    count = _at_price(order[~order["spot"]], key, "regions_at_price")
    spot_count = _at_price(order[order["spot"]], key, "spot_regions_at_price")
    sp = order[order["spot"]].drop_duplicates(key)
    spot = table.loc[_positions(table, sp), [*key, "spot_usd_per_hour", "region"]]
    spot["spot_note"] = table.loc[spot.index, "spot_note"] if "spot_note" in table else ""
    spot = spot.rename(columns={"region": "spot_region", "spot_note": "_spot_note"})
    lines = lines.drop(columns="spot_usd_per_hour").reset_index(drop=True)
    lines = lines.merge(count, on=key, how="left").merge(spot, on=key, how="left")
    lines = lines.merge(spot_count, on=key, how="left")
    lines["spot_region"] = lines["spot_region"].fillna("")
    lines["note"] = _with_notes(lines, ("price_note", "_spot_note"))
    return lines


def _at_price(rows: pd.DataFrame, key: list, name: str) -> pd.DataFrame:
    """``key`` and ``name``: how many of ``rows`` (one market's) share each key's least price."""
    best = rows.groupby(key, sort=False)["price_usd_per_hour"].transform("min")
    at_min = rows[np.isclose(rows["price_usd_per_hour"], best, rtol=1e-9, atol=0)]
    return at_min.groupby(key, sort=False).size().rename(name).reset_index()


def _with_notes(lines: pd.DataFrame, cols) -> np.ndarray:
    """``lines``' notes with what ``cols`` (the market notes) say, read only where they speak."""
    notes = lines["note"].fillna("").astype(str).to_numpy(dtype=object)
    extra = [lines[c].fillna("").astype(str).to_numpy(dtype=object) for c in cols if c in lines]
    for i in np.flatnonzero(np.any([e != "" for e in extra], axis=0)) if extra else ():
        notes[i] = cat(notes[i], *(e[i] for e in extra))
    return notes


def check_offering_args(predictor, filter=None, catalog=None, offerings=None) -> None:
    """Type checks shared by :func:`list_offerings` and :func:`predict_offerings`.

    Raises
    ------
    ProfetValueError
        Naming the argument and what it must be.
    """
    from ..inputs._args import frame_arg
    from ..prediction._predictor import Predictor

    if not isinstance(predictor, Predictor):
        raise ProfetValueError(
            f"predictor must be a Predictor (load_artifacts()); got {type(predictor).__name__}"
        )
    if filter is not None and not isinstance(filter, OfferingFilter):
        raise ProfetValueError(f"filter must be an OfferingFilter; got {type(filter).__name__}")
    for name, value in (("catalog", catalog), ("offerings", offerings)):
        if value is not None:
            frame_arg(value, name)
    if offerings is not None:
        from ._args import check_snapshot

        check_snapshot(offerings)
    if catalog is not None:  # as strictly as the command line's --catalog
        from ..inputs._catalog import validate_catalog

        validate_catalog(catalog, missing_price_ok=True)


def why_nothing(table: pd.DataFrame, f: OfferingFilter, gpus=1) -> str:
    """Which filter leaves no offering, and what exists where it looked (one line)."""
    rows = markets(table)
    said = ""
    steps = (
        ("clouds", "cloud", "cloud", OfferingFilter(clouds=f.clouds, spot=None)),
        ("regions", "region", "region", replace(f, gpus=(), spot=None, max_usd_per_hour=None)),
        ("gpus", "GPU", "accelerator", replace(f, spot=None, max_usd_per_hour=None)),
    )
    for attr, label, col, step in steps:
        kept = rows[matches(rows, step)]
        if getattr(f, attr) and kept.empty:
            have = sorted(set(rows[col].astype(str)))
            return (
                f"no offering{said} matches {label} {quote_list(getattr(f, attr))}; "
                f"{label}s offered: {quote_list(have, 12)}"
            )
        rows = kept if getattr(f, attr) else rows
        said = f" of {label} {quote_list(getattr(f, attr))}" if getattr(f, attr) else said
    if f.spot is not None and not (rows["spot"] == f.spot).any():
        market = "a spot price" if f.spot else "an on-demand price"
        return (
            f"no offering{said} has {market} in the catalog; {'drop' if f.spot else 'add'} --spot"
        )
    rows = rows[rows["spot"] == f.spot] if f.spot is not None else rows
    if (
        f.max_usd_per_hour is not None
        and not (rows["price_usd_per_hour"] <= f.max_usd_per_hour).any()
    ):
        return (
            f"no offering{said} costs at most {f.max_usd_per_hour:g} USD/h; the cheapest costs "
            f"{rows['price_usd_per_hour'].min():.4g} USD/h"
        )
    if gpus not in (1, "all") and len(rows) and not (rows["gpus"] >= gpus).any():
        return f"no offering{said} has {gpus} GPUs; the most any has is {int(rows['gpus'].max())}"
    return "no offering matches the filters given"
