"""Parsers of an artifacts folder's verified bytes: JSON, CSV, the arrays of ``arrays.npz`` and
the validation tables, each array or table read when first asked for.

Every way the bytes can be wrong becomes an :class:`~profet_core.errors.ArtifactError` naming the
file; arrays are read with ``allow_pickle=False`` after their headers are checked against their
zip entries, so nothing is unpickled and nothing is allocated before its size is known.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
import zlib
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
    "spec_order",
    "beyond_cnn",
)
#: Largest total of the arrays once decompressed (bytes): the shipped ones are ~77 MB.
MAX_ARRAY_BYTES = 2 * 1024 * 1024 * 1024
NOT_A_ZIP = "artifact file 'arrays.npz' is not a zip archive of .npy arrays"
DOES_NOT_MATCH = (
    "artifact file 'arrays.npz' does not match the arrays listed in the manifest; "
    "retrain or restore the artifacts"
)


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
    """The arrays of ``arrays.npz`` from its verified bytes (a manifest without per-array digests)."""
    return _npz_arrays(io.BytesIO(blob), None)


def open_npz_artifact(path, digests: Mapping) -> Mapping:
    """The arrays of the ``arrays.npz`` at ``path``, its members checked against ``digests``.

    Only the zip's central directory is read here: each member's name, size and CRC-32 must be
    the manifest's (so a file swapped in by a retrain, truncated or re-zipped is refused now); an
    array's bytes are read, and checked against their sha256, when the array is first asked for.
    The file stays open, so a later swap of the folder cannot mix two versions.

    Parameters
    ----------
    path : path-like
    digests : Mapping of str to dict
        Per member (``<name>.npy``): ``size`` (bytes uncompressed), ``crc32`` and ``sha256``, as
        :func:`npz_digests` writes them.
    """
    arrays = _npz_arrays(path, digests)
    listed = {n: (d.get("size"), d.get("crc32")) for n, d in digests.items()}
    actual = {i.filename: (i.file_size, i.CRC) for i in arrays._zip.infolist()}
    if listed != actual:
        arrays._zip.close()
        raise ArtifactError(DOES_NOT_MATCH)
    return arrays


def npz_digests(path) -> dict:
    """Per member of the ``.npz`` at ``path``: its size (bytes), CRC-32 and sha256, uncompressed
    (what ``manifest.json`` records so a load reads only the arrays it uses)."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            h = hashlib.sha256()
            with z.open(info) as f:
                for chunk in iter(lambda f=f: f.read(1 << 20), b""):
                    h.update(chunk)
            out[info.filename] = {
                "size": info.file_size,
                "crc32": info.CRC,
                "sha256": h.hexdigest(),
            }
    return out


def _npz_arrays(source, digests) -> NpzArrays:
    """:class:`NpzArrays` of a zip (a path or a file object), every way it is broken one error."""
    if not zipfile.is_zipfile(source):
        raise ArtifactError(NOT_A_ZIP)
    try:
        return NpzArrays(zipfile.ZipFile(source), digests)
    except ArtifactError:
        raise
    except Exception as exc:  # zipfile raises many types for a broken archive
        raise ArtifactError(f"artifact file 'arrays.npz' is unreadable: {exc}") from None


#: What reading a broken member can raise (zlib's own error is not an OSError).
_READ_ERRORS = (ValueError, EOFError, OSError, zipfile.BadZipFile, zlib.error)


class NpzArrays(Mapping):
    """The arrays of an ``.npz``, each read when first asked for, after checking its bytes
    against the manifest's sha256 (where ``digests`` are given) and that its ``.npy`` header
    declares exactly the bytes its zip entry holds: so no array is allocated before its size is
    known, and all of them together fit ``max_bytes`` (:data:`MAX_ARRAY_BYTES`)."""

    def __init__(
        self, zf: zipfile.ZipFile, digests: Mapping | None = None, max_bytes=MAX_ARRAY_BYTES
    ):
        self._zip, self._digests = zf, digests
        infos = self._zip.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names) or not all(n.endswith(".npy") for n in names):
            raise ArtifactError("artifact file 'arrays.npz' holds entries other than .npy arrays")
        total = sum(i.file_size for i in infos)
        if total > max_bytes:
            raise ArtifactError(
                f"artifact file 'arrays.npz' decompresses to {total:,} bytes; the limit is "
                f"{max_bytes:,}"
            )
        self._infos = {n[: -len(".npy")]: i for n, i in zip(names, infos, strict=True)}
        self.files = list(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def __iter__(self):
        return iter(self.files)

    def __getitem__(self, key: str) -> np.ndarray:
        info = self._infos[key]
        raw = bytearray(info.file_size)  # the entry's size: bounded by the total checked above
        try:
            with self._zip.open(info) as f:  # the CRC-32 is checked as the entry is read
                got = f.readinto(raw)
                if got != info.file_size or f.read(1):
                    raise ValueError(f"the entry holds other than its {info.file_size:,} bytes")
        except _READ_ERRORS as exc:
            raise ArtifactError(f"arrays.npz: array {key[:80]!r} is malformed: {exc}") from None
        want = None if self._digests is None else self._digests.get(info.filename, {})
        if want is not None and hashlib.sha256(raw).hexdigest() != want.get("sha256"):
            raise ArtifactError(
                f"arrays.npz: array {key[:80]!r} does not match its sha256 in the manifest; "
                "retrain or restore the artifacts"
            )
        try:
            return _npy_array(raw)
        except _READ_ERRORS as exc:
            raise ArtifactError(f"arrays.npz: array {key[:80]!r} is malformed: {exc}") from None


def _npy_array(raw: bytearray) -> np.ndarray:
    """The array of a ``.npy``'s bytes, a view of them (writable, no copy), after checking that
    its header declares exactly the bytes that follow it and no Python objects."""
    fmt = np.lib.format
    f = io.BytesIO(raw)
    version = fmt.read_magic(f)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"unsupported .npy version {version}")
    read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, fortran_order, dtype = read_header(f)
    declared = math.prod(shape) * dtype.itemsize
    if dtype.hasobject or declared != len(raw) - f.tell():
        raise ValueError(
            f"header declares {declared:,} bytes of {dtype}, the entry holds "
            f"{len(raw) - f.tell():,}"
        )
    flat = np.frombuffer(raw, dtype=dtype, count=math.prod(shape), offset=f.tell())
    return flat.reshape(shape[::-1]).T if fortran_order else flat.reshape(shape)


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
