"""The one price source of every answer: each GPU configuration a prediction is made for is
priced by the offering that rents it cheapest (the offerings snapshot, or a user's catalog),
never by the spec sheet (which holds specs and their sources only)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..inputs._args import frame_arg
from ._join import USER_REGION
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
    priced = offerings[pd.to_numeric(offerings["usd_per_hour"], errors="coerce").notna()]
    # Cheapest first; ties in a fixed order (cloud, region), as the default listing shows them.
    priced = priced.assign(usd_per_hour=priced["usd_per_hour"].astype(float))
    priced = priced.sort_values(["usd_per_hour", "cloud", "region", "instance"], kind="stable")
    by_name = priced.drop_duplicates("instance").set_index("instance")
    by_gpu = {g: rows for g, rows in priced[priced["gpu"].astype(str) != ""].groupby("gpu")}
    counts = catalog["gpu_count"] if "gpu_count" in catalog else pd.Series(1, index=catalog.index)
    counts = pd.to_numeric(counts, errors="coerce").fillna(1)
    usd, where = [], []
    for inst, gpu, n in zip(catalog["instance"], catalog["gpu"], counts, strict=True):
        hit = by_name.loc[inst] if inst in by_name.index else _by_gpu(by_gpu.get(gpu), n)
        if hit is None:
            usd.append(np.nan)
            where.append("")
            continue
        usd.append(float(hit["usd_per_hour"]))
        where.append(f"{hit['cloud']} {hit.get('instance', inst)} ({hit['region']})")
    return pd.DataFrame(
        {"instance": catalog["instance"].to_numpy(), "usd_per_hour": usd, "offering": where}
    )


def _by_gpu(rows: pd.DataFrame | None, count: float):
    """The cheapest of ``rows`` (one GPU's offerings, cheapest first) with ``count`` GPUs, else
    with the fewest GPUs above it; None where none has enough."""
    if rows is None:
        return None
    gpus = rows["gpus"].astype(float)
    exact = rows[gpus == count]
    if len(exact):
        return exact.iloc[0]
    more = rows[gpus > count]
    if not len(more):
        return None
    return more[more["gpus"].astype(float) == more["gpus"].astype(float).min()].iloc[0]


def with_offering_prices(predictor, offerings: pd.DataFrame | None = None, user=None):
    """``predictor`` with every price taken from ``offerings`` (default: the shipped snapshot)
    and then from the user's catalog ``user`` (validated; its prices win, ``offering`` says
     ``"catalog <instance> (your catalog)"``).

    Returns
    -------
    Predictor
        A predictor sharing the models, whose catalog has ``usd_per_hour`` and ``offering``.
    """
    snap = load_offerings() if offerings is None else offerings
    missing = [c for c in SNAPSHOT_COLUMNS if c not in snap.columns]
    if missing:
        from ..errors import ProfetValueError

        raise ProfetValueError(f"the offerings snapshot lacks column(s) {missing}")
    cat = predictor.catalog.drop(columns=["usd_per_hour", "offering"], errors="ignore")
    prices = configuration_prices(cat, snap)
    cat = cat.assign(
        usd_per_hour=prices["usd_per_hour"].to_numpy(), offering=prices["offering"].to_numpy()
    )
    out = type(predictor)(predictor.bundle, cat, predictor._cache, predictor.catalog_notes)
    if user is None:
        return out
    out = out.with_catalog(user)
    given = set(user.loc[pd.to_numeric(user["usd_per_hour"], errors="coerce").notna(), "instance"])
    cat = out.catalog.copy()
    mine = cat["instance"].isin(given)
    cat.loc[mine, "offering"] = "catalog " + cat.loc[mine, "instance"] + f" {USER_REGION}"
    return type(out)(out.bundle, cat, out._cache, out.catalog_notes)


def load_artifacts(path=None, catalog=None, offerings=None):
    """Load and verify trained artifacts, priced by the offerings (see
    :func:`profet_core.prediction._predictor.load_artifacts` for ``path`` and the errors).

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
    from ..prediction._predictor import load_artifacts as load_models

    if catalog is not None:
        frame_arg(catalog, "the instance catalog")
    if offerings is not None:
        frame_arg(offerings, "the offerings snapshot")
    base = load_models(path)
    user = None if catalog is None else _validated(catalog)
    return with_offering_prices(base, offerings, user)


def _validated(catalog: pd.DataFrame) -> pd.DataFrame:
    from ..inputs._catalog import validate_catalog

    return validate_catalog(catalog, missing_price_ok=True)
