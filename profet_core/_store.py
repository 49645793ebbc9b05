"""The artifacts folder: manifest, checksums, atomic writes and verified, bounded loading.

Artifacts are JSON, CSV and one ``.npz`` of plain arrays (read with ``allow_pickle=False``),
listed with their sha256 in ``manifest.json``; nothing is ever unpickled. Every way a folder can
be wrong (missing, edited, truncated, re-hashed but malformed, a manifest naming paths outside
the folder) becomes an :class:`~profet_core.errors.ArtifactError` with a message that says which
file and why.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ArtifactError

FORMAT_VERSION = 2
DEFAULT_ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
#: Files every artifacts folder has.
REQUIRED_FILES = ("model.json", "arrays.npz", "instances.csv", "intervals.csv")
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
)
#: Largest artifact file read (bytes): the shipped folder is ~31 MB.
MAX_ARTIFACT_BYTES = 512 * 1024 * 1024


def sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_json(path: Path, obj) -> None:
    """Write ``obj`` as indented, key-sorted JSON (numpy scalars as floats)."""
    path.write_text(json.dumps(obj, indent=1, sort_keys=True, default=float))


def library_versions() -> dict:
    """Versions of the libraries that trained the artifacts (None where not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("numpy", "pandas", "scikit-learn", "scipy", "rapidfuzz", "tensorflow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def sub_arrays(arrays: Mapping, prefix: str) -> dict:
    """The arrays whose key starts with ``prefix``, with the prefix cut off."""
    cut = len(prefix)
    return {k[cut:]: arrays[k] for k in arrays if k.startswith(prefix)}


def replace_folder(tmp: Path, out: Path) -> None:
    """Move a fully written ``tmp`` folder to ``out``, replacing an existing one only at the end."""
    if out.exists():
        backup = out.with_name(out.name + ".old")
        shutil.rmtree(backup, ignore_errors=True)
        out.rename(backup)
        tmp.rename(out)
        shutil.rmtree(backup, ignore_errors=True)
    else:
        tmp.rename(out)


def new_temp_folder(out_dir) -> Path:
    """A private temporary folder beside ``out_dir`` (so the final rename stays on one disk)."""
    parent = Path(out_dir).resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".profet-train-", dir=parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; artifacts are meant to be read by the app's user
    return tmp


def write_manifest(folder: Path, **metadata) -> None:
    """Write ``manifest.json`` listing every file of ``folder`` with its sha256."""
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    write_json(
        folder / "manifest.json",
        {
            "format": FORMAT_VERSION,
            "created": created,
            **metadata,
            "versions": library_versions(),
            "files": {f: sha256(folder / f) for f in files},
        },
    )


@dataclass(frozen=True)
class Bundle:
    """The verified contents of an artifacts folder (see :func:`load_bundle`).

    Attributes
    ----------
    path : Path
    manifest : dict
        ``manifest.json`` without ``files``.
    model : dict
        ``model.json``: instances, methods, model metadata.
    arrays : Mapping of str to ndarray
        ``arrays.npz``, decompressed lazily from the verified bytes.
    intervals, catalog : pandas.DataFrame
    examples : dict
    validation_files : dict of str to bytes
        The verified validation files, parsed by :meth:`read_validation` when needed.
    ignored_files : tuple of str
        Files in the folder that the manifest does not list: never read.
    """

    path: Path
    manifest: dict
    model: dict
    arrays: Mapping
    intervals: pd.DataFrame
    catalog: pd.DataFrame
    examples: dict = field(default_factory=dict)
    validation_files: dict = field(default_factory=dict)
    ignored_files: tuple = ()

    def read_validation(self) -> dict:
        """The validation tables (``metrics``, ``noise``, ... and ``predictions``) by name.

        Raises
        ------
        ArtifactError
            A listed validation file that is not a readable table.
        """
        out = {}
        for name in VALIDATION_TABLES:
            if f"validation/{name}.csv" in self.validation_files:
                out[name] = _csv(self.validation_files, f"validation/{name}.csv", ())
        blob = self.validation_files.get("validation/predictions.csv.gz")
        if blob is not None:
            try:
                out["predictions"] = pd.read_csv(io.BytesIO(blob), compression="gzip")
            except (ValueError, OSError, EOFError) as exc:
                raise ArtifactError(f"validation/predictions.csv.gz is unreadable: {exc}") from None
        return out


def _read_manifest(path: Path) -> dict:
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise ArtifactError(
            f"no trained artifacts in {str(path)!r} (manifest.json missing); "
            "run `profet train --data DIR --out DIR` first"
        )
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ArtifactError(f"manifest {str(manifest_path)!r} is unreadable: {exc}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise ArtifactError("manifest.json must be an object whose 'files' maps names to sha256")
    if manifest.get("format") != FORMAT_VERSION:
        raise ArtifactError(
            f"artifacts format {manifest.get('format')!r} is not the supported {FORMAT_VERSION}"
        )
    return manifest


def _verified(path: Path, files: dict) -> dict[str, bytes]:
    """Read every listed file (confined to ``path``), checking its size and sha256."""
    root = path.resolve()
    data = {}
    for name, digest in files.items():
        if not isinstance(name, str) or not isinstance(digest, str):
            raise ArtifactError(f"manifest entry {name!r}: {digest!r} is not a name and a sha256")
        f = (root / name).resolve()
        if Path(name).is_absolute() or not f.is_relative_to(root) or f == root:
            raise ArtifactError(
                f"manifest lists {name[:80]!r}, outside the artifacts folder; refused"
            )
        if not f.is_file():
            raise ArtifactError(f"artifact file {name!r} listed in the manifest is missing")
        if f.stat().st_size > MAX_ARTIFACT_BYTES:
            raise ArtifactError(f"artifact file {name!r} is larger than {MAX_ARTIFACT_BYTES} bytes")
        blob = f.read_bytes()
        if hashlib.sha256(blob).hexdigest() != digest:
            raise ArtifactError(
                f"artifact file {name!r} does not match its sha256 in the manifest; "
                "retrain or restore the artifacts"
            )
        data[name] = blob
    return data


def _json(blobs: dict, name: str) -> dict:
    try:
        obj = json.loads(blobs[name].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ArtifactError(f"artifact file {name!r} is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ArtifactError(f"artifact file {name!r} must hold a JSON object")
    return obj


def _csv(blobs: dict, name: str, columns) -> pd.DataFrame:
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


def _npz(blob: bytes) -> Mapping:
    try:
        npz = np.load(io.BytesIO(blob), allow_pickle=False)
        if not hasattr(npz, "files"):
            raise ValueError("not an .npz archive")
        return npz
    except Exception as exc:  # numpy/zipfile raise many types for a broken archive
        raise ArtifactError(f"artifact file 'arrays.npz' is unreadable: {exc}") from None


def _unlisted(path: Path, files: dict) -> tuple:
    listed = {str(Path(f)) for f in files} | {"manifest.json"}
    on_disk = (str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    return tuple(sorted(f for f in on_disk if f not in listed))


def load_bundle(path=None) -> Bundle:
    """Verify an artifacts folder and read it.

    Parameters
    ----------
    path : path-like, optional
        Default: ``$PROFET_ARTIFACTS`` or the project's ``artifacts/``.

    Raises
    ------
    ArtifactError
        Missing folder or manifest, a listed file missing, edited, outside the folder or
        malformed.
    """
    from ._intervals import INTERVAL_COLUMNS

    path = Path(path or os.environ.get("PROFET_ARTIFACTS") or DEFAULT_ARTIFACTS)
    manifest = _read_manifest(path)
    files = manifest["files"]
    missing = [f for f in REQUIRED_FILES if f not in files]
    if missing:
        raise ArtifactError(f"manifest does not list {missing}")
    blobs = _verified(path, files)
    return Bundle(
        path=path,
        manifest={k: v for k, v in manifest.items() if k != "files"},
        model=_json(blobs, "model.json"),
        arrays=_npz(blobs["arrays.npz"]),
        intervals=_csv(blobs, "intervals.csv", INTERVAL_COLUMNS),
        catalog=_csv(blobs, "instances.csv", ("instance", "gpu", "usd_per_hour")),
        examples=_json(blobs, "examples.json") if "examples.json" in blobs else {},
        validation_files={k: v for k, v in blobs.items() if k.startswith("validation/")},
        ignored_files=_unlisted(path, files),
    )
