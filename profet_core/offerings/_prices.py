"""The one price source of every answer: each GPU configuration a prediction is made for is
priced by the offering that rents it cheapest (the offerings snapshot, or a user's catalog),
never by the spec sheet (which holds specs and their sources only)."""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import pandas as pd

from ..inputs._args import frame_arg
from ..prediction._configs import Rentals
from ._join import USER_REGION, catalog_offerings
from ._snapshot import SNAPSHOT_COLUMNS, load_offerings


def configuration_prices(catalog: pd.DataFrame, offerings: pd.DataFrame) -> pd.DataFrame:
    """The cheapest on-demand offering of each GPU configuration of ``catalog``.

    Parameters
    ----------
    catalog : pandas.DataFrame
        ``instance`` (a measured instance or a spec line), ``gpu`` (the spec sheet's GPU name)
        and optionally ``gpu_count`` (GPUs of the configuration; 1 where absent).
    offerings : pandas.DataFrame
        An offerings snapshot (:data:`~profet_core.offerings.SNAPSHOT_COLUMNS`).

    Returns
    -------
    pandas.DataFrame
        ``instance, usd_per_hour, offering`` in ``catalog``'s order. An instance type the
        snapshot lists (``p5.48xlarge``) takes its own cheapest on-demand line (so it has one
        price wherever it appears); another line (``gpu-b200``) the cheapest on-demand offering
        of its GPU with exactly its GPU count, else the fewest GPUs above it. ``offering`` is
        ``"<cloud> <instance type> (<region>)"``; NaN and ``""`` where nothing rents it.
    """
    frame_arg(catalog, "the instance catalog")
    frame_arg(offerings, "the offerings snapshot")
    return _priced(catalog, _index(offerings))


def _priced(catalog: pd.DataFrame, index: tuple) -> pd.DataFrame:
    """:func:`configuration_prices` through a snapshot's :func:`_index`."""
    by_name, by_config = index
    counts = catalog["gpu_count"] if "gpu_count" in catalog else pd.Series(1, index=catalog.index)
    counts = pd.to_numeric(counts, errors="coerce").fillna(1).tolist()
    usd, where = [], []
    for inst, gpu, n in zip(catalog["instance"], catalog["gpu"], counts, strict=True):
        hit = by_name.get(inst)
        if hit is None:  # exactly n GPUs, else the fewest above n
            more = sorted(c for g, c in by_config if g == gpu and c >= n)
            hit = by_config[(gpu, more[0])] if more else None
        usd.append(np.nan if hit is None else hit[0])
        where.append("" if hit is None else f"{hit[1]} {hit[2]} ({hit[3]})")
    return pd.DataFrame(
        {"instance": catalog["instance"].to_numpy(), "usd_per_hour": usd, "offering": where}
    )


def _index(offerings: pd.DataFrame) -> tuple:
    """``({instance type: cheapest}, {(GPU, count): cheapest})`` of a snapshot's on-demand
    lines, each ``(USD/h, cloud, instance, region)``; ties in a fixed order (cloud, region),
    as the default listing breaks them."""
    price = pd.to_numeric(offerings["usd_per_hour"], errors="coerce")
    priced = offerings.assign(usd_per_hour=price)[price.notna()]
    priced = priced.sort_values(["usd_per_hour", "cloud", "region", "instance"], kind="stable")
    cols = ["usd_per_hour", "cloud", "instance", "region"]
    first = priced.drop_duplicates("instance")
    by_name = dict(
        zip(first["instance"], first[cols].itertuples(index=False, name=None), strict=True)
    )
    spec = priced[priced["gpu"].fillna("").astype(str) != ""]
    first = spec.drop_duplicates(["gpu", "gpus"])
    keys = zip(first["gpu"], first["gpus"].astype(float), strict=True)
    by_config = dict(zip(keys, first[cols].itertuples(index=False, name=None), strict=True))
    return by_name, by_config


@functools.lru_cache(maxsize=1)
def _shipped_index() -> tuple:
    """:func:`_index` of the shipped snapshot, built once a process."""
    return _index(load_offerings())


def rentals(offerings: pd.DataFrame, extra: pd.DataFrame | None = None) -> Rentals:
    """What ``offerings`` (and a user's catalog as offerings, ``extra``) rent on demand, as
    the offerings view chooses them (each instance type at its cheapest region), cheapest
    first: the price source of a predictor's GPU configurations
    (:mod:`profet_core.prediction._configs`)."""
    from ._notes import checked_sentence

    return Rentals(
        functools.partial(_rented, offerings, extra),
        functools.partial(checked_sentence, offerings),
    )


def _rented(offerings: pd.DataFrame, extra: pd.DataFrame | None) -> pd.DataFrame:
    """The table of :func:`rentals`."""
    from ._filter import OfferingFilter, choose
    from ._join import spec_key_of_gpu

    table = offerings if extra is None else pd.concat([offerings, extra], ignore_index=True)
    rows = choose(table, OfferingFilter())
    key = spec_key_of_gpu()
    target = np.array([key.get(g, "") for g in rows["gpu"].tolist()], dtype=object)
    # A user's line names the instance it prices (cloud "catalog", as predict_offerings names it)
    mine = (rows["cloud"] == "catalog").to_numpy() if extra is not None else None
    if mine is not None and mine.any():
        target[mine] = rows.loc[mine, "instance"].to_numpy(dtype=object)
    usd = pd.to_numeric(rows["price_usd_per_hour"], errors="coerce").to_numpy(float)
    region = rows["region"].where(rows["region"] == USER_REGION, "(" + rows["region"] + ")")
    where = rows["cloud"] + " " + rows["instance"] + " " + region
    frame = pd.DataFrame(
        {
            "target": target,
            "gpus": pd.to_numeric(rows["gpus"], errors="coerce").fillna(1).astype(int),
            "usd_per_hour": usd,
            "offering": where.to_numpy(dtype=object),
            "instance": rows["instance"].to_numpy(dtype=object),
            # what the offering's price needs said, as every view of it says it
            "price_check": rows["price_check"].fillna("").to_numpy(dtype=object),
            "regions_at_price": rows["regions_at_price"].to_numpy(dtype=float),
            "note": rows["note"].fillna("").astype(str).to_numpy(dtype=object),
        }
    )
    frame = frame[(target != "") & np.isfinite(usd)]
    return frame.sort_values("usd_per_hour", kind="stable").reset_index(drop=True)


