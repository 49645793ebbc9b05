"""One cloud's ``vms.csv`` read as the profile readers read a user's file: a regular file only,
bounded before it is read (never a FIFO, a device or a link to one), UTF-8, one line naming
the problem for a malformed file, and every row that is dropped or changed reported by name
with its reason (ragged rows, text in number columns, absurd prices and counts, control
characters), in time linear in the rows.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd

from .._messages import quote
from ..errors import ProfetValueError

#: Catalog columns read (by name: the order differs per cloud and schema).
COLUMNS = {
    "InstanceType": "instance",
    "AcceleratorName": "accelerator",
    "AcceleratorCount": "gpus",
    "vCPUs": "vcpus",
    "MemoryGiB": "memory_gib",
    "Price": "price",
    "SpotPrice": "spot",
    "Region": "region",
}
ZONE = "AvailabilityZone"
TEXT = ("instance", "accelerator", "region", "zone")
#: ``line``: the row's record number in its vms.csv (the header is 1).
REPORT_COLUMNS = ["cloud", "instance", "region", "zone", "accelerator", "kind", "detail", "line"]
#: Largest vms.csv read (a full AWS file is about 4 MB).
MAX_VMS_BYTES = 64 * 2**20
#: The dearest GPU instance listed costs about 100 USD/h (8 H200s); 1,000 USD/h is no price.
MAX_USD_PER_HOUR = 1000.0
#: Largest vCPU count and memory (GiB) a real instance has, with room to spare.
MAX_VCPUS, MAX_MEMORY_GIB = 4096, 65536
# Control characters but tab (a NUL byte or a terminal escape in a name is no name).
_CONTROL = r"[\x00-\x08\x0a-\x1f\x7f-\x9f]"


def decoded(path, what: str = "catalog file") -> str:
    """The text of a catalog file: bounded, regular, non-empty, UTF-8 (one line otherwise)."""
    from ..inputs._safe_read import read_bounded

    data = read_bounded(path, MAX_VMS_BYTES, what)
    shown = quote(str(path))
    if not data.strip():
        raise ProfetValueError(
            f"{what} {shown} is empty; a SkyPilot vms.csv has a header row and one row per "
            "instance type"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
        raise ProfetValueError(
            f"{what} {shown} is not UTF-8 text"
            + (" (it is UTF-16: save it as UTF-8)" if utf16 else "")
        ) from None


def read_vms(path, cloud: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One cloud's ``vms.csv``: every well-formed row, and the report of the others.

    Returns
    -------
    rows : pandas.DataFrame
        ``cloud, instance, accelerator, gpus, vcpus, memory_gib, region, zone, price, spot,
        line`` (``line``: its record number in the file):
        text NaN where empty, numbers float (NaN where empty or left out).
    report : pandas.DataFrame
        :data:`REPORT_COLUMNS`, one line per row dropped or changed.

    Raises
    ------
    ProfetFileNotFoundError, ProfetValueError
        The file is missing, not a regular file, too large, empty, not UTF-8, not CSV, or
        lacks a column.
    """
    shown = quote(str(path))
    try:
        records = list(csv.reader(io.StringIO(decoded(path))))
    except csv.Error as exc:
        raise ProfetValueError(f"cannot read catalog file {shown} as CSV: {exc}") from None
    numbered = [(i + 1, r) for i, r in enumerate(records) if any(f.strip() for f in r)]
    records = [r for _, r in numbered]
    header = [h.strip() for h in records[0]]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ProfetValueError(
            f"catalog file {shown} lacks column(s) {missing}; a SkyPilot vms.csv has "
            f"{list(COLUMNS)}"
        )
    width, at = len(header), header.index("InstanceType")
    ragged = [(n, r) for n, r in numbered[1:] if len(r) != width]
    df = pd.DataFrame([r for r in records[1:] if len(r) == width], columns=header, dtype=object)
    use = {**COLUMNS, **({ZONE: "zone"} if ZONE in header else {})}
    df = df[list(use)].rename(columns=use) if len(df) else pd.DataFrame(columns=list(use.values()))
    df["line"] = np.array([n for n, r in numbered[1:] if len(r) == width], dtype=np.int64)
    report = [
        pd.DataFrame(
            {
                "instance": [r[at] if len(r) > at else "" for _, r in ragged],
                "kind": "ragged row",
                "detail": [f"line {n}: {len(r)} fields, the header has {width}" for n, r in ragged],
                "line": [n for n, _ in ragged],
            }
        )
    ]
    df, report = _checked(df, cloud, report)
    df["cloud"] = cloud
    out = pd.concat([f for f in report if len(f)] or [pd.DataFrame()], ignore_index=True)
    out = out.reindex(columns=REPORT_COLUMNS).assign(cloud=cloud)
    return df, out


def _checked(df: pd.DataFrame, cloud: str, report: list) -> tuple[pd.DataFrame, list]:
    """Text cleaned and numbers parsed and bounded, each change reported (vectorised)."""
    if "zone" not in df:
        df["zone"] = df["region"]  # clouds without zones: one row per region
    for col in TEXT:
        s = df[col].astype(str).str.strip()
        bad = s.str.contains(_CONTROL, regex=True)
        if bad.any():
            report.append(_lines(df[bad], "control characters", f"removed from {col}"))
            s = s.str.replace(_CONTROL, "", regex=True)
        df[col] = s.where(s != "", np.nan)
    df["zone"] = df["zone"].fillna(df["region"])
    if cloud != "gcp":  # GCP's GPU rows have no type: their machine is composed later
        nameless = df["instance"].isna() & df["accelerator"].notna()
        report.append(_lines(df[nameless], "no instance name", "InstanceType is empty: dropped"))
        df = df[~nameless]
    drop = np.zeros(len(df), dtype=bool)
    for col in ("gpus", "vcpus", "memory_gib", "price", "spot"):
        raw = df[col].astype(str).str.strip()
        num = pd.to_numeric(raw.where(raw != "", np.nan), errors="coerce")
        text = num.isna() & (raw != "") & (raw != "nan")
        if col in ("price", "spot"):
            absurd = ~text & num.notna() & ~num.between(0, MAX_USD_PER_HOUR)
            for mask, kind in ((text, "text in a number column"), (absurd, "absurd price")):
                if mask.any():
                    shown = [f"{col} {v[:40]!r} USD/h left out" for v in raw[mask]]
                    report.append(_lines(df[mask], kind, shown))
            num = num.where(~(text | absurd))
        else:
            top = {"vcpus": MAX_VCPUS, "memory_gib": MAX_MEMORY_GIB}.get(col, np.inf)
            wrong = ~text & num.notna() & ~(num.between(0, top) if col != "gpus" else num.notna())
            for mask, kind in ((text, "text in a number column"), (wrong, f"impossible {col}")):
                if mask.any():
                    shown = [f"{col} {v[:40]!r}: row dropped" for v in raw[mask]]
                    report.append(_lines(df[mask], kind, shown))
                    drop |= mask.to_numpy()
        df[col] = num.astype(float)
    return df[~drop].reset_index(drop=True), report


def _lines(rows: pd.DataFrame, kind: str, detail) -> pd.DataFrame:
    """Report lines for ``rows`` (instance, region, zone, accelerator) with one reason."""
    out = rows.reindex(columns=["instance", "region", "zone", "accelerator", "line"]).copy()
    out["instance"] = out["instance"].fillna("").astype(str)
    out["kind"], out["detail"] = kind, detail
    return out.reset_index(drop=True)
