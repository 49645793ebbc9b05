"""A load that races a retrain's folder swap: the manifest read before the swap and
the files read after it once failed "does not match its sha256" though nothing was corrupt."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from profet_core import ArtifactError
from profet_core.prediction import _store
from tests._utils import ROOT


def _two_versions(tmp_path):
    """``art`` (the shipped artifacts) and ``new`` (the same with another price, re-manifested)."""
    art, new = tmp_path / "art", tmp_path / "new"
    shutil.copytree(ROOT / "artifacts", art)
    shutil.copytree(art, new)
    prices = (new / "prices.csv").read_text().splitlines()
    first = prices[1].split(",")
    first[-1] = str(float(first[-1]) + 0.01) if first[-1] else "1.0"
    (new / "prices.csv").write_text("\n".join([prices[0], ",".join(first), *prices[2:]]) + "\n")
    manifest = json.loads((art / "manifest.json").read_text())
    meta = {
        k: v for k, v in manifest.items() if k not in ("files", "format", "created", "versions")
    }
    (new / "manifest.json").unlink()
    _store.write_manifest(new, **meta)
    return art, new


def _swap_during_first_read(monkeypatch, art, new, step="_verified"):
    """The first call of the load's ``step`` (by default: reading the files) finds the new
    folder swapped in (as `train --out` does)."""
    original, calls = getattr(_store, step), []

    def racing(*args):
        if not calls:
            os.rename(art, art.with_name("old"))
            os.rename(new, art)
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(_store, step, racing)
    return calls


def test_a_load_racing_a_swap_reads_the_new_folder(tmp_path, monkeypatch):
    art, new = _two_versions(tmp_path)
    want = json.loads((new / "manifest.json").read_text())["files"]["prices.csv"]
    calls = _swap_during_first_read(monkeypatch, art, new)
    bundle = _store.load_bundle(art)
    assert len(calls) == 2
    got = bundle.catalog
    assert want == json.loads((art / "manifest.json").read_text())["files"]["prices.csv"]
    assert len(got) > 0


def test_real_corruption_is_still_refused(tmp_path):
    art, _ = _two_versions(tmp_path)
    (art / "prices.csv").write_text("instance,gpu,usd_per_hour\nx,y,1\n")
    with pytest.raises(ArtifactError, match="does not match its sha256"):
        _store.load_bundle(art)


def test_a_load_racing_a_swap_of_the_arrays_reads_the_new_folder(trained, tmp_path, monkeypatch):
    """The folder is swapped between the other files' check and the arrays' opening (each
    array checked when read): the zip is not the manifest's, the manifest changed, so the
    folder is read again, all new."""
    art, new = tmp_path / "art", tmp_path / "new"
    shutil.copytree(trained, art)
    shutil.copytree(art, new)
    with np.load(new / "arrays.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    key = next(k for k, v in arrays.items() if v.dtype.kind == "f" and v.size)
    arrays[key] = arrays[key] * 2.0 + 1.0
    np.savez_compressed(new / "arrays.npz", **arrays)
    meta = json.loads((art / "manifest.json").read_text())
    (new / "manifest.json").unlink()
    _store.write_manifest(new, **{k: meta[k] for k in ("data_fingerprint",) if k in meta})
    calls = _swap_during_first_read(monkeypatch, art, new, step="open_npz_artifact")
    bundle = _store.load_bundle(art)
    assert len(calls) == 2
    np.testing.assert_array_equal(bundle.arrays[key], arrays[key])
