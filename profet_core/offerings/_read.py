"""Read SkyPilot catalog folders (``<cloud>/vms.csv``, as in ``~/.sky/catalogs/v8``) into one
row per GPU instance type, region and zone, columns read by name; GCP's prices composed.

Rows that would rank wrongly are reported, not silently kept or dropped (:func:`odd_rows`):
duplicates, fractional GPUs, GPU counts an instance cannot have, retired series, spot prices
above on-demand (the spot price is dropped, never replaced by the on-demand one) and rows with
no price at all.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ProfetFileNotFoundError, ProfetValueError
from ._gpus import (
    GCP_BUILT_IN,
    GCP_HOST_CPUS,
    GCP_HOST_MEMORY_PER_CPU,
    NOT_GPUS,
    RETIRED,
    count_in_name,
)
from ._vms import REPORT_COLUMNS, read_vms

ROW_COLUMNS = ("cloud", "instance", "accelerator", "gpus", "vcpus", "memory_gib", "region")
ROW_COLUMNS = (*ROW_COLUMNS, "zone", "price", "spot")
#: Largest SOURCE.md read (the catalog copy's is a few hundred bytes).
MAX_SOURCE_BYTES = 2**20
#: A spot price this much above on-demand is odd (rounding to 4 decimals is not).
SPOT_TOLERANCE = 1e-4


def catalog_files(folder) -> dict[str, Path]:
    """``{cloud: vms.csv}`` of a catalog folder.

    Parameters
    ----------
    folder : path-like
        A folder of ``<cloud>/vms.csv`` (a schema folder such as ``~/.sky/catalogs/v8``, or
        the shared copy), or a folder holding ``v8``/``v7`` schema folders (the newest is read).

    Raises
    ------
    ProfetFileNotFoundError
        No ``<cloud>/vms.csv`` is found.
    """
    folder = Path(folder)
    if not folder.is_dir():
        if folder.exists():
            raise ProfetValueError(
                f"catalog folder {str(folder)[:200]!r} is not a folder; pass a SkyPilot catalog "
                "folder of <cloud>/vms.csv such as ~/.sky/catalogs/v8"
            )
        raise ProfetFileNotFoundError(f"catalog folder {str(folder)[:200]!r} does not exist")
    found = {p.parent.name: p for p in sorted(folder.glob("*/vms.csv"))}
    if not found:
        for schema in ("v8", "v7"):
            if (folder / schema).is_dir():
                return catalog_files(folder / schema)
        raise ProfetFileNotFoundError(
            f"no <cloud>/vms.csv in {str(folder)!r}; pass a SkyPilot catalog folder such as "
            "~/.sky/catalogs/v8"
        )
    return found


def gpu_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows whose accelerator is a GPU (not a TPU, Inferentia, Trainium, FPGA or Gaudi)."""
    acc = df["accelerator"]
    keep = acc.notna() & (acc.str.strip() != "") & ~acc.fillna("").str.contains(NOT_GPUS)
    return df[keep]


def compose_gcp(df: pd.DataFrame) -> tuple[pd.DataFrame, list[dict]]:
    """GCP's full prices: a GPU machine type (a2, a3, a4, g2) plus its GPU row of the same zone;
    an attachable GPU (T4, V100, P100, P4) plus the cheapest N1 host with SkyPilot's vCPUs and
    at least 4x as many GiB. Both prices are summed per zone before any minimum is taken.

    Returns
    -------
    rows : pandas.DataFrame
        :data:`ROW_COLUMNS`, one per composed instance and zone.
    skipped : list of dict
        Machine-type rows with no GPU row in their zone, GPU rows listed twice for one zone
        or with a fractional count (reported).
    """
    gpus = gpu_rows(df[df["instance"].isna()])
    gpus = gpus[gpus["gpus"].notna()]
    key = ["accelerator", "gpus", "zone"]
    skipped = _odd_gpus(gpus, key)
    gpus = gpus[~gpus.duplicated(key) & (gpus["gpus"] == gpus["gpus"].round())]
    gpu_price = {(a, n, z): (p, sp) for a, n, z, p, sp in gpus[[*key, "price", "spot"]].to_numpy()}
    out = []
    machines = df[df["instance"].isin(list(GCP_BUILT_IN))]
    for m in machines.itertuples(index=False):
        acc, n = GCP_BUILT_IN[m.instance]
        k = (acc, float(n), m.zone)
        if k not in gpu_price:
            skipped.append(_odd(m, "no GPU row", f"no {acc}:{n} row in zone {m.zone}"))
            continue
        price, spot = gpu_price[k]
        out.append(_composed(m, m.instance, acc, n, m.price + price, m.spot + spot))
    attach = gpus[~gpus["accelerator"].isin({a for a, _ in GCP_BUILT_IN.values()})]
    cpus = [
        GCP_HOST_CPUS.get(a, GCP_HOST_CPUS["DEFAULT"]).get(int(n))
        for a, n in zip(attach["accelerator"], attach["gpus"], strict=True)
    ]
    attach = attach.assign(cpus=pd.array(cpus, dtype="Int64"))
    cheapest = _cheapest_hosts(df, attach)
    zones = set(df.loc[df["instance"].fillna("").str.startswith("n1-"), "zone"])
    for g in attach.itertuples(index=False):
        if pd.isna(g.cpus) or g.zone not in zones:
            skipped.append(_odd(g, "no host", f"no N1 host for {g.accelerator}:{g.gpus:g}"))
            continue
        host = cheapest.get((g.zone, g.cpus))
        if host is None:
            skipped.append(_odd(g, "no host", f"no N1 host with {g.cpus} vCPUs in {g.zone}"))
            continue
        name = f"{host['instance']}+{g.accelerator}x{int(g.gpus)}"
        price, spot = host["price"] + g.price, host["spot"] + g.spot
        out.append(_composed(host, name, g.accelerator, int(g.gpus), price, spot, g.zone))
    rows = pd.DataFrame(out, columns=list(ROW_COLUMNS))
    return rows, skipped


