"""The notes an offerings answer carries (computed once for the CLI and the app)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._filter import CHEAPEST_NOTE, SPOT_NOTE, OfferingFilter
from ._gpus import OTHER_HOST
from ._join import NO_SPEC
from ._snapshot import price_source


def offering_notes(out: pd.DataFrame, f: OfferingFilter, offerings=None) -> tuple:
    """The notes an offerings answer carries: where prices come from, spot and cheapest-region
    caveats, GPUs with no spec model, multi-GPU pricing and comparison, unpriced anchor rows.

    Parameters
    ----------
    out : pandas.DataFrame
        The joined offerings (``basis``, ``gpus``, ``gpus_used``, ``batch_latency_ms``,
        ``market``, ``accelerator``).
    f : OfferingFilter
        The filter the offerings were chosen with.
    offerings : pandas.DataFrame, optional
        The snapshot they were chosen from (default: the shipped one), for the count of
        instance types with a price to check.

    Returns
    -------
    tuple of str
    """
    notes = [price_source()]
    if out.empty:
        notes.append("no offering matches the filters given")
        return tuple(notes)
    basis = out["basis"].to_numpy(dtype=object)  # plain arrays: each column read once
    used, latency = out["gpus_used"].to_numpy(), out["batch_latency_ms"].to_numpy()
    if (out["market"].to_numpy(dtype=object) == "spot").any():
        notes.append(f"spot prices: {SPOT_NOTE}")
    if not (f.all_regions or f.regions):
        notes.append(CHEAPEST_NOTE)
    unpredicted = pd.unique(out["accelerator"].to_numpy(dtype=object)[basis == NO_SPEC])
    none = sorted(str(a) for a in unpredicted if a not in OTHER_HOST)
    if none:
        notes.append(
            f"{len(none)} GPU(s) have no spec model, so their offerings are listed unpredicted: "
            + ", ".join(none)
        )
    # A modelled GPU on another kind of host: its own reason, not "no spec model".
    notes.extend(f"{a}: {OTHER_HOST[a]}" for a in sorted(set(unpredicted) & set(OTHER_HOST)))
    if ((out["gpus"].to_numpy() > used) & ~np.isnan(latency)).any():
        notes.append(
            "on multi-GPU offerings the step time is for the GPUs used and the price is the "
            "whole instance's"
        )
    if len(np.unique(used[~np.isnan(used)])) > 1:
        notes.append(
            "offerings use different GPU counts: they are compared per per-GPU batch of work "
            "(step time / GPUs used), or by the whole run's time and cost where a run is given"
        )
    checked = price_check_note(out, offerings)
    if checked:
        notes.append(checked)
    own = basis == "anchor (your measured latency)"
    if own.any() and np.isnan(latency[own]).any():
        notes.append("offerings of the anchor's own GPU need the anchor latency to be priced")
    return tuple(notes)


#: Offerings a price-check note names before it counts the rest.
NAMED = 6
#: The checked instance types of the last snapshots asked about: ``id -> (snapshot, table)``.
_CHECKED: dict = {}


def prices_to_check(offerings: pd.DataFrame | None = None) -> pd.DataFrame:
    """The instance types of a snapshot (default: the shipped one) whose catalog price needs a
    word in the default view (each type once per cloud at its cheapest region; on-demand or
    spot): ``cloud, instance, region, price_check``. Its length is the one count every view
    states (``profet instances``, ``predict`` and ``--offerings``, the app, ``sky-plan``)."""
    from ._filter import choose_lines
    from ._snapshot import load_offerings

    table = load_offerings() if offerings is None else offerings
    kept = _CHECKED.get(id(table))
    if kept is not None and kept[0] is table:
        return kept[1]
    lines = choose_lines(table, OfferingFilter(spot=None))
    out = lines.loc[lines["price_check"] != "", ["cloud", "instance", "region", "price_check"]]
    out = out.reset_index(drop=True)
    if len(_CHECKED) > 3:
        _CHECKED.clear()
    _CHECKED[id(table)] = (table, out)
    return out


def checked_sentence(offerings: pd.DataFrame | None = None) -> str:
    """The price source's count of instance types with a price to check, in one clause."""
    n = len(prices_to_check(offerings))
    return (
        f"{n} instance type(s) of the price source have a catalog price to check (swapped "
        "prices, spot not below on-demand, or far below other regions; profet instances lists "
        "them with their price_check)"
    )


def price_check_note(out: pd.DataFrame, offerings: pd.DataFrame | None = None) -> str:
    """One note naming the offerings whose catalog price needs a word (``price_check``: a
    swapped pair, spot not below on-demand, far below the type's other regions), the picks
    among them first, after the price source's count of such instance types (``offerings``:
    the snapshot; the same count in every view); ``""`` where none is shown. Their ``note``
    column says why, each in full."""
    if "price_check" not in out or out.empty:
        return ""
    check = out["price_check"].fillna("").astype(str).to_numpy(dtype=object)
    hit = np.flatnonzero(check != "")
    if not len(hit):
        return ""
    picks = out["pick"].fillna("").astype(str).to_numpy() if "pick" in out else None
    if picks is not None:
        hit = sorted(hit, key=lambda i: picks[i] == "")
    cols = [c for c in ("cloud", "instance", "region", "market") if c in out]
    seen, named = set(), []
    for i in hit:
        what = " ".join(str(out[c].iat[i]) for c in cols)
        if what in seen:
            continue
        seen.add(what)
        pick = f" [{picks[i]}]" if picks is not None and picks[i] else ""
        named.append(f"{what}{pick} ({check[i]})")
    shown = "; ".join(named[:NAMED])
    more = f"; and {len(named) - NAMED} more here" if len(named) > NAMED else ""
    return f"{checked_sentence(offerings)}; here: {shown}{more} (the note column says why)"
