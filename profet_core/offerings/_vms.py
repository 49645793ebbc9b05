"""One cloud's ``vms.csv`` read as the profile readers read a user's file: a regular file only,
bounded before it is read (never a FIFO, a device or a link to one), UTF-8, one line naming
the problem for a malformed file, and every row that is dropped or changed reported by name
with its reason (ragged rows, text in number columns, absurd prices and counts, control
characters), in time linear in the rows.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .._messages import CONTROL_IN_NAME, printable, quote
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
#: Most records a vms.csv may hold: a full catalog file has tens of thousands (AWS's, about
#: 4 MB, some 60,000); a million took ``offerings refresh`` minutes and gigabytes.
MAX_VMS_ROWS = 300_000
#: The dearest GPU instance listed costs about 100 USD/h (8 H200s); 1,000 USD/h is no price.
MAX_USD_PER_HOUR = 1000.0
#: The cheapest listed (a spot nano VM) costs about 0.001 USD/h; below 0.0001 (1e-300, a
#: denormal) a price is a typo. 0 is kept: GCP's GPU machine types list 0 for the machine, whose
#: price is its GPU row's.
MIN_USD_PER_HOUR = 1e-4
#: Largest vCPU count and memory (GiB) a real instance has, with room to spare.
MAX_VCPUS, MAX_MEMORY_GIB = 4096, 65536
#: Largest GPU count a row may give (no instance holds more; SkyPilot's own arithmetic breaks
#: on counts near 2**63).
MAX_GPU_COUNT = 1024
# Control characters (the one rule of ``_messages``; newlines too: a name is one line).
_CONTROL = CONTROL_IN_NAME.pattern


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
    lines = data.count(b"\n")
    if lines > MAX_VMS_ROWS:
        raise ProfetValueError(
            f"{what} {shown} has {lines:,} lines; the limit is {MAX_VMS_ROWS:,} (a full "
            "SkyPilot vms.csv has tens of thousands)"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
        raise ProfetValueError(
            f"{what} {shown} is not UTF-8 text"
            + (" (it is UTF-16: save it as UTF-8)" if utf16 else "")
        ) from None


def _records(path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A vms.csv's header (stripped) and its non-blank records, numbered (the header is 1):
    every column SkyPilot reads present, each once."""
    shown = quote(str(path))
    try:
        records = list(csv.reader(io.StringIO(decoded(path))))
    except csv.Error as exc:
        raise ProfetValueError(f"cannot read catalog file {shown} as CSV: {exc}") from None
    numbered = [(i + 1, r) for i, r in enumerate(records) if any(f.strip() for f in r)]
    header = [h.strip() for h in numbered[0][1]]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ProfetValueError(
            f"catalog file {shown} lacks column(s) {missing}; a SkyPilot vms.csv has "
            f"{list(COLUMNS)}"
        )
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:  # which of the two is the price? Neither reader can say
        raise ProfetValueError(
            f"catalog file {shown} has the column(s) {[printable(h) for h in twice]} twice in "
            "its header; a SkyPilot vms.csv names each column once"
        )
    return header, numbered


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
    return _frame(*_records(path), cloud)


