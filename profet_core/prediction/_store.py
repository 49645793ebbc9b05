"""The artifacts folder: manifest, checksums, atomic writes and verified, bounded loading.

Artifacts are JSON, CSV and one ``.npz`` of plain arrays (read with ``allow_pickle=False``),
listed with their sha256 in ``manifest.json``, and each array of the ``.npz`` with its own, so a
load reads only the arrays a prediction uses (71 of 721 for the shipped folder); nothing is ever
unpickled. Every way a folder can
be wrong (missing, edited, truncated, re-hashed but malformed, a manifest naming paths outside
the folder) becomes an :class:`~profet_core.errors.ArtifactError` with a message that says which
file and why.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import ArtifactError
from ..inputs._outputs import moved_aside
from ._readers import (
    ValidationTables,
    npz_digests,
    open_npz_artifact,
    read_csv_artifact,
    read_json_artifact,
    read_npz_artifact,
)

FORMAT_VERSION = 2
DEFAULT_ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
#: Files every artifacts folder has.
#: The prices (instance, GPU, USD/h) the artifacts were trained with; artifacts written before
#: the core was layered call it by its old name, still read (the GPU spec sheet is ``gpu_specs.csv``).
PRICES_FILE, OLD_PRICES_FILE = "prices.csv", "instances.csv"
ARRAYS = "arrays.npz"
REQUIRED_FILES = ("model.json", ARRAYS, PRICES_FILE, "intervals.csv")
#: Largest artifact file read (bytes): the shipped folder is ~31 MB.
MAX_ARTIFACT_BYTES = 512 * 1024 * 1024
#: Largest total of every artifact file read, each counted once (bytes).
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
#: Most files a manifest may list.
MAX_FILES = 1000


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


def write_manifest(folder: Path, **metadata) -> None:
    """Write ``manifest.json`` listing every file of ``folder`` with its sha256, and each array
    of ``arrays.npz`` with its own (``arrays``: a load then reads only the arrays it uses)."""
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    arrays = {"arrays": npz_digests(folder / ARRAYS)} if ARRAYS in files else {}
    write_json(
        folder / "manifest.json",
        {
            "format": FORMAT_VERSION,
            "created": created,
            **metadata,
            "versions": library_versions(),
            **arrays,
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
        ``manifest.json`` without ``files`` and ``arrays`` (the digests).
    model : dict
        ``model.json``: instances, methods, model metadata.
    arrays : Mapping of str to ndarray
        ``arrays.npz``, each array read and checked against its sha256 when first used (the
        whole file read and checked at load where the manifest has no per-array digests).
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

    def read_validation(self) -> Mapping:
        """The validation tables (``metrics``, ``noise``, ... and ``predictions``) by name,
        each parsed when first asked for (a prediction reads ``novelty`` only).

        Raises
        ------
        ArtifactError
            On reading a listed validation file that is not a readable table.
        """
        return ValidationTables(self.validation_files)


def _read_manifest(path: Path) -> dict:
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        aside = None if os.path.lexists(path) else moved_aside(path)
        if aside is not None:
            raise ArtifactError(
                f"the artifacts {str(path)!r} were moved aside to {str(aside)!r} by a `profet "
                "train` that was killed; the next `profet train --out` there puts them back, or "
                f"move {str(aside)!r} to {str(path)!r}"
            )
        raise ArtifactError(
            f"no trained artifacts in {str(path)!r} (manifest.json missing); "
            "run 'profet train --data DIR --out DIR' first"
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


def _listed(root: Path, name) -> tuple[Path, os.stat_result]:
    """The file a manifest entry names: confined to ``root``, present, within the size bound."""
    f = (root / name).resolve()
    if Path(name).is_absolute() or not f.is_relative_to(root) or f == root:
        raise ArtifactError(f"manifest lists {name[:80]!r}, outside the artifacts folder; refused")
    if not f.is_file():
        raise ArtifactError(f"artifact file {name!r} listed in the manifest is missing")
    st = f.stat()
    if st.st_size > MAX_ARTIFACT_BYTES:
        raise ArtifactError(f"artifact file {name!r} is larger than {MAX_ARTIFACT_BYTES} bytes")
    return f, st


def _verified(path: Path, files: dict) -> dict[str, bytes]:
    """Read every listed file (confined to ``path``), checking its size and sha256."""
    root = path.resolve()
    if len(files) > MAX_FILES:
        raise ArtifactError(f"manifest lists {len(files):,} files; the limit is {MAX_FILES:,}")
    data, seen, total = {}, {}, 0
    for name, digest in files.items():
        if not isinstance(name, str) or not isinstance(digest, str):
            raise ArtifactError(f"manifest entry {name!r}: {digest!r} is not a name and a sha256")
        f, st = _listed(root, name)
        # Another name of a file already read (an alias, a hard link) is read and counted once.
        if (st.st_dev, st.st_ino) not in seen:
            total += st.st_size
            if total > MAX_TOTAL_BYTES:
                raise ArtifactError(f"artifact files exceed {MAX_TOTAL_BYTES:,} bytes in all")
            with open(f, "rb") as fh:  # bounded even if the file grew since stat
                blob = fh.read(st.st_size + 1)
            seen[(st.st_dev, st.st_ino)] = blob, hashlib.sha256(blob).hexdigest()
        blob, actual = seen[(st.st_dev, st.st_ino)]
        if len(blob) > st.st_size or actual != digest:
            raise ArtifactError(
                f"artifact file {name!r} does not match its sha256 in the manifest; "
                "retrain or restore the artifacts"
            )
        data[name] = blob
    return data


def _array_digests(manifest: dict) -> dict | None:
    """The manifest's per-array digests of ``arrays.npz``; None where it has none (written
    before per-array digests), and the whole file is then read and checked against its sha256."""
    section = manifest.get("arrays")
    if section is None or ARRAYS not in manifest["files"]:
        return None
    keys = {"size": int, "crc32": int, "sha256": str}
    if not isinstance(section, dict) or not all(
        isinstance(n, str)
        and isinstance(d, dict)
        and all(isinstance(d.get(k), t) for k, t in keys.items())
        for n, d in section.items()
    ):
        raise ArtifactError(
            "manifest.json: 'arrays' must map each array of arrays.npz to its size, crc32 and "
            "sha256"
        )
    return section


def _unlisted(path: Path, files: dict) -> tuple:
    listed = {str(Path(f)) for f in files} | {"manifest.json"}
    on_disk = (str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    return tuple(sorted(f for f in on_disk if f not in listed))


#: Reads of a folder swapped by a retrain while it was being read, before giving up.
SWAP_RETRIES = 3


def _read_consistent(path: Path) -> tuple[dict, dict[str, bytes], Mapping | None]:
    """The manifest, every file it lists and, where the manifest has per-array digests, the
    arrays of ``arrays.npz`` (its members checked, their bytes read when used), from one
    version of the folder.

    ``train --out`` swaps a new folder in while a load may be reading the old one: the manifest
    read before the swap and a file read after it then disagree, though nothing is corrupt.
    When a file does not match (or is gone) and the manifest changed meanwhile, the folder was
    swapped: it is read again (up to :data:`SWAP_RETRIES` times). A mismatch under an unchanged
    manifest is corruption, refused at once.
    """
    for attempt in range(SWAP_RETRIES + 1):
        manifest = _read_manifest(path)
        try:
            digests = _array_digests(manifest)
            files = manifest["files"]
            if digests is None:
                return manifest, _verified(path, files), None
            blobs = _verified(path, {k: v for k, v in files.items() if k != ARRAYS})
            return manifest, blobs, open_npz_artifact(_listed(path.resolve(), ARRAYS)[0], digests)
        except ArtifactError:
            try:
                swapped = _read_manifest(path) != manifest
            except ArtifactError:  # the folder is mid-swap (no manifest for a moment)
                swapped = True
            if not swapped or attempt == SWAP_RETRIES:
                raise
            time.sleep(0.05 * (attempt + 1))  # let the swap's second rename land
    raise AssertionError("unreachable")  # pragma: no cover


def artifacts_path(path=None) -> Path:
    """``path``, else ``$PROFET_ARTIFACTS``, else the project's ``artifacts/``.

    Raises
    ------
    ArtifactError
        ``path`` is an empty string (never read as "the default").
    """
    if isinstance(path, str | bytes) and len(path) == 0:
        raise ArtifactError("artifacts folder path is empty; give a folder or leave it out")
    return Path(path or os.environ.get("PROFET_ARTIFACTS") or DEFAULT_ARTIFACTS)


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
    from ..models._intervals import INTERVAL_COLUMNS

    path = artifacts_path(path)
    manifest, blobs, arrays = _read_consistent(path)
    files = manifest["files"]
    prices = (
        OLD_PRICES_FILE if OLD_PRICES_FILE in files and PRICES_FILE not in files else PRICES_FILE
    )
    missing = [f for f in REQUIRED_FILES if f not in files and f != PRICES_FILE]
    missing += [prices] if prices not in files else []
    if missing:
        raise ArtifactError(f"manifest does not list {missing}")
    return Bundle(
        path=path,
        manifest={k: v for k, v in manifest.items() if k not in ("files", "arrays")},
        model=read_json_artifact(blobs, "model.json"),
        arrays=read_npz_artifact(blobs[ARRAYS]) if arrays is None else arrays,
        intervals=read_csv_artifact(blobs, "intervals.csv", INTERVAL_COLUMNS),
        catalog=read_csv_artifact(blobs, prices, ("instance", "gpu", "usd_per_hour")),
        examples=read_json_artifact(blobs, "examples.json") if "examples.json" in blobs else {},
        validation_files={k: v for k, v in blobs.items() if k.startswith("validation/")},
        ignored_files=_unlisted(path, files),
    )