@functools.lru_cache(maxsize=1)
def _shipped_rentals() -> Rentals:
    """:func:`rentals` of the shipped snapshot, its table built once a process on first use."""
    from ._notes import checked_sentence

    return Rentals(lambda: _rented(load_offerings(), None), lambda: checked_sentence(None))


def with_offering_prices(predictor, offerings: pd.DataFrame | None = None, user=None):
    """``predictor`` with every price taken from ``offerings`` (default: the shipped snapshot)
    and then from the user's catalog ``user`` (validated; its prices win, ``offering`` says
     ``"catalog <instance> (your catalog)"``).

    Returns
    -------
    Predictor
        A predictor sharing the models, whose catalog has ``usd_per_hour`` and ``offering``.
    """
    if offerings is None:
        index = _shipped_index()
    else:
        missing = [c for c in SNAPSHOT_COLUMNS if c not in offerings.columns]
        if missing:
            from ..errors import ProfetValueError

            raise ProfetValueError(f"the offerings snapshot lacks column(s) {missing}")
        index = _index(offerings)
    cat = _spec_names(predictor.catalog.drop(columns=["usd_per_hour", "offering"], errors="ignore"))
    prices = _priced(cat, index)
    cat = cat.assign(
        usd_per_hour=prices["usd_per_hour"].to_numpy(), offering=prices["offering"].to_numpy()
    )
    out = predictor.repriced(cat)
    if user is None:
        rented = _shipped_rentals() if offerings is None else rentals(offerings)
        return replace(out, rentals=rented)
    out = out.with_catalog(user)
    given = set(user.loc[pd.to_numeric(user["usd_per_hour"], errors="coerce").notna(), "instance"])
    cat = out.catalog.copy()
    mine = cat["instance"].isin(given)
    cat.loc[mine, "offering"] = "catalog " + cat.loc[mine, "instance"] + f" {USER_REGION}"
    out = type(out)(out.bundle, cat, out._cache, out.catalog_notes)
    # The user's lines join the offerings (cloud "catalog"), as predict_offerings joins them.
    mine = catalog_offerings(user, out)
    return replace(out, rentals=rentals(load_offerings() if offerings is None else offerings, mine))


def _spec_names(catalog: pd.DataFrame) -> pd.DataFrame:
    """``catalog`` with each instance's GPU named as the spec sheet names it (``p3.2xlarge``:
    "NVIDIA V100 SXM2 16GB", not the training catalog's "NVIDIA V100"): one name per GPU
    part in every view (the offerings, the configurations, the instance lists)."""
    from ._join import shipped_specs

    names = dict(zip(shipped_specs()["instance"], shipped_specs()["gpu"], strict=True))
    named = catalog["instance"].map(names)
    if not named.notna().any():
        return catalog
    return catalog.assign(gpu=named.fillna(catalog["gpu"]).to_numpy())


def _every_shipped_line(predictor):
    """``predictor`` knowing every spec line of the shipped sheet where its cross-instance model
    was trained on that sheet (a line added after training, the PCIe V100, is predicted from its
    specs like the others: one name per GPU part); models trained on another sheet as they are."""
    from ._join import shipped_specs
    from ._predict import extended

    cross = predictor.cross
    if cross is None or not set(cross.spec_index_) <= set(shipped_specs()["instance"]):
        return predictor
    return extended(predictor)


def load_artifacts(path=None, catalog=None, offerings=None):
    """Load and verify trained artifacts, priced by the offerings (see
    :func:`profet_core.prediction._load.load_models` for ``path`` and the errors).

    Parameters
    ----------
    path : path-like, optional
        Artifacts folder; default: ``$PROFET_ARTIFACTS`` or the project's ``artifacts/``.
    catalog : pandas.DataFrame, optional
        A user's price catalog (``instance, gpu, usd_per_hour``): its prices replace the
        offerings' for the instances it names (``offering``: ``catalog <instance> (your
        catalog)``, as the offerings view names it); an empty
        price keeps the offering's. Lines no prediction uses, or without a price, are named in
        :attr:`Predictor.catalog_notes` and in every prediction's warnings.
    offerings : pandas.DataFrame, optional
        The offerings snapshot to price from (default: the shipped one; a newer catalog
        folder's: ``refresh_offerings("~/.sky/catalogs/v8")["table"]``; pass the same to
        :func:`predict_offerings` so that both views price alike).

    Returns
    -------
    Predictor
        Its catalog's ``usd_per_hour`` is each GPU configuration's cheapest on-demand offering
        (:func:`configuration_prices`), named in ``offering``.
    """
    from ..prediction._load import load_models

    if catalog is not None:
        frame_arg(catalog, "the instance catalog")
    if offerings is not None:
        frame_arg(offerings, "the offerings snapshot")
    base = _every_shipped_line(load_models(path))
    user = None if catalog is None else _validated(catalog)
    return with_offering_prices(base, offerings, user)


def _validated(catalog: pd.DataFrame) -> pd.DataFrame:
    from ..inputs._catalog import validate_catalog

    return validate_catalog(catalog, missing_price_ok=True)
