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
    "cheapest on-demand region (region; regions_at_price: how many regions share that price, the first by name shown), "
    "spot_usd_per_hour at its cheapest spot region (spot_region), which may be another region; "
    "--region or --all-regions shows each region's own prices"
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
    out["price_check"] = price_check_codes(out["note"].tolist())
    return out


def _noted(rows: pd.DataFrame, col: str) -> pd.DataFrame:
    """``rows`` whose ``note`` also says what their market's price needs said (``col``)."""
    if col not in rows or "note" not in rows:
        return rows
    extra = rows[col].fillna("").astype(str).to_numpy()
    said = np.flatnonzero(extra != "")
    if len(said):
        notes = rows["note"].fillna("").astype(str).to_numpy(dtype=object)
        notes[said] = [cat(notes[i], extra[i]) for i in said]
        rows = rows.assign(note=notes)
    return rows


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
        tied = _tied(order, key)
        rows = order.drop_duplicates(key).sort_index()
        more = tied.reindex(rows.index)
        said = np.flatnonzero(more.notna().to_numpy())
        if len(said):
            notes = rows["note"].fillna("").astype(str).to_numpy(dtype=object)
            notes[said] = [cat(notes[i], more.iat[i]) for i in said]
            rows = rows.assign(note=notes)
    return rows.reset_index(drop=True)


def _tied(order: pd.DataFrame, key: list) -> pd.Series:
    """For the first (shown) row of each ``key`` in ``order`` (sorted by price, region): a note
    naming the other regions with the same price, where there are any."""
    price = order["price_usd_per_hour"]
    best = price.groupby([order[k] for k in key]).transform("min")
    same = order[np.isclose(price, best, rtol=1e-9, atol=0)]
    regions = same.groupby(key, sort=False)["region"].agg(list)
    first = same.drop_duplicates(key)
    out = {}
    for i, k in zip(first.index, zip(*(first[c] for c in key), strict=True), strict=True):
        names = regions.get(k, [])
        if len(names) > 1:
            shown = ", ".join(map(str, names[1:5])) + (
                f" and {len(names) - 5} more" if len(names) > 5 else ""
            )
            out[i] = (
                f"the same price in {len(names) - 1} other region(s) ({shown}); "
                f"{names[0]} shown, first by name"
            )
    return pd.Series(out, dtype=object)


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
        lines["regions_at_price"] = np.nan
        lines["note"] = [_line_note(r) for r in lines.itertuples(index=False)]
    else:
        order = rows.sort_values(["spot", "price_usd_per_hour", "region"], kind="stable")
        key = ["cloud", "instance"]
        first = order.drop_duplicates(key)
        lines = table.loc[_positions(table, first)].copy()
        count = order[~order["spot"]].groupby(key)["price_usd_per_hour"].agg(_at_min)
        lines["regions_at_price"] = [
            count.get(k, np.nan) for k in zip(lines["cloud"], lines["instance"], strict=True)
        ]
        sp = order[order["spot"]].drop_duplicates(key).set_index(key)
        spot_at = [
            sp.index.get_loc(k) if k in sp.index else None
            for k in zip(lines["cloud"], lines["instance"], strict=True)
        ]
        lines["spot_usd_per_hour"] = [
            np.nan if j is None else sp["spot_usd_per_hour"].iat[j] for j in spot_at
        ]
        lines["spot_region"] = ["" if j is None else sp["region"].iat[j] for j in spot_at]
        spot_note = [
            "" if j is None else str(sp["spot_note"].iat[j]) if "spot_note" in sp else ""
            for j in spot_at
        ]
        lines["note"] = [
            cat(r.note if isinstance(r.note, str) else "", getattr(r, "price_note", ""), sn)
            for r, sn in zip(lines.itertuples(index=False), spot_note, strict=True)
        ]
    lines["price_check"] = price_check_codes(lines["note"].tolist())
    return lines[[*cols, "spot_region", "regions_at_price", "price_check"]].reset_index(drop=True)


def _positions(table: pd.DataFrame, rows: pd.DataFrame) -> list:
    """Index labels of ``table``'s lines (cloud, instance, region) that ``rows`` name."""
    key = ["cloud", "instance", "region"]
    at = {
        k: i for i, k in zip(table.index, zip(*(table[c] for c in key), strict=True), strict=True)
    }
    return [at[k] for k in zip(*(rows[c] for c in key), strict=True)]


def _at_min(prices: pd.Series) -> int:
    return int(np.isclose(prices, prices.min(), rtol=1e-9, atol=0).sum())


def _line_note(r) -> str:
    """A region line's note with what both of its prices need said."""
    note = r.note if isinstance(r.note, str) else ""
    return cat(note, getattr(r, "price_note", "") or "", getattr(r, "spot_note", "") or "")


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
