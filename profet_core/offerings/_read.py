"""Read SkyPilot catalog folders (``<cloud>/vms.csv``, as in ``~/.sky/catalogs/v8``) into one
row per GPU instance type, region and zone, columns read by name; GCP's prices composed.

Rows that would rank wrongly are reported, not silently kept or dropped (:func:`odd_rows`):
duplicates, fractional GPUs, GPU counts an instance cannot have, retired series, rows with no
price at all, accelerators that are not GPUs, GCP GPU machine types SkyPilot does not map and GPU
rows no machine type uses; a spot price above on-demand is taken as a swapped pair, exchanged
and noted (:mod:`._checks`). Every row of the input is accounted for (:func:`account`): priced,
reported by name, a GCP N1 host, or a row without an accelerator.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ProfetFileNotFoundError, ProfetValueError
from ._account import GCP_GPU_FAMILY, account, line_text
from ._checks import far_below, swap_pairs
from ._gpus import (
    GCP_BUILT_IN,
    GCP_HOST_CPUS,
    GCP_HOST_MEMORY_PER_CPU,
    NOT_GPUS,
    RETIRED,
    count_in_name,
    spec_sheet_counts,
)
from ._vms import REPORT_COLUMNS, check_catalog_file, read_vms

ROW_COLUMNS = ("cloud", "instance", "accelerator", "gpus", "vcpus", "memory_gib", "region")
#: ``lines``: the vms.csv records a row is made of (a composed GCP row: machine or host, GPU).
ROW_COLUMNS = (*ROW_COLUMNS, "zone", "price", "spot", "price_note", "spot_note", "lines")
#: Largest SOURCE.md read (the catalog copy's is a few hundred bytes).
MAX_SOURCE_BYTES = 2**20


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
    for cloud, path in found.items():
        check_catalog_file(folder, path, cloud)
    return found


def gpu_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows whose accelerator is a GPU (not a TPU, Inferentia, Trainium, FPGA or Gaudi)."""
    acc = df["accelerator"]
    keep = acc.notna() & (acc.str.strip() != "") & ~acc.fillna("").str.contains(NOT_GPUS)
    return df[keep]


def not_gpus(df: pd.DataFrame) -> list[dict]:
    """Report lines for rows whose accelerator is not a GPU (TPU, Inferentia, Gaudi...)."""
    acc = df["accelerator"].fillna("")
    hit = df[acc.str.contains(NOT_GPUS)]
    return [
        _odd(r, "not a GPU", f"accelerator {r.accelerator} is not a GPU: not an offering")
        for r in hit.itertuples(index=False)
    ]


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
    gpus = gpus.assign(price_note=_gpu_row_notes(gpus))
    cols = [*key, "price", "spot", "price_note", "line"]
    gpu_price = {(a, n, z): (p, sp, nt, ln) for a, n, z, p, sp, nt, ln in gpus[cols].to_numpy()}
    out, used = [], set()
    machines = df[df["instance"].isin(list(GCP_BUILT_IN))]
    for m in machines.itertuples(index=False):
        acc, n = GCP_BUILT_IN[m.instance]
        k = (acc, float(n), m.zone)
        if k not in gpu_price:
            skipped.append(_odd(m, "no GPU row", f"no {acc}:{n} row in zone {m.zone}"))
            continue
        price, spot, note, line = gpu_price[k]
        used.add(k)
        row = _composed(m, m.instance, acc, n, m.price + price, m.spot + spot)
        out.append({**row, "price_note": note, "lines": (m.line, line)})
    skipped += _unmapped(df, gpus, used)
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
        row = _composed(host, name, g.accelerator, int(g.gpus), price, spot, g.zone)
        out.append({**row, "price_note": g.price_note, "lines": (host["line"], g.line)})
    rows = pd.DataFrame(out, columns=list(ROW_COLUMNS))
    rows["spot_note"] = ""
    return rows, skipped


def _gpu_row_notes(gpus: pd.DataFrame) -> pd.Series:
    """GCP GPU rows whose on-demand price is far below the same GPU and count's other regions
    (compared per region at its cheapest zone): a note every composed offering of theirs keeps
    (the europe-west4 A100 row at half of me-west1's decides "cheapest region" otherwise)."""
    if gpus.empty:
        return pd.Series([], dtype=object, index=gpus.index)
    k = ["accelerator", "gpus", "region"]
    per_region = gpus.groupby(k, sort=False)["price"].min().reset_index()
    notes = far_below(per_region[["accelerator", "gpus"]], per_region["price"], "its GPU row's")
    label = [
        f"{a}:{n:g} " for a, n in zip(per_region["accelerator"], per_region["gpus"], strict=True)
    ]
    notes = [
        nt.replace("its GPU row's", f"its {lb}GPU row's") if nt else ""
        for nt, lb in zip(notes, label, strict=True)
    ]
    per_region["note"] = notes
    merged = gpus[k].merge(per_region[[*k, "note"]], on=k, how="left")
    return pd.Series(merged["note"].fillna("").to_numpy(), index=gpus.index)


