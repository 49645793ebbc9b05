"""The shipped offerings snapshot (``profet_core/data/offerings.csv`` and its metadata): derived
from a SkyPilot catalog folder, loaded once per process, compared with the previous one."""

from __future__ import annotations

import datetime as dt
import functools
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ProfetValueError
from ..inputs._args import frame_arg, path_arg
from ._checks import cat, far_below, spot_not_below
from ._gpus import INSTANCE_NOTES, VARIANT_NOTES, spec_gpu
from ._read import catalog_files, read_accounted, source_of

SNAPSHOT_FILE = "offerings.csv"
META_FILE = "offerings_meta.json"
#: Columns of the snapshot, one line per cloud, instance type and region.
SNAPSHOT_COLUMNS = (
    "cloud",
    "instance",
    "region",
    "gpu",
    "accelerator",
    "gpus",
    "vcpus",
    "memory_gib",
    "usd_per_hour",
    "spot_usd_per_hour",
    "zones",
    "note",
    "price_note",
    "spot_note",
)
#: Columns a snapshot written before the price checks lacks (read as empty: nothing said).
OPTIONAL_COLUMNS = ("price_note", "spot_note")
KEY = ["cloud", "instance", "region"]


def derive_offerings(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per cloud, instance type and region: the minimum over its zones (prices summed
    per zone first, see :func:`~profet_core.offerings._read.compose_gcp`).

    Parameters
    ----------
    rows : pandas.DataFrame
        :func:`~profet_core.offerings._read.read_catalog`'s rows.

    Returns
    -------
    pandas.DataFrame
        :data:`SNAPSHOT_COLUMNS`, sorted by cloud, instance and region. ``gpu`` is the spec
        sheet's GPU (empty: no spec model), ``spot_usd_per_hour`` NaN where the catalog has no
        spot price, ``note`` what differs from the GPU's measured or specified variant,
        ``price_note``/``spot_note`` what the catalog's on-demand/spot price needs said
        (:mod:`._checks`: swapped pairs, spot not below on-demand, far below other regions).
    """
    if rows.empty:
        return pd.DataFrame(columns=SNAPSHOT_COLUMNS)
    rows = rows.copy()
    for col in OPTIONAL_COLUMNS:
        rows[col] = rows[col].fillna("").astype(str) if col in rows else ""
    groups = rows.groupby(KEY, sort=True)
    agg = groups.agg(
        accelerator=("accelerator", "first"),
        gpus=("gpus", "first"),
        vcpus=("vcpus", "first"),
        memory_gib=("memory_gib", "first"),
        usd_per_hour=("price", "min"),
        spot_usd_per_hour=("spot", "min"),
        zones=("zone", "nunique"),
    )
    for col in OPTIONAL_COLUMNS:  # joined in Python only where a zone says something
        said = rows[rows[col] != ""]
        joined = said.groupby(KEY, sort=True)[col].agg(_joined) if len(said) else None
        agg[col] = "" if joined is None else joined.reindex(agg.index).fillna("")
    out = agg.reset_index()
    out["gpus"] = out["gpus"].astype(int)
    out["gpu"] = [
        spec_gpu(c, i, a)
        for c, i, a in zip(out["cloud"], out["instance"], out["accelerator"], strict=True)
    ]
    out["note"] = [
        VARIANT_NOTES.get((c, a), "") for c, a in zip(out["cloud"], out["accelerator"], strict=True)
    ]
    for cloud, pattern, note in INSTANCE_NOTES:
        hit = (out["cloud"] == cloud) & out["instance"].str.fullmatch(pattern)
        out.loc[hit, "note"] = note
    no_od = out["usd_per_hour"].isna()
    out.loc[no_od, "note"] = "no on-demand price in the catalog (spot only)"
    low = far_below(out[["cloud", "instance"]], out["usd_per_hour"])
    spot = spot_not_below(out)
    out["price_note"] = [cat(a, b) for a, b in zip(out["price_note"], low, strict=True)]
    out["spot_note"] = [cat(a, b) for a, b in zip(out["spot_note"], spot, strict=True)]
    return out[list(SNAPSHOT_COLUMNS)]


def _joined(notes: pd.Series) -> str:
    """The notes of a line's zones, each once."""
    return cat(*notes.tolist())


def refresh(folder, previous: pd.DataFrame | None = None) -> dict:
    """Derive the snapshot from a catalog folder, and say what changed (writes nothing: see
    :func:`write_offerings`).

    Parameters
    ----------
    folder : path-like
        A SkyPilot catalog folder (see :func:`~profet_core.offerings._read.catalog_files`).
    previous : pandas.DataFrame, optional
        The snapshot to compare with (default: the shipped one).

    Returns
    -------
    dict
        ``table`` (the snapshot), ``meta`` (sources, dates, counts, ``rows``: every input row
        accounted for per cloud, ``odd_rows`` per kind and ``reported_rows``: each by name,
        :func:`report_groups`), ``report`` (the odd rows, one line each) and ``changes``
        (:func:`compare`).

    Raises
    ------
    ProfetValueError
        ``folder`` is not a path, or ``previous`` not a table.
    """
    folder = path_arg(folder, "the catalog folder")
    if previous is not None:
        frame_arg(previous, "the previous snapshot")
    rows, report, counts = read_accounted(folder)
    table = derive_offerings(rows)
    sources = {cloud: source_of(path) for cloud, path in catalog_files(folder).items()}
    for info in sources.values():
        info.pop("path" if "repository" in info else "", None)
    meta = {
        "source": "SkyPilot's public catalog (GitHub skypilot-org/skypilot-catalog), vms.csv "
        "per cloud; GPU rows only",
        "derived": dt.date.today().isoformat(),
        "clouds": sources,
        "offerings": int(len(table)),
        "rows": counts,
        "odd_rows": {k: int(v) for k, v in report["kind"].value_counts().sort_index().items()},
        "reported_rows": report_groups(report).to_dict(orient="records"),
    }
    prev = load_offerings() if previous is None else previous
    changes = compare(prev, table)
    return {"table": table, "meta": meta, "report": report, "changes": changes}


def report_groups(report: pd.DataFrame) -> pd.DataFrame:
    """The report with one line per cloud, instance, kind and reason: ``where`` names every
    ``region/zone`` (and vms.csv record) it holds, so each row is named, none counted away.

    Returns
    -------
    pandas.DataFrame
        ``cloud, instance, kind, detail, rows, where``.
    """
    cols = ["cloud", "instance", "kind", "detail"]
    if report.empty:
        return pd.DataFrame(columns=[*cols, "rows", "where"])
    r = report.copy()
    r[cols] = r[cols].fillna("").astype(str)
    zone = r["zone"].fillna("").astype(str)
    region = r["region"].fillna("").astype(str)
    place = np.where((zone == region) | (zone == ""), region, region + "/" + zone)
    r["where"] = [
        f"{p or '-'} (line {ln})" if ln else (p or "-")
        for p, ln in zip(place, r["line"].fillna("").astype(str), strict=True)
    ]
    g = r.groupby(cols, sort=False)["where"]
    return pd.concat([g.size().rename("rows"), g.agg(", ".join)], axis=1).reset_index()


def write_offerings(done: dict, folder) -> None:
    """Write :func:`refresh`'s snapshot and metadata (``offerings.csv``,
    ``offerings_meta.json``) into ``folder``, which must be new or empty: a file of the user's
    is never replaced (``profet offerings refresh --out`` writes beside and swaps in, as every
    command that writes does).

    Raises
    ------
    ProfetValueError
        ``folder`` exists and is not an empty folder; nothing was changed.
    """
    if not isinstance(done, dict) or not {"table", "meta"} <= set(done):
        raise ProfetValueError(
            f"write_offerings takes the dict refresh() returns; got {type(done).__name__}"
        )
    folder = path_arg(folder, "the output folder")
    if folder.is_symlink() or (folder.exists() and (not folder.is_dir() or any(folder.iterdir()))):
        raise ProfetValueError(
            f"output folder {str(folder)!r} exists and is not empty; give a new folder "
            "(nothing was changed)"
        )
    if not isinstance(done["table"], pd.DataFrame) or not isinstance(done["meta"], dict):
        raise ProfetValueError("write_offerings takes the dict refresh() returns (table, meta)")
    _write_swapped(done, folder)


def _write_swapped(done: dict, folder) -> None:
    """Write both files into a temporary sibling, then rename it into place: a failure (a
    full disk, a table that cannot be written) never leaves a half-written folder."""
    import os
    import shutil
    import tempfile

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name[:40]}.profet-tmp-", dir=folder.parent))
    try:
        try:
            write_snapshot(done["table"], tmp / SNAPSHOT_FILE)
            text = json.dumps(done["meta"], indent=1, allow_nan=False)
        except (TypeError, ValueError, OSError) as exc:
            raise ProfetValueError(f"the snapshot cannot be written: {str(exc)[:200]}") from None
        (tmp / META_FILE).write_text(text + "\n")
        if folder.is_dir():
            folder.rmdir()  # empty (checked): the rename below takes its place
        os.rename(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_snapshot(table: pd.DataFrame, path) -> None:
    """Write the snapshot CSV (prices as the catalog writes them, at most 6 decimals; text a
    spreadsheet would run as a formula escaped, as every CSV the product writes)."""
    from ..inputs._csv import to_csv

    to_csv(table.round(6), path, index=False, float_format="%.10g", lineterminator="\n")


def compare(old: pd.DataFrame, new: pd.DataFrame) -> dict:
    """What changed between two snapshots: lines added and removed, on-demand and spot prices
    changed (per cloud), as counts and a few examples.

    Raises
    ------
    ProfetValueError
        ``old`` or ``new`` is not a snapshot table (:data:`SNAPSHOT_COLUMNS`'s key and prices).
    """
    for name, table in (("old", old), ("new", new)):
        frame_arg(table, f"the {name} snapshot")
        missing = [c for c in (*KEY, "usd_per_hour", "spot_usd_per_hour") if c not in table]
        if missing:
            raise ProfetValueError(f"the {name} snapshot lacks column(s) {missing}")
    o, n = old.set_index(KEY), new.set_index(KEY)
    added = n.index.difference(o.index)
    removed = o.index.difference(n.index)
    both = n.index.intersection(o.index)
    out = {"added": len(added), "removed": len(removed)}
    for col in ("usd_per_hour", "spot_usd_per_hour"):
        a, b = o.loc[both, col].astype(float), n.loc[both, col].astype(float)
        changed = ~np.isclose(a, b, rtol=1e-6, equal_nan=True)
        out[f"{col}_changed"] = int(changed.sum())
        if changed.any():
            ratio = (b[changed] / a[changed]).replace([np.inf, -np.inf], np.nan).dropna()
            out[f"{col}_median_ratio"] = round(float(ratio.median()), 3) if len(ratio) else None
    out["by_cloud"] = {
        cloud: {
            "added": int((added.get_level_values(0) == cloud).sum()),
            "removed": int((removed.get_level_values(0) == cloud).sum()),
        }
        for cloud in sorted(set(n.index.get_level_values(0)) | set(o.index.get_level_values(0)))
    }
    out["examples_added"] = [" ".join(k) for k in list(added)[:5]]
    out["examples_removed"] = [" ".join(k) for k in list(removed)[:5]]
    return out


def changes_text(changes: dict) -> str:
    """:func:`compare`'s answer in a few lines for people."""
    keys = ("added", "removed", "usd_per_hour_changed", "spot_usd_per_hour_changed", "by_cloud")
    if not isinstance(changes, dict) or any(k not in changes for k in keys):
        raise ProfetValueError(
            f"changes must be the dict compare() returns (keys {', '.join(keys)}); got "
            f"{type(changes).__name__}"
        )
    lines = [
        f"{changes['added']} line(s) added, {changes['removed']} removed; on-demand price "
        f"changed in {changes['usd_per_hour_changed']}, spot in "
        f"{changes['spot_usd_per_hour_changed']}"
    ]
    for key in ("usd_per_hour", "spot_usd_per_hour"):
        if changes.get(f"{key}_median_ratio"):
            lines.append(f"  median new/old {key}: {changes[f'{key}_median_ratio']}")
    for cloud, c in changes["by_cloud"].items():
        if c["added"] or c["removed"]:
            lines.append(f"  {cloud}: +{c['added']} -{c['removed']}")
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def _shipped() -> pd.DataFrame:
    with resources.files("profet_core").joinpath(f"data/{SNAPSHOT_FILE}").open("rb") as fh:
        df = pd.read_csv(fh, dtype={"gpu": str, "note": str, "region": str, "instance": str})
    return _notes_filled(df)


def _notes_filled(df: pd.DataFrame) -> pd.DataFrame:
    """Text notes empty where missing; a snapshot without the price checks' columns gains
    them empty (nothing said)."""
    for col in OPTIONAL_COLUMNS:
        if col not in df.columns:
            df[col] = ""
    cols = ["gpu", "note", *OPTIONAL_COLUMNS]
    df[cols] = df[cols].fillna("").astype(str)
    return df


def load_offerings(path=None) -> pd.DataFrame:
    """The offerings snapshot (a copy): the shipped one, or a CSV written by :func:`refresh`.

    Returns
    -------
    pandas.DataFrame
        :data:`SNAPSHOT_COLUMNS`.
    """
    if path is None:
        return _shipped().copy()
    from ..inputs._csv import read_csv_file

    df = read_csv_file(path_arg(path, "the offerings table"), 64 * 2**20, "offerings table")
    for col in ("gpu", "note", "region", "instance", *OPTIONAL_COLUMNS):
        if col in df.columns:
            df[col] = df[col].where(df[col].isna(), df[col].astype(str))
    missing = [c for c in SNAPSHOT_COLUMNS if c not in df.columns and c not in OPTIONAL_COLUMNS]
    if missing:
        raise ProfetValueError(f"offerings table {str(path)!r} lacks column(s) {missing}")
    return _notes_filled(df)


@functools.lru_cache(maxsize=1)
def offerings_meta() -> dict:
    """The shipped snapshot's metadata: source, commits per cloud, dates, counts."""
    with resources.files("profet_core").joinpath(f"data/{META_FILE}").open("rb") as fh:
        return json.load(fh)


def price_source(meta: dict | None = None) -> str:
    """One line for people: where the prices come from and how old they are."""
    meta = offerings_meta() if meta is None else meta
    clouds = meta.get("clouds") if isinstance(meta, dict) else None
    if not isinstance(clouds, dict) or not all(isinstance(v, dict) for v in clouds.values()):
        raise ProfetValueError(
            f"offerings metadata must be a dict with a 'clouds' dict; got {type(meta).__name__}"
        )
    parts = [
        f"{cloud} {info.get('schema', '')} @{str(info.get('commit', 'unknown'))[:8]}".replace(
            "  ", " "
        )
        for cloud, info in meta["clouds"].items()
    ]
    copied = sorted({str(info.get("file_date", "")) for info in meta["clouds"].values()} - {""})
    when = f"catalog copied {copied[-1]}" if copied else "copy date unknown"
    return (
        f"Prices: SkyPilot's catalog (github.com/skypilot-org/skypilot-catalog; {', '.join(parts)}; "
        f"{when}, snapshot derived {meta.get('derived', 'date unknown')}). The catalog files carry no date: prices "
        "change often, check the cloud's own page before renting."
    )