def _frame(header: list, numbered: list, cloud: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`read_vms` of a file's header and numbered records (:func:`_records`)."""
    width, at = len(header), header.index("InstanceType")
    ragged = [(n, r) for n, r in numbered[1:] if len(r) != width]
    df = pd.DataFrame([r for _, r in numbered[1:] if len(r) == width], columns=header, dtype=object)
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
            s = s.str.replace(_CONTROL, "", regex=True)
        df[col] = s.where(s != "", np.nan)
        if bad.any():  # named as cleaned: the report is printed and written too
            report.append(_lines(df[bad], "control characters", f"removed from {col}"))
    nowhere = df["region"].isna()  # offered nowhere: no line of the snapshot can hold it
    if nowhere.any():
        report.append(_lines(df[nowhere], "no region", "Region is empty: dropped"))
        df = df[~nowhere]
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
            absurd |= (num > 0) & (num < MIN_USD_PER_HOUR)
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


def skypilot_copy(path, cloud: str) -> tuple[str, pd.DataFrame, tuple[int, int]]:
    """The ``vms.csv`` handed to SkyPilot's optimizer (``profet sky-plan``), checked as
    :func:`read_vms` checks it for the snapshot: the rows it keeps, each as the file has it but
    without control characters, and left out where SkyPilot would plan on a number no offering
    has (an on-demand price that is absurd, text, or 0 outside GCP, whose machine rows list 0; a
    GPU count that is no count). A spot price left out is emptied.

    Returns
    -------
    text : str
        The CSV: the header, then the rows kept.
    report : pandas.DataFrame
        :data:`REPORT_COLUMNS`: every row left out or changed, by name with its reason.
    counts : tuple of int
        The file's records and the rows kept.
    """
    header, numbered = _records(path)
    df, report = _frame(header, numbered, cloud)
    at = {h: i for i, h in enumerate(header)}
    values = zip(df["price"], df["spot"], df["gpus"], df["accelerator"], strict=True)
    checked = dict(zip(df["line"].tolist(), values, strict=True))
    rows, out, more = [header], io.StringIO(), []
    for n, record in numbered[1:]:
        if n not in checked:
            continue  # dropped by the reader, reported there
        price, spot, gpus, acc = checked[n]
        record = list(record)
        raw_price = record[at["Price"]].strip()
        why = _left_out(cloud, raw_price, price, gpus, acc)
        if why:
            more.append((n, record[at["InstanceType"]], *why))
            continue
        if record[at["SpotPrice"]].strip() and not (spot > 0 or (spot == 0 and cloud == "gcp")):
            record[at["SpotPrice"]] = ""  # absurd or text: reported by the reader; 0: no price
        rows.append([printable(cell, one_line=True) for cell in record])
    csv.writer(out, lineterminator="\n").writerows(rows)
    extra = pd.DataFrame(more, columns=["line", "instance", "kind", "detail"])
    extra["instance"] = [printable(i, one_line=True) for i in extra["instance"]]
    both = pd.concat([f for f in (report, extra) if len(f)] or [report], ignore_index=True)
    report = both.reindex(columns=REPORT_COLUMNS).assign(cloud=cloud)
    return out.getvalue(), report, (len(numbered) - 1, len(rows) - 1)


def _left_out(cloud: str, raw_price: str, price, gpus, acc) -> tuple[str, str] | None:
    """Why a row the reader keeps is left out of SkyPilot's copy (kind, detail), or None."""
    if raw_price and np.isnan(price):
        return ("no price", "its Price was left out (reported above), so the row is too")
    if price == 0 and cloud != "gcp":
        return ("no price", "Price 0 USD/h is no price: left out of what SkyPilot reads")
    named = isinstance(acc, str)
    if named and not (np.isfinite(gpus) and 0 < gpus <= MAX_GPU_COUNT):
        return ("impossible GPU count", f"{gpus:g} GPUs: no instance has that many")
    return None


def checked_accelerators(path) -> str:
    """SkyPilot's ``common/accelerators.csv`` (``AcceleratorName,Clouds``) as SkyPilot is handed
    it: bounded, regular, UTF-8, its columns present once, rows of the header's width only,
    without control characters."""
    what = "catalog file"
    shown = quote(str(path))
    try:
        records = list(csv.reader(io.StringIO(decoded(path, what))))
    except csv.Error as exc:
        raise ProfetValueError(f"cannot read catalog file {shown} as CSV: {exc}") from None
    records = [r for r in records if any(f.strip() for f in r)]
    header = [h.strip() for h in records[0]]
    if header.count("AcceleratorName") != 1 or header.count("Clouds") != 1:
        raise ProfetValueError(
            f"catalog file {shown} is no SkyPilot accelerators.csv: its header needs "
            "AcceleratorName and Clouds, each once"
        )
    rows = [header] + [r for r in records[1:] if len(r) == len(header)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([[printable(c, one_line=True) for c in r] for r in rows])
    return out.getvalue()


#: A cloud's folder name (``aws``, ``lambda``, ``runpod``): it becomes the snapshot's ``cloud``.
CLOUD_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}", re.IGNORECASE)


def check_catalog_file(folder: Path, path: Path, cloud: str) -> None:
    """Refuse a catalog file whose cloud folder's name is no cloud name (a terminal escape, a
    space: it would be printed and written as the ``cloud`` of every line), or that is a link
    to a file outside the catalog folder (``/etc/shadow``, another user's file)."""
    if not CLOUD_NAME.fullmatch(cloud):
        raise ProfetValueError(
            f"catalog folder {quote(str(folder))} has a cloud folder named {quote(cloud)}; cloud "
            "folders are named by letters, digits, '-' and '_' (aws, gcp, lambda, ...)"
        )
    root = folder.resolve()
    real = path.resolve()
    # a link to a device or a FIFO is the reader's to name (it reads regular files only)
    if real.is_file() and root not in real.parents:
        raise ProfetValueError(
            f"catalog file {quote(str(path))} ({cloud}) is a link to {quote(str(real))}, outside "
            "the catalog folder; copy the file into it instead"
        )
