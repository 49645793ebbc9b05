"""Artifacts whatever their bytes, a consistent re-hash included: loading is bounded in
time and memory, and a malformed model is one ``profet: error:`` line, never a hang, a segfault
or a NaN latency. Predictions run in a subprocess, so a crash fails the test instead of pytest."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profet_core import ArtifactError, load_artifacts
from profet_core.prediction._readers import npz_digests
from tests._cli import run_cli
from tests._utils import ROOT

PAIR = "gpu-a->gpu-b"


def _rehash(art: Path, extra: dict | None = None) -> None:
    manifest = json.loads((art / "manifest.json").read_text())
    files = {
        name: hashlib.sha256((art / name).read_bytes()).hexdigest() for name in manifest["files"]
    }
    manifest["files"] = {**files, **(extra or {})}
    if zipfile.is_zipfile(art / "arrays.npz"):  # and each array's digests, as carefully
        manifest["arrays"] = npz_digests(art / "arrays.npz")
    (art / "manifest.json").write_text(json.dumps(manifest))


def _edit_arrays(art: Path, edit) -> None:
    with np.load(art / "arrays.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    edit(arrays)
    np.savez_compressed(art / "arrays.npz", **arrays)


def _edit_model(art: Path, edit) -> None:
    model = json.loads((art / "model.json").read_text())
    edit(model)
    (art / "model.json").write_text(json.dumps(model))


@pytest.fixture
def art(trained, tmp_path) -> Path:
    out = tmp_path / "art"
    shutil.copytree(trained, out)
    return out


@pytest.fixture
def art_all(trained_all, tmp_path) -> Path:
    """A copy of the artifacts with every method (the reference's DNN: TensorFlow to train)."""
    out = tmp_path / "art-all"
    shutil.copytree(trained_all, out)
    return out


def _copy_for(request, method: str) -> Path:
    return request.getfixturevalue("art" if method == "hybrid" else "art_all")


@pytest.fixture(scope="module")
def big_profile(tmp_path_factory, synthetic_dataset) -> Path:
    """1,200 rows: enough for the compiled tree walk (scikit-learn's, which trusts indexes)."""
    prof = synthetic_dataset.profiles
    rows = prof[prof["instance"] == "gpu-a"][synthetic_dataset.ops]
    path = tmp_path_factory.mktemp("big") / "profiles.csv"
    rows.sample(1200, replace=True, random_state=0).to_csv(path, index=False)
    return path


def _predict(art: Path, profile: Path, method: str):
    argv = ["predict", "--anchor", "gpu-a", "--profile", profile, "--artifacts", art]
    argv += ["--method", method, "--format", "csv"]
    return run_cli(*argv, env={"PATH": "/usr/bin:/bin"}, cwd=ROOT, timeout=120)


def _tree_key(member: str) -> str:
    return f"{PAIR}|hybrid|True/{member}"


def _cycle(a):  # an inner node's left child points back at the root: a walk never ends
    left = a[_tree_key("extra-trees/left")]
    inner = np.flatnonzero(left != np.arange(len(left)))
    left[inner[1]] = 0


def _two_parents(a):  # an inner node's both children are one node: another node is orphaned
    left, right = a[_tree_key("extra-trees/left")], a[_tree_key("extra-trees/right")]
    inner = np.flatnonzero(left != np.arange(len(left)))
    right[inner[0]] = left[inner[0]]


def _out_of_range(a):
    a[_tree_key("boosting/right")][0] = 10**6


def _feature_past_the_end(a):
    feature, left = a[_tree_key("extra-trees/feature")], a[_tree_key("extra-trees/left")]
    feature[left != np.arange(len(left))] = 10**4


def _nan_weights(a):
    a[f"{PAIR}|profet|dnn/w0"][:] = np.nan


def _transposed_weights(a):
    a[f"{PAIR}|profet|dnn/w0"] = a[f"{PAIR}|profet|dnn/w0"].T.copy()


def _nan_leaf_values(a):
    a[_tree_key("boosting/value")][:] = np.nan


ARRAY_CASES = {
    "tree-cycle": (_cycle, "hybrid", "cycle"),
    "child-out-of-range": (_out_of_range, "hybrid", "outside its tree"),
    "child-of-two-parents": (_two_parents, "hybrid", "one parent"),
    "feature-out-of-range": (_feature_past_the_end, "hybrid", "feature outside"),
    "nan-leaf-values": (_nan_leaf_values, "hybrid", "NaN"),
    "nan-dnn-weights": (_nan_weights, "profet", "finite"),
    "transposed-dnn-weights": (_transposed_weights, "profet", "shape|width"),
}


@pytest.mark.parametrize(
    "case",
    # the reference's artifacts train its DNN (TensorFlow): the full run's
    [
        pytest.param(c, id=c, marks=[pytest.mark.slow] if ARRAY_CASES[c][1] != "hybrid" else [])
        for c in ARRAY_CASES
    ],
)
def test_tampered_model_arrays_are_one_error_line(case, request, big_profile):
    edit, method, match = ARRAY_CASES[case]
    art = _copy_for(request, method)
    _edit_arrays(art, edit)
    _rehash(art)
    proc = _predict(art, big_profile, method)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.startswith("profet: error: ") and proc.stderr.count("\n") == 1
    assert pytest.importorskip("re").search(match, proc.stderr)


def _huge_depth(model):
    model["models"][f"{PAIR}|hybrid"]["members"]["True/extra-trees"]["depth"] = 10**12


def _bool_y_std(model):
    model["models"][f"{PAIR}|profet"]["dnn"]["y_std"] = True


@pytest.mark.parametrize(
    "edit,method",
    [
        pytest.param(_huge_depth, "hybrid", id="huge-stored-depth-is-not-trusted"),
        pytest.param(_bool_y_std, "profet", id="bool-parameter", marks=pytest.mark.slow),
    ],
)
def test_tampered_model_parameters(edit, method, request, big_profile):
    art = _copy_for(request, method)
    _edit_model(art, edit)
    _rehash(art)
    proc = _predict(art, big_profile, method)
    if edit is _bool_y_std:
        assert proc.returncode == 2 and "y_std_" in proc.stderr and proc.stderr.count("\n") == 1
    else:  # the depth comes from the arrays: the stored one neither hangs nor matters
        assert proc.returncode == 0, proc.stderr


def _npy_declaring(shape) -> bytes:
    buf = io.BytesIO()
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + b"\0" * 80


def test_npz_members_are_checked_before_decompressing(art):
    """Every member claims 80 GB; none is allocated."""
    with zipfile.ZipFile(art / "arrays.npz") as z:
        names = z.namelist()
    with zipfile.ZipFile(art / "arrays.npz", "w", zipfile.ZIP_DEFLATED) as z:
        for name in names:
            z.writestr(name, _npy_declaring((10**10,)))
    _rehash(art)
    with pytest.raises(ArtifactError, match="declares 80,000,000,000 bytes"):
        p = load_artifacts(art)
        p.predict("gpu-a", pd.DataFrame([p.bundle.examples["gpu-a"]["profile"]]))


def test_npz_decompressed_total_is_bounded(art):
    from profet_core.prediction._readers import MAX_ARRAY_BYTES, NpzArrays

    with zipfile.ZipFile(art / "arrays.npz") as zf:
        size = sum(i.file_size for i in zf.infolist())
        assert len(NpzArrays(zf, max_bytes=size)) and size < MAX_ARRAY_BYTES
        with pytest.raises(ArtifactError, match=f"decompresses to {size:,} bytes; the limit is"):
            NpzArrays(zf, max_bytes=size - 1)


def test_a_non_zip_npz_is_not_called_pickled(art):
    (art / "arrays.npz").write_bytes(b"\x80\x04this is not a zip archive")
    _rehash(art)
    with pytest.raises(ArtifactError, match="not a zip archive") as info:
        load_artifacts(art)
    assert "pickle" not in str(info.value)


def test_manifest_aliases_of_one_file_are_read_once(art):
    aliases = {f"{'./' * i}arrays.npz": None for i in range(1, 41)}
    aliases.update({f"validation/../{'./' * i}arrays.npz": None for i in range(1, 41)})
    digest = hashlib.sha256((art / "arrays.npz").read_bytes()).hexdigest()
    _rehash(art, {name: digest for name in aliases})
    size = (art / "arrays.npz").stat().st_size
    tracemalloc.start()
    try:
        load_artifacts(art)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * size + 20_000_000  # 81 names of one file: one copy in memory


def test_a_manifest_listing_too_many_files_is_refused(art):
    digest = hashlib.sha256((art / "model.json").read_bytes()).hexdigest()
    names = {f"sub{i}/../model.json": digest for i in range(5000)}
    _rehash(art, names)
    with pytest.raises(ArtifactError, match="the limit is"):
        load_artifacts(art)
