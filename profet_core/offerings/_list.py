"""Listing offerings without a profile (``profet instances``): one line per instance type and
region with both prices, and what predictions for each would rest on."""

from __future__ import annotations

import pandas as pd

from ..errors import ProfetValueError
from ._filter import LISTING_NOTE, LISTING_SPOT_NOTE, SPOT_NOTE, OfferingFilter, why_nothing
from ._gpus import OTHER_HOST
from ._join import NO_SPEC, spec_key_of_gpu
from ._notes import price_check_note
from ._predict import catalog_offerings, extended
from ._snapshot import OPTIONAL_COLUMNS, SNAPSHOT_COLUMNS, load_offerings, price_source


def basis_of(predictor, gpu: pd.Series, instance: pd.Series) -> list[str]:
    """What a prediction for each offering would rest on, whatever the anchor: ``measured``
    (``measured on <instance>`` where another host rents the measured GPU), the cross-instance
    model's basis, or ``no spec model``."""
    key = spec_key_of_gpu()
    wide = extended(predictor)
    cross = wide.cross
    known = {}
    for g in set(gpu):
        k = key.get(g)
        if not k:
            known[g] = NO_SPEC
        elif k in wide.instances:
            known[g] = "measured"
        elif cross is not None and k in cross.spec_index_:
            known[g] = cross.basis(k)
        else:
            known[g] = "not predicted by these artifacts"
    return [
        f"measured on {key[g]}" if known[g] == "measured" and key[g] != i else known[g]
        for g, i in zip(gpu, instance, strict=True)
    ]


def list_offerings(predictor, filter: OfferingFilter | None = None, catalog=None, offerings=None):
    """The offerings a filter keeps, one line per instance type and region (both prices).

    Parameters
    ----------
    predictor : Predictor
        For each line's ``basis`` (what its predictions rest on).
    filter : OfferingFilter, optional
        Default: both markets, every cloud, each type once per cloud at its cheapest region.
    catalog : pandas.DataFrame, optional
        A user's price catalog, merged in as offerings of cloud ``catalog``.
    offerings : pandas.DataFrame, optional
        A snapshot (default: the shipped one).

    Returns
    -------
    table : pandas.DataFrame
        ``cloud, instance, region, regions_at_price, gpu, accelerator, gpus, vcpus,
        memory_gib, usd_per_hour, spot_usd_per_hour, spot_region, spot_regions_at_price, basis,
        price_check, note``
        (``gpu`` empty: no spec model; ``region`` the on-demand price's, ``spot_region`` the
        spot price's: in the default view each the type's cheapest, which may differ;
        ``regions_at_price`` how many regions share the cheapest on-demand price;
        ``price_check`` the catalog-price checks that speak, their words in ``note``).
    notes : tuple of str
        The prices' source and date, the region view, spot, why a GPU on another kind of
        host is not predicted, prices to check.
    """
    from ._filter import check_offering_args, choose_lines

    check_offering_args(predictor, filter, catalog, offerings)
    f = OfferingFilter(spot=None) if filter is None else filter
    table = load_offerings() if offerings is None else offerings
    if catalog is not None:
        table = pd.concat([table, catalog_offerings(catalog, predictor)], ignore_index=True)
    lines = choose_lines(table, f)
    if lines.empty:  # which filter leaves nothing, and what there is
        raise ProfetValueError(why_nothing(table, f))
    lines["basis"] = basis_of(predictor, lines["gpu"], lines["instance"])
    # The snapshot's columns (zones and the market notes aside: merged into the note), each
    # price beside its region, the basis and the price checks before the note.
    cols = [c for c in SNAPSHOT_COLUMNS if c not in ("zones", "note", *OPTIONAL_COLUMNS)]
    cols.insert(cols.index("region") + 1, "regions_at_price")
    cols.insert(cols.index("spot_usd_per_hour") + 1, "spot_region")
    cols.insert(cols.index("spot_region") + 1, "spot_regions_at_price")
    cols += ["basis", "price_check", "note"]
    notes = [price_source()]
    if not (f.all_regions or f.regions):
        notes.append(LISTING_SPOT_NOTE if f.spot else LISTING_NOTE)
    if lines["spot_usd_per_hour"].notna().any():
        notes.append(f"spot prices: {SPOT_NOTE}")
    other = sorted(set(lines["accelerator"]) & set(OTHER_HOST))  # why a modelled GPU is not
    notes.extend(f"{a}: {OTHER_HOST[a]}" for a in other)  # predicted there (an Arm host)
    checked = price_check_note(lines, None if offerings is None else offerings)
    if checked:
        notes.append(checked)
    return lines[cols], tuple(notes)
