"""The write rule of ``profet profile --out``: the profile and its metadata sidecar."""

from __future__ import annotations

import os
from pathlib import Path

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