def _cheapest_hosts(df: pd.DataFrame, attach: pd.DataFrame) -> dict:
    """``{(zone, vCPUs): host row}``: the cheapest N1 host of each zone with at least that many
    vCPUs and 4 GiB per vCPU, found for every pair at once (one merge, linear in the rows;
    one filter per GPU row took minutes on a 200,000-row file)."""
    hosts = df[df["instance"].fillna("").str.startswith("n1-")].dropna(subset=["price"])
    need = attach[["zone", "cpus"]].dropna().drop_duplicates()
    both = need.merge(hosts, on="zone")
    both = both[
        (both["vcpus"] >= both["cpus"])
        & (both["memory_gib"] >= GCP_HOST_MEMORY_PER_CPU * both["cpus"])
    ]
    both = both.sort_values("price", kind="stable").drop_duplicates(["zone", "cpus"])
    return {(r["zone"], r["cpus"]): r for _, r in both.iterrows()}


def _odd_gpus(gpus: pd.DataFrame, key: list) -> list[dict]:
    """GCP GPU rows that cannot be priced: a second row for one GPU, count and zone (the first
    is kept), or a fractional count (a T4 x1.5 is no attachable configuration)."""
    dup = gpus[gpus.duplicated(key)]
    part = gpus[gpus["gpus"] != gpus["gpus"].round()]
    return [
        _odd(r, "duplicate", f"a second {r.accelerator}:{r.gpus:g} row in zone {r.zone}")
        for r in dup.itertuples(index=False)
    ] + [
        _odd(r, "fractional GPUs", f"{r.gpus:g} GPUs cannot be attached")
        for r in part.itertuples(index=False)
    ]


def _composed(host, name, acc, n, price, spot, zone=None) -> dict:
    get = host.get if isinstance(host, pd.Series) else lambda k: getattr(host, k)
    return {
        "cloud": "gcp",
        "instance": name,
        "accelerator": acc,
        "gpus": float(n),
        "vcpus": get("vcpus"),
        "memory_gib": get("memory_gib"),
        "region": get("region"),
        "zone": zone or get("zone"),
        "price": round(float(price), 6),
        "spot": round(float(spot), 6) if pd.notna(spot) else np.nan,
    }


def _odd(row, kind: str, detail: str) -> dict:
    get = row.get if isinstance(row, (pd.Series, dict)) else lambda k: getattr(row, k)
    return {
        "cloud": get("cloud"),
        "instance": get("instance") if isinstance(get("instance"), str) else "",
        "region": get("region"),
        "zone": get("zone"),
        "accelerator": get("accelerator"),
        "kind": kind,
        "detail": detail,
    }


def _impossible_count(row) -> str | None:
    n = row.gpus
    named = count_in_name(row.cloud, row.instance)
    if named is not None and named != n:
        return f"{n:g} GPUs where the name says {named}"
    if n not in (1, 2, 4, 8, 16):
        return f"{n:g} GPUs: no instance of this kind has that many"
    return None


