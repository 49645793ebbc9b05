"""Artifacts that are consistently re-hashed but broken, or whose manifest points outside the
folder, are refused with an ArtifactError naming the problem; the CLI exits 2."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile

import numpy as np
import pytest

from profet_core import ArtifactError, load_artifacts
from profet_core.cli._main import main
from profet_core.prediction._readers import npz_digests


def _rehash(art) -> None:
    """Rewrite the manifest's sha256 of every listed file and of every array, as a careful
    tamperer would."""
    manifest = json.loads((art / "manifest.json").read_text())
    for name in manifest["files"]:
        manifest["files"][name] = hashlib.sha256((art / name).read_bytes()).hexdigest()
    if zipfile.is_zipfile(art / "arrays.npz"):
        manifest["arrays"] = npz_digests(art / "arrays.npz")
    (art / "manifest.json").write_text(json.dumps(manifest))


def _object_npz(art):
    buf = io.BytesIO()
    np.savez(buf, x=np.array([{"a": 1}], dtype=object))
    (art / "arrays.npz").write_bytes(buf.getvalue())


def _truncated_npz(art):
    data = (art / "arrays.npz").read_bytes()
    (art / "arrays.npz").write_bytes(data[: len(data) // 3])


def _no_models_key(art):
    model = json.loads((art / "model.json").read_text())
    del model["models"]
    (art / "model.json").write_text(json.dumps(model))


def _files_as_list(art):
    manifest = json.loads((art / "manifest.json").read_text())
    manifest["files"] = list(manifest["files"])
    (art / "manifest.json").write_text(json.dumps(manifest))


def _garbage_intervals(art):
    (art / "intervals.csv").write_text('\x00\x01garbage,,,\n"unterminated')


def _npz_missing_arrays(art):
    with zipfile.ZipFile(art / "arrays.npz", "w") as z:
        z.writestr("nothing.npy", b"")


BROKEN = {
    "object-array-npz": (_object_npz, "malformed"),
    "truncated-npz": (_truncated_npz, "arrays.npz"),
    "missing-models-key": (_no_models_key, "models"),
    "manifest-files-list": (_files_as_list, "files"),
    "garbage-intervals": (_garbage_intervals, "intervals.csv"),
    "npz-without-arrays": (_npz_missing_arrays, "malformed|arrays"),
}


@pytest.fixture
def copy(trained, tmp_path):
    art = tmp_path / "art"
    shutil.copytree(trained, art)
    return art


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_rehashed_broken_artifacts_raise_artifact_error(copy, case, capsys):
    breaker, match = BROKEN[case]
    breaker(copy)
    if case != "manifest-files-list":
        _rehash(copy)
    with pytest.raises(ArtifactError, match=match):
        # Loading and one prediction: a lazily built model fails just as clearly.
        p = load_artifacts(copy)
        p.predict(p.instances[0], __import__("pandas").DataFrame([{"Device_Conv2D": 5.0}]))
    code = main(
        ["predict", "--anchor", "gpu-a", "--profile", "/dev/null", "--artifacts", str(copy)]
    )
    assert code == 2 and capsys.readouterr().err.startswith("profet: error: ")


def test_manifest_paths_are_confined_to_the_folder(copy, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("not an artifact")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"]["../secret.txt"] = hashlib.sha256(outside.read_bytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="outside the artifacts folder"):
        load_artifacts(copy)


def test_unlisted_files_are_ignored_and_said(copy):
    (copy / "extra.json").write_text("{}")
    p = load_artifacts(copy)
    assert p.bundle.ignored_files == ("extra.json",)


def test_validation_tables_parsed_one_by_one_on_first_use():
    """A prediction reads the novelty bands only (the first predict of a process
    parsed every table); a table that cannot be read is refused when it is asked for."""
    from pathlib import Path

    import pandas as pd

    from profet_core.prediction._store import Bundle

    files = {
        "validation/novelty.csv": b"estimator,with_latency,novelty_lo,novelty_hi\nhybrid,True,0,1\n",
        "validation/metrics.csv": b"\xff\xfe not a table",
        "validation/predictions.csv.gz": b"not gzip",
    }
    empty = pd.DataFrame()
    bundle = Bundle(Path("."), {}, {}, {}, empty, empty, validation_files=files)
    tables = bundle.read_validation()
    assert list(tables) == ["metrics", "novelty", "predictions"] and "fits" not in tables
    assert tables["novelty"]["with_latency"].tolist() == [True]
    assert tables["novelty"] is tables["novelty"]  # parsed once
    with pytest.raises(ArtifactError, match="predictions.csv.gz is unreadable"):
        tables["predictions"]
    with pytest.raises(KeyError):
        tables["fits"]
