"""The tables of a ``profet collect`` folder: rows replaced atomically, one per workload key.

``profiles.parquet`` (key and op columns, the shared schema), ``latencies.parquet`` (key, batch
and epoch latency, and what the model is: ``model_kind``, ``seq_len``, ``vocab_size``) and
``status.csv`` (every workload's outcome, with ``model_kind`` and ``seq_len``). A table is
written to a temporary file and renamed over; a workload's rows replace older ones of its key.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pandas as pd

from ..inputs._outputs import TEMP_PREFIX
from . import _zoo

KEY = ["exp", "instance", "model", "input_size", "batch_size"]
STATUS_COLUMNS = [*KEY, "status", "error_kind", "message", "seconds", "finished_utc"]
#: What every latencies and status row says about its model (``vocab_size``: latencies only).
KIND_COLUMNS = ["model_kind", "seq_len"]
#: Whole-number columns that are empty for some rows (a CNN has no sequence length).
_OPTIONAL_INTS = ("seq_len", "vocab_size")


def model_name(spec: str) -> str:
    """Table name of a model spec: the zoo name, or a model file's stem."""
    return spec if _zoo.zoo_kind(spec) else Path(spec).stem


def read_table(path: Path) -> pd.DataFrame | None:
    if not path.is_file():
        return None
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def write_table(df: pd.DataFrame, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=f"-{path.name}")
    os.close(fd)
    try:
        if path.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def replace_rows(path: Path, row: dict) -> None:
    """Append ``row`` to the table at ``path``, dropping an older row with the same key."""
    old = read_table(path)
    new = pd.DataFrame([row])
    if old is not None and not old.empty:
        same = (old[KEY].astype(str) == new[KEY].astype(str).iloc[0]).all(axis=1)
        new = pd.concat([old[~same], new], ignore_index=True)
    ops = sorted(c for c in new.columns if c.startswith(("Device_", "Host_")))
    if ops:  # the shared schema: key columns, then op columns sorted, 0 where an op is absent
        new[ops] = new[ops].fillna(0.0)
        new = new[[*KEY, *ops]]
    for col in _OPTIONAL_INTS:  # whole numbers, empty where they do not apply (not 200.0)
        if col in new.columns:
            new[col] = pd.to_numeric(new[col], errors="coerce").astype("Int64")
    write_table(new, path)


def done_keys(out: Path) -> set[tuple]:
    """Keys ``(exp, instance, model, input_size, batch_size)`` already in ``DIR/status.csv``."""
    status = read_table(out / "status.csv")
    if status is None or status.empty:
        return set()
    return {
        (str(r.exp), str(r.instance), str(r.model), int(r.input_size), int(r.batch_size))
        for r in status.itertuples()
    }


def record(out: Path, w, instance: str, result: dict, seconds: float) -> None:
    key = {
        "exp": w.exp,
        "instance": instance,
        "model": model_name(w.model),
        "input_size": w.input_size,
        "batch_size": w.batch_size,
    }
    meta = result.get("meta", {}) if result["ok"] else {}
    kind = meta.get("model_kind", w.kind)  # what the capture found, else what was asked
    about = {"model_kind": kind, "seq_len": w.input_size if kind == "text" else None}
    if result["ok"]:
        replace_rows(out / "profiles.parquet", {**key, **result["profile"]})
        lat = {"batch_latency_s": meta["batch_latency_s"]}
        lat["epoch_latency_s"] = meta["epoch_latency_s"]
        lat.update(about, vocab_size=meta.get("vocab_size"))
        replace_rows(out / "latencies.parquet", {**key, **lat})
    status = {
        **key,
        "status": "ok" if result["ok"] else "failed",
        "error_kind": "" if result["ok"] else result["error_kind"],
        "message": "" if result["ok"] else result.get("message", ""),
        "seconds": round(seconds, 2),
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **about,
    }
    # The status row is written last: a workload counts as done only once its rows are in.
    replace_rows(out / "status.csv", status)


def drop_failed(out: Path) -> None:
    status = read_table(out / "status.csv")
    if status is not None and (status["status"] == "failed").any():
        write_table(status[status["status"] != "failed"], out / "status.csv")