def _unmapped(df: pd.DataFrame, gpus: pd.DataFrame, used: set) -> list[dict]:
    """GCP rows no offering is made of: a GPU machine type SkyPilot does not map to a GPU
    (a3-edgegpu-8g, the -nolssd variants), and a built-in GPU's row (A100, H100...) in a zone
    without its machine type."""
    name = df["instance"].fillna("")
    odd = df[name.str.match(GCP_GPU_FAMILY) & ~name.isin(list(GCP_BUILT_IN))]
    out = [
        _odd(
            r,
            "unmapped GPU machine type",
            "SkyPilot maps no GPU to this machine type "
            "(gcp_catalog's accelerator table): not an offering",
        )
        for r in odd.itertuples(index=False)
    ]
    built_in = {a for a, _ in GCP_BUILT_IN.values()}
    rows = gpus[gpus["accelerator"].isin(built_in)]
    for r in rows.itertuples(index=False):
        if (r.accelerator, r.gpus, r.zone) not in used:
            out.append(
                _odd(
                    r,
                    "no machine type",
                    f"no machine type of {r.accelerator}:{r.gpus:g} "
                    f"in zone {r.zone}: its price makes no offering",
                )
            )
    return out


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
        "price_note": "",
        "spot_note": "",
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
        "line": line_text(get("lines") if "lines" in _fields(row) else get("line")),
    }


def _fields(row) -> tuple:
    return tuple(row.keys()) if isinstance(row, (pd.Series, dict)) else row._fields


def _impossible_count(row) -> str | None:
    n = row.gpus
    named = count_in_name(row.cloud, row.instance)
    if named is not None and named != n:
        return f"{n:g} GPUs where the name says {named}"
    sheet = spec_sheet_counts().get(row.instance) if row.cloud == "aws" else None
    if sheet is not None and sheet != n:  # p4d.24xlarge with 16 GPUs: the sheet says 8
        return f"{n:g} GPUs where the spec sheet's {row.instance} has {sheet:g}"
    if n not in (1, 2, 4, 8, 16):
        return f"{n:g} GPUs: no instance of this kind has that many"
    return None


def odd_rows(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Separate the rows that would rank wrongly.

    Returns
    -------
    kept : pandas.DataFrame
        Rows to offer; a spot price above on-demand is taken as a swapped pair (exchanged,
        with a note: :func:`~profet_core.offerings._checks.swap_pairs`).
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
    rows, swapped = swap_pairs(rows[~drop])
    for r in swapped.itertuples(index=False):
        detail = f"Price {r.price:g} < SpotPrice {r.spot:g}: taken as on-demand {r.spot:g}, spot {r.price:g}"
        report.append(_odd(r, "swapped prices", detail))
    rows.loc[~(rows["price"] > 0), "price"] = np.nan
    rows.loc[~(rows["spot"] > 0), "spot"] = np.nan
    return rows.reset_index(drop=True), pd.DataFrame(report, columns=REPORT_COLUMNS)


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
        :data:`REPORT_COLUMNS`: the odd rows (see :func:`odd_rows`), rows that are not GPUs
        and GCP rows that could not be composed, each by name with its reason.
    """
    rows, report, _ = read_accounted(folder)
    return rows, report


def read_accounted(folder) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """:func:`read_catalog`'s rows and report, and :func:`account`'s count of every input row."""
    parts, skipped, read_report, seen = [], [], [], {}
    for cloud, path in catalog_files(folder).items():
        df, bad = read_vms(path, cloud)
        read_report.append(bad)
        seen[cloud] = df
        skipped += not_gpus(df)
        if cloud == "gcp":
            rows, bad = compose_gcp(df)
            parts.append(rows)
            skipped += bad
        else:
            rows = gpu_rows(df).assign(price_note="", spot_note="")
            parts.append(rows.assign(lines=[(n,) for n in rows["line"]]).drop(columns="line"))
    parts = [p.reindex(columns=ROW_COLUMNS) for p in parts]
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ROW_COLUMNS)
    rows["instance"] = rows["instance"].astype(str).str.strip()
    kept, report = odd_rows(rows)
    parts = [*read_report, report, pd.DataFrame(skipped, columns=REPORT_COLUMNS)]
    report = pd.concat(
        [p for p in parts if len(p)] or [pd.DataFrame(columns=REPORT_COLUMNS)], ignore_index=True
    )
    report = report.reindex(columns=REPORT_COLUMNS)
    report["line"] = [line_text(v) for v in report["line"]]
    return kept, report, account(seen, read_report, kept, report)


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
