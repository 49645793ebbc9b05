"""Catalog prices that are kept but need a word: a swapped on-demand/spot pair, a spot price not
below on-demand, an on-demand price far below the same type's other regions.

Each check writes a note once, here, into the snapshot's ``price_note`` (the on-demand price)
and ``spot_note`` (the spot price); :func:`~profet_core.offerings._filter.markets` gives each
market row its own, so that every answer an offering reaches (``profet predict --offerings``,
``profet instances``, the library's result, the app's front) carries it, and
:func:`price_check_codes` turns a note into the short words of the ``price_check`` column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: A spot price this much above on-demand is odd (rounding to 4 decimals is not).
SPOT_TOLERANCE = 1e-4
#: An on-demand price under this share of the median of the type's other regions is "far below"
#: (the shared catalog: GCP's H100 rows at 33.6 USD/h in 7 regions against 78-102 elsewhere,
#: ratio 0.45-0.47 composed; the A100 GPU row of europe-west4, 0.55; the next ratios of the
#: composed lines start at 0.66).
FAR_BELOW = 0.6
#: The short words of each check (the start of its note, before the colon).
SWAPPED, NOT_BELOW, FAR = "swapped prices", "spot not below on-demand", "far below other regions"
CODES = (SWAPPED, NOT_BELOW, FAR)


def cat(*parts) -> str:
    """Non-empty notes joined by ``"; "``, each once, in order."""
    seen: list[str] = []
    for p in parts:
        for piece in str(p).split("; ") if isinstance(p, str) and p else ():
            if piece and piece not in seen:
                seen.append(piece)
    return "; ".join(seen)


def swap_pairs(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows whose spot price is above their on-demand price taken as a swapped pair (no cloud
    sells spot capacity above on-demand: AWS caps spot there, GCP and Azure discount it; the
    shared catalog's RunPod L40S rows list Price 0.43 and SpotPrice 0.86): the two prices are
    exchanged and both carry a note saying so.

    Returns
    -------
    rows : pandas.DataFrame
        ``rows`` with ``price``/``spot`` exchanged where swapped and ``price_note``/``spot_note``
        (text, empty where nothing is said).
    swapped : pandas.DataFrame
        The swapped rows as they were (for the report).
    """
    rows = rows.copy()
    for col in ("price_note", "spot_note"):
        if col not in rows:
            rows[col] = ""
    high = (rows["spot"] > rows["price"] * (1 + SPOT_TOLERANCE)).to_numpy()
    before = rows[high].copy()
    if high.any():
        price, spot = rows.loc[high, "price"].to_numpy(), rows.loc[high, "spot"].to_numpy()
        note = [
            f"{SWAPPED}: the catalog lists on-demand {p:g} and spot {s:g} USD/h (spot above "
            f"on-demand); taken as on-demand {s:g}, spot {p:g}"
            for p, s in zip(price, spot, strict=True)
        ]
        rows.loc[high, "price"], rows.loc[high, "spot"] = spot, price
        for col in ("price_note", "spot_note"):
            rows.loc[high, col] = [
                cat(a, b) for a, b in zip(rows.loc[high, col], note, strict=True)
            ]
    return rows, before


def others_median(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per element, the median, least and most of the *other* elements of its group (NaN where
    the group has fewer than two others), in time linear in the elements after one sort.

    Parameters
    ----------
    codes : ndarray of int, shape (n,)
        Group of each element.
    values : ndarray of float, shape (n,)
        No NaN.
    """
    n = len(values)
    out = [np.full(n, np.nan) for _ in range(3)]
    if n == 0:
        return tuple(out)
    order = np.lexsort((values, codes))
    sv, sc = values[order], codes[order]
    start = np.searchsorted(sc, sc, side="left")
    size = np.searchsorted(sc, sc, side="right") - start
    k = np.arange(n) - start
    m = size - 1  # the others
    ok = m >= 2

    def other(j):  # the j-th smallest of the others (j < m)
        j = np.clip(j, 0, np.maximum(m - 1, 0))
        return sv[np.minimum(start + np.where(j < k, j, j + 1), n - 1)]

    med = (other((m - 1) // 2) + other(m // 2)) / 2
    low, high = other(np.zeros(n, dtype=int)), other(m - 1)
    for arr, got in zip(out, (med, low, high), strict=True):
        arr[order] = np.where(ok, got, np.nan)
    return tuple(out)


def far_below(keys: pd.DataFrame, price: pd.Series, what: str = "on-demand") -> pd.Series:
    """Notes for prices under :data:`FAR_BELOW` x the median of the same key's other rows (one
    row per key and region), empty elsewhere."""
    # one code per distinct key, vectorised (a row-wise join took 29 s on 300,000 rows)
    codes = keys.astype(str).groupby(list(keys.columns), sort=False).ngroup() if len(keys) else []
    v = price.to_numpy(dtype=float)
    notes = np.full(len(v), "", dtype=object)
    have = ~np.isnan(v)
    if not have.any():
        return pd.Series(notes, index=price.index)
    med, low, high = others_median(np.asarray(codes)[have], v[have])
    idx = np.flatnonzero(have)
    hit = v[have] < FAR_BELOW * med
    for i, m, lo, hi in zip(idx[hit], med[hit], low[hit], high[hit], strict=True):
        notes[i] = (
            f"{FAR}: {what} {v[i]:.4g} USD/h here is under {FAR_BELOW:.0%} of its other "
            f"regions' (median {m:.4g}, {lo:.4g}-{hi:.4g}): check it before relying on it"
        )
    return pd.Series(notes, index=price.index)


def spot_not_below(out: pd.DataFrame) -> pd.Series:
    """Notes for spot prices at or above on-demand: the line's own, or the type's cheapest
    on-demand of the cloud (``--spot`` would offer the type dearer than on-demand elsewhere)."""
    key = [out["cloud"], out["instance"]]
    od = out["usd_per_hour"]
    cheapest = od.groupby(key).transform("min")
    at = od.fillna(np.inf).groupby(key).transform("idxmin")
    where = out["region"].reindex(at.to_numpy()).to_numpy() if len(out) else np.array([])
    spot = out["spot_usd_per_hour"]
    own = (spot >= od * (1 - SPOT_TOLERANCE)).to_numpy()
    anywhere = (spot >= cheapest * (1 - SPOT_TOLERANCE)).to_numpy()
    notes = np.full(len(out), "", dtype=object)
    s, p, c = spot.to_numpy(), od.to_numpy(), cheapest.to_numpy()
    for i in np.flatnonzero(own | anywhere):
        here = f"{p[i]:.4g} here" if own[i] else ""
        elsewhere = anywhere[i] and where[i] != out["region"].iat[i]
        there = f"the type's cheapest {c[i]:.4g} in {where[i]}" if elsewhere else ""
        notes[i] = (
            f"{NOT_BELOW}: spot {s[i]:.4g} USD/h saves nothing over on-demand ("
            + ", ".join(x for x in (here, there) if x)
            + "); a spot market at on-demand price often has little capacity"
        )
    return pd.Series(notes, index=out.index)


def price_check_codes(notes) -> list[str]:
    """The ``price_check`` words of each note (``""`` where none of the checks speaks)."""
    out = []
    for note in notes:
        text = note if isinstance(note, str) else ""
        got = [c for c in CODES if f"{c}:" in text]
        out.append(", ".join(got))
    return out
