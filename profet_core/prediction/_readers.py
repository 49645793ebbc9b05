"""Parsers of an artifacts folder's verified bytes: JSON, CSV, the arrays of ``arrays.npz`` and
the validation tables, each array or table read when first asked for.

Every way the bytes can be wrong becomes an :class:`~profet_core.errors.ArtifactError` naming the
file; arrays are read with ``allow_pickle=False`` after their headers are checked against their
zip entries, so nothing is unpickled and nothing is allocated before its size is known.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import ArtifactError

#: Validation tables the app and the CLI show, when present.
VALIDATION_TABLES = (
    "metrics",
    "noise",
    "scalers",
    "per_architecture",
    "novelty",
    "crossgpu",
    "fits",
    "onepoint",
    "published",
    "published_pairs",
    "amp_gain",
    "gpu_scaling",
)
#: Largest total of the arrays once decompressed (bytes): the shipped ones are ~77 MB.
MAX_ARRAY_BYTES = 2 * 1024 * 1024 * 1024


def read_json_artifact(blobs: dict, name: str) -> dict:
    try:
        obj = json.loads(blobs[name].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ArtifactError(f"artifact file {name!r} is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ArtifactError(f"artifact file {name!r} must hold a JSON object")
    return obj


def read_csv_artifact(blobs: dict, name: str, columns) -> pd.DataFrame:
    try:
        df = pd.read_csv(io.BytesIO(blobs[name]))
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"artifact file {name!r} is not a readable CSV: {exc}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ArtifactError(f"artifact file {name!r} lacks column(s) {missing}")
    if "with_latency" in df:
        flags = df["with_latency"].astype(str).str.lower()
        if not flags.isin(["true", "false"]).all():
            raise ArtifactError(f"artifact file {name!r}: with_latency must be True or False")
        df["with_latency"] = flags == "true"
    return df


def read_npz_artifact(blob: bytes) -> Mapping:
    if not zipfile.is_zipfile(io.BytesIO(blob)):
        raise ArtifactError("artifact file 'arrays.npz' is not a zip archive of .npy arrays")
    try:
        return NpzArrays(blob)
    except ArtifactError:
        raise
    except Exception as exc:  # zipfile raises many types for a broken archive
        raise ArtifactError(f"artifact file 'arrays.npz' is unreadable: {exc}") from None


class NpzArrays(Mapping):
    """The arrays of an ``.npz`` (in memory), each read when first asked for, after checking
    that its ``.npy`` header declares exactly the bytes its zip entry holds: so no array is
    allocated before its size is known, and all of them together fit :data:`MAX_ARRAY_BYTES`."""

    def __init__(self, blob: bytes):
        self._zip = zipfile.ZipFile(io.BytesIO(blob))
        infos = self._zip.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names) or not all(n.endswith(".npy") for n in names):
            raise ArtifactError("artifact file 'arrays.npz' holds entries other than .npy arrays")
        total = sum(i.file_size for i in infos)
        if total > MAX_ARRAY_BYTES:
            raise ArtifactError(
                f"artifact file 'arrays.npz' decompresses to {total:,} bytes; the limit is "
                f"{MAX_ARRAY_BYTES:,}"
            )
        self._infos = {n[: -len(".npy")]: i for n, i in zip(names, infos, strict=True)}
        self.files = list(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def __iter__(self):
        return iter(self.files)

    def __getitem__(self, key: str) -> np.ndarray:
        info = self._infos[key]
        fmt = np.lib.format
        with self._zip.open(info) as f:
            try:
                version = fmt.read_magic(f)
                if version not in ((1, 0), (2, 0)):
                    raise ValueError(f"unsupported .npy version {version}")
                read_header = (
                    fmt.read_array_header_1_0 if version == (1, 0) else (fmt.read_array_header_2_0)
                )
                shape, _, dtype = read_header(f)
                declared = math.prod(shape) * dtype.itemsize
                if dtype.hasobject or declared != info.file_size - f.tell():
                    raise ValueError(
                        f"header declares {declared:,} bytes of {dtype}, the entry holds "
                        f"{info.file_size - f.tell():,}"
                    )
            except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
                raise ArtifactError(f"arrays.npz: array {key[:80]!r} is malformed: {exc}") from None
        with self._zip.open(info) as f:
            try:
                return fmt.read_array(f, allow_pickle=False)
            except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
                raise ArtifactError(f"arrays.npz: array {key[:80]!r} is malformed: {exc}") from None


class ValidationTables(Mapping):
    """The validation tables of an artifacts folder by name, each parsed from its verified
    bytes on first use and kept (``metrics``, ``noise``, ..., then ``predictions``)."""

    def __init__(self, files: dict):
        self._files = files
        names = [n for n in VALIDATION_TABLES if f"validation/{n}.csv" in files]
        self._names = names + ["predictions"] * ("validation/predictions.csv.gz" in files)
        self._parsed: dict = {}

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self):
        return iter(self._names)

    def __contains__(self, name) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._parsed:
            self._parsed[name] = self._parse(name)
        return self._parsed[name]

    def _parse(self, name: str) -> pd.DataFrame:
        if name != "predictions":
            return read_csv_artifact(self._files, f"validation/{name}.csv", ())
        blob = self._files["validation/predictions.csv.gz"]
        try:
            return pd.read_csv(io.BytesIO(blob), compression="gzip")
        except (ValueError, OSError, EOFError) as exc:
            raise ArtifactError(f"validation/predictions.csv.gz is unreadable: {exc}") from None