def odd_rows(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Separate the rows that would rank wrongly.

    Returns
    -------
    kept : pandas.DataFrame
        Rows to offer; a spot price above on-demand is removed (NaN) from its row.
    report : pandas.DataFrame
        ``cloud, instance, region, zone, accelerator, kind, detail``, one line per odd row.
    """
    report = []
    dup = rows.duplicated(["cloud", "instance", "region", "zone"])
    for r in rows[dup].itertuples(index=False):
        report.append(_odd(r, "duplicate", "the same instance and zone listed again"))
    rows = rows[~dup]
    drop = np.zeros(len(rows), dtype=bool)
    for i, r in enumerate(rows.itertuples(index=False)):
        why = None
        if (r.cloud, r.accelerator) in RETIRED:
            why = ("retired series", RETIRED[(r.cloud, r.accelerator)])
        elif not np.isfinite(r.gpus) or r.gpus <= 0:  # NaN, inf, 0 or negative: no count
            why = ("impossible GPU count", f"{r.gpus:g} GPUs: not a count of GPUs")
        elif r.gpus != int(r.gpus):
            why = ("fractional GPUs", f"{r.gpus:g} of a GPU (a slice, not a whole GPU)")
        elif _impossible_count(r):
            why = ("impossible GPU count", _impossible_count(r))
        elif not (r.price > 0) and not (r.spot > 0):
            why = ("no price", "neither an on-demand nor a spot price")
        if why:
            drop[i] = True
            report.append(_odd(r, *why))
    rows = rows[~drop].copy()
    high = rows["spot"] > rows["price"] * (1 + SPOT_TOLERANCE)
    for r in rows[high].itertuples(index=False):
        report.append(
            _odd(
                r, "spot above on-demand", f"spot {r.spot:g} > on-demand {r.price:g}: spot left out"
            )
        )
    rows.loc[high, "spot"] = np.nan
    rows.loc[~(rows["price"] > 0), "price"] = np.nan
    rows.loc[~(rows["spot"] > 0), "spot"] = np.nan
    cols = ["cloud", "instance", "region", "zone", "accelerator", "kind", "detail"]
    return rows.reset_index(drop=True), pd.DataFrame(report, columns=cols)


def read_catalog(folder) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every GPU row of a SkyPilot catalog folder, one per instance type, region and zone.

    Parameters
    ----------
    folder : path-like
        See :func:`catalog_files`.

    Returns
    -------
    rows : pandas.DataFrame
        :data:`ROW_COLUMNS`: ``gpus`` the GPUs of the instance, ``price``/``spot`` its full
        hourly prices (USD; GCP's composed), NaN where the catalog has none.
    report : pandas.DataFrame
        The odd rows (see :func:`odd_rows`) and GCP rows that could not be composed.
    """
    parts, skipped, read_report = [], [], []
    for cloud, path in catalog_files(folder).items():
        df, bad = read_vms(path, cloud)
        read_report.append(bad)
        if cloud == "gcp":
            rows, bad = compose_gcp(df)
            parts.append(rows)
            skipped += bad
        else:
            parts.append(gpu_rows(df))
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ROW_COLUMNS)
    rows["instance"] = rows["instance"].astype(str).str.strip()
    kept, report = odd_rows(rows)
    parts = [*read_report, report, pd.DataFrame(skipped, columns=REPORT_COLUMNS)]
    report = pd.concat(
        [p for p in parts if len(p)] or [pd.DataFrame(columns=REPORT_COLUMNS)], ignore_index=True
    )
    return kept, report.reindex(columns=REPORT_COLUMNS)


def source_of(path) -> dict:
    """What a cloud folder's ``SOURCE.md`` says of its origin (repository, path, commit, schema);
    without one, the file's own path and modification date."""
    path = Path(path)
    info = {
        "path": str(path),
        "schema": next((p for p in path.parts if re.fullmatch(r"v\d+", p)), ""),
    }
    source = path.parent / "SOURCE.md"
    if source.is_file():
        from .._messages import printable
        from ..inputs._safe_read import read_bounded

        # Bounded and regular files only (a 3 GB file or a FIFO is no SOURCE.md); its lines
        # are the catalog's text, printed later: no control characters.
        text = read_bounded(source, MAX_SOURCE_BYTES, "catalog SOURCE.md").decode(errors="replace")
        for key, label in (("repository", "Repository"), ("path", "Path"), ("commit", "Commit")):
            m = re.search(rf"^- {label}: *(.+)$", text, re.MULTILINE)
            if m:
                value = re.sub(r"[`*]", "", printable(m.group(1))).split(" (")[0].strip()
                info[key] = value[:200]
        m = re.search(r"catalogs/(v\d+)/", info.get("path", ""))
        info["schema"] = m.group(1) if m else info["schema"]
    import datetime as dt

    mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
    info["file_date"] = mtime.date().isoformat()
    return info
