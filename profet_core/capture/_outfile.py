"""What ``profet profile --out`` writes (the profile document) and its write rule: the profile
and its metadata sidecar."""

from __future__ import annotations

import os
from pathlib import Path

from .._schema import LATENCY_COLUMN, MAX_LATENCY_S, MIN_LATENCY_S
from ..errors import ProfetValueError
from ..inputs._outputs import file_not_ours, read_record, refuse_overlap


def meta_path_of(out) -> Path:
    """The metadata file written beside the profile ``out``: ``<stem>.meta.json``."""
    out = Path(out)
    return out.with_name(out.stem + ".meta.json")


def check_profile_out(out, model=None) -> None:
    """The write rule for ``profet profile --out`` (before the run): the profile and its
    ``<stem>.meta.json`` are new files, or the pair ``profet profile`` wrote, unchanged since
    (the metadata records the profile's sha256); neither is the model file.

    Raises
    ------
    ProfetValueError
        Naming the file and what to do; nothing was changed.
    """
    out = Path(out)
    meta_path = meta_path_of(out)
    if model is not None and os.path.lexists(str(model)):
        for path in (out, meta_path):
            refuse_overlap(path, [model], "--out file")
    record = read_record(meta_path)
    ours = record is not None and isinstance(record.get("profet_files"), dict)
    for path, reason in (
        (out, file_not_ours(out, record)),
        (meta_path, None if ours or not os.path.lexists(meta_path) else "PROFET did not write it"),
    ):
        if reason:
            raise ProfetValueError(
                f"{str(path)!r} exists and {reason}; give --out a new file name, or move that "
                "file away (nothing was changed)"
            )


def profile_document(profile, meta) -> dict:
    """The profile JSON ``profet profile`` writes: PROFET's object form, from the one-row op
    table ``profile`` (us) and its ``ProfileMeta``.

    ``{"ops": {op: us}, "steps": ..., "batch_size": ..., "input_size": ..., "batch_latency_s":
    ..., "instance": ...}``, so that the file itself names the instance it was taken on (the
    anchor ``profet predict`` then checks it against) and its measured latency;
    ``convention_differs`` (what differs from PROFET's convention, warned about by
    ``profet predict``) where the capture recorded something. ``instance`` is left out when
    none was given, the latency when it is not a usable number of seconds, and ``input_size``
    (pixels to every reader) for a text model: its sequence length is ``seq_len`` of the
    metadata beside it, with ``model_kind: "text"``.
    """
    doc = {"ops": profile.iloc[0].to_dict(), "steps": int(meta.steps_traced)}
    doc.update(batch_size=int(meta.batch_size))
    if meta.model_kind != "text":
        doc.update(input_size=int(meta.input_size))
    lat = meta.batch_latency_s
    if isinstance(lat, (int, float)) and MIN_LATENCY_S <= lat <= MAX_LATENCY_S:
        doc[LATENCY_COLUMN] = float(lat)
    if meta.instance:
        doc["instance"] = str(meta.instance)
    differs = meta.convention.get("differs") if meta.convention else None
    if differs:  # predict warns about it
        doc["convention_differs"] = "; ".join(differs)
    return doc
