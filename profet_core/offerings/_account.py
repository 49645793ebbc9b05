"""Every row of a catalog's ``vms.csv`` files accounted for: priced (part of an offering),
reported by name with its reason, a GCP N1 host no attachable GPU was priced on, or a row
without an accelerator (CPU-only: not an offering); ``unaccounted`` says if any was lost."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

#: GCP machine families with GPUs built in (a name of one SkyPilot does not map is reported).
GCP_GPU_FAMILY = re.compile(r"^(a\d|g\d)-")


def account(seen: dict, read_report: list, kept: pd.DataFrame, report: pd.DataFrame) -> dict:
    """``{cloud: counts}`` of the input's rows: ``rows`` (records read), ``priced`` (part of an
    offering), ``reported`` (named in the report and in no offering), ``gcp_hosts`` (GCP N1
    rows no attachable GPU was priced on), ``no_accelerator`` (CPU-only rows, not offerings)
    and ``unaccounted`` (none of these: 0 unless a row was lost without a word)."""
    out = {}
    for (cloud, df), bad in zip(seen.items(), read_report, strict=True):
        records = set(df["line"].astype(int)) | _numbers(bad["line"])
        priced = {int(x) for t in kept.loc[kept["cloud"] == cloud, "lines"] for x in t}
        named = _numbers(report.loc[report["cloud"] == cloud, "line"]) - priced
        name = df["instance"].fillna("")
        hosts = set(df.loc[name.str.startswith("n1-"), "line"]) if cloud == "gcp" else set()
        hosts -= priced | named
        cpu = df["accelerator"].isna() & ~name.str.match(GCP_GPU_FAMILY)
        if cloud == "gcp":
            cpu &= ~name.str.startswith("n1-") & (name != "")
        plain = set(df.loc[cpu, "line"]) - priced - named - hosts
        out[cloud] = {
            "rows": len(records),
            "priced": len(priced & records),
            "reported": len(named & records),
            "gcp_hosts": len(hosts),
            "no_accelerator": len(plain),
            "unaccounted": len(records - priced - named - hosts - plain),
        }
    return out


def _numbers(lines) -> set:
    """Record numbers of report lines (``"7+412"`` is two)."""
    return {int(x) for v in lines for x in str(v).split("+") if x.strip().isdigit()}


def line_text(lines) -> str:
    """The vms.csv record number(s) of a row (``"12"``, a composed row ``"7+412"``)."""
    if isinstance(lines, tuple):
        return "+".join(str(int(x)) for x in lines if pd.notna(x))
    return "" if lines is None or (isinstance(lines, float) and np.isnan(lines)) else str(lines)
