"""Each array of ``arrays.npz`` carries its own digests in the manifest: a load reads
the zip's directory only and each array when first used, checked then, so a prediction no longer
reads and hashes the whole 31 MB file; a file swapped, re-zipped or edited is still refused."""

from __future__ import annotations

import io
import json
import shutil
import zipfile

import numpy as np
import pandas as pd
import pytest

from profet_core import ArtifactError, load_artifacts
from profet_core.prediction import _store
from profet_core.prediction._readers import _npy_array, npz_digests


@pytest.fixture
def art(trained, tmp_path):
    out = tmp_path / "art"
    shutil.copytree(trained, out)
    return out


def _manifest(art) -> dict:
    return json.loads((art / "manifest.json").read_text())


def _write_manifest(art, manifest) -> None:
    (art / "manifest.json").write_text(json.dumps(manifest))


def _largest_member(art) -> zipfile.ZipInfo:
    with zipfile.ZipFile(art / "arrays.npz") as z:
        return max(z.infolist(), key=lambda i: i.compress_size)


def _flip_a_byte_of(art, info: zipfile.ZipInfo) -> None:
    """Flip one byte inside ``info``'s compressed data; the zip's directory stays as it was."""
    data = bytearray((art / "arrays.npz").read_bytes())
    h = info.header_offset  # the local header: name and extra lengths at 26 and 28, data at 30
    name_len, extra_len = (int.from_bytes(data[h + o : h + o + 2], "little") for o in (26, 28))
    data[h + 30 + name_len + extra_len + info.compress_size // 2] ^= 0xFF
    (art / "arrays.npz").write_bytes(bytes(data))


def test_train_records_every_array_with_its_digests(trained):
    manifest = _manifest(trained)
    with zipfile.ZipFile(trained / "arrays.npz") as z:
        assert set(manifest["arrays"]) == set(z.namelist())
    assert manifest["arrays"] == npz_digests(trained / "arrays.npz")
    assert "arrays" not in load_artifacts(trained).bundle.manifest  # metadata only


def test_every_array_reads_as_numpy_reads_it(trained):
    arrays = load_artifacts(trained).bundle.arrays
    with np.load(trained / "arrays.npz", allow_pickle=False) as npz:
        assert sorted(arrays) == sorted(npz.files)
        for k in npz.files:
            got = arrays[k]
            assert got.dtype == npz[k].dtype and got.flags.writeable
            np.testing.assert_array_equal(got, npz[k])


@pytest.mark.parametrize(
    "arr",
    [
        np.zeros((0, 3)),
        np.array(5.0),
        np.asfortranarray(np.arange(12.0).reshape(3, 4)),
        np.arange(6, dtype=">i4").reshape(2, 3),
    ],
    ids=["empty", "0-d", "fortran-order", "big-endian"],
)
def test_npy_bytes_read_as_numpy_writes_them(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    got = _npy_array(bytearray(buf.getvalue()))
    assert got.shape == arr.shape and got.dtype == arr.dtype
    np.testing.assert_array_equal(got, arr)


def test_an_edited_array_loads_but_is_refused_when_read(art):
    """The load no longer reads the whole file: a flipped byte is found when its array is read,
    and the other arrays still read."""
    info = _largest_member(art)
    _flip_a_byte_of(art, info)
    arrays = load_artifacts(art).bundle.arrays
    key = info.filename[: -len(".npy")]
    with pytest.raises(ArtifactError, match=r"arrays.npz: array .* (malformed|does not match)"):
        arrays[key]
    assert all(arrays[k] is not None for k in list(arrays)[:20] if k != key)


def test_an_array_rezipped_with_its_crc_is_refused_by_its_sha256(art):
    """A careful edit (a new zip, the files' sha256 and each member's size and CRC-32 updated)
    is still refused: the array's sha256 is the manifest's."""
    with np.load(art / "arrays.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    key = next(k for k, v in arrays.items() if v.dtype.kind == "f" and v.size)
    arrays[key] = arrays[key] + 1.0
    np.savez_compressed(art / "arrays.npz", **arrays)
    manifest = _manifest(art)
    fresh = npz_digests(art / "arrays.npz")
    for name, d in manifest["arrays"].items():
        d.update(size=fresh[name]["size"], crc32=fresh[name]["crc32"])
    manifest["files"]["arrays.npz"] = _store.sha256(art / "arrays.npz")
    _write_manifest(art, manifest)
    loaded = load_artifacts(art).bundle.arrays
    with pytest.raises(ArtifactError, match=f"array {key[:80]!r} does not match its sha256"):
        loaded[key]


@pytest.mark.parametrize(
    "edit",
    ["member-missing", "crc-differs", "size-differs"],
)
def test_a_zip_that_is_not_the_manifests_is_refused_at_load(art, edit):
    manifest = _manifest(art)
    name = next(iter(manifest["arrays"]))
    if edit == "member-missing":
        manifest["arrays"]["extra.npy"] = dict(manifest["arrays"][name])
    else:
        field = {"crc-differs": "crc32", "size-differs": "size"}[edit]
        manifest["arrays"][name][field] += 1
    _write_manifest(art, manifest)
    with pytest.raises(ArtifactError, match="does not match the arrays listed in the manifest"):
        load_artifacts(art)


@pytest.mark.parametrize(
    "section",
    [[], {"x.npy": "abc"}, {"x.npy": {"size": 1, "crc32": 2}}],
    ids=["list", "digest-only", "no-sha256"],
)
def test_a_malformed_arrays_section_is_refused(art, section):
    manifest = _manifest(art)
    manifest["arrays"] = section
    _write_manifest(art, manifest)
    with pytest.raises(ArtifactError, match="'arrays' must map each array"):
        load_artifacts(art)


def test_a_manifest_without_array_digests_checks_the_whole_file_at_load(art):
    """Artifacts written before the digests still load, their file checked as a whole."""
    manifest = _manifest(art)
    del manifest["arrays"]
    _write_manifest(art, manifest)
    loaded = load_artifacts(art)
    assert sorted(f"{k}.npy" for k in loaded.bundle.arrays) == sorted(
        npz_digests(art / "arrays.npz")
    )
    _flip_a_byte_of(art, _largest_member(art))
    with pytest.raises(ArtifactError, match="'arrays.npz' does not match its sha256"):
        load_artifacts(art)


def test_a_loaded_predictor_keeps_its_arrays_when_the_folder_is_replaced(art, tmp_path):
    """The arrays file stays open: a retrain swapping the folder after the load cannot mix two
    versions into one predictor (its arrays are read from the file it loaded)."""
    p = load_artifacts(art)
    profile = pd.DataFrame([p.bundle.examples[p.instances[0]]["profile"]])
    shutil.rmtree(art)
    art.mkdir()
    got = p.predict(p.instances[0], profile)
    assert len(got.table) > 0


def test_arrays_read_from_many_threads_at_once_are_each_right(trained):
    """The app's sessions share one predictor, so arrays are read from one open file by many
    threads at once."""
    from concurrent.futures import ThreadPoolExecutor

    arrays = load_artifacts(trained).bundle.arrays
    with np.load(trained / "arrays.npz", allow_pickle=False) as npz:
        want = {k: npz[k] for k in npz.files}

    def read_all(i):
        keys = list(want)[i % 3 :: 1 + i % 2]
        return all(np.array_equal(arrays[k], want[k], equal_nan=True) for k in keys)

    with ThreadPoolExecutor(6) as pool:
        assert all(pool.map(read_all, range(12)))
