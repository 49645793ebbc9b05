"""The cross-instance model inside trained artifacts: every catalog GPU is a target (with its
basis), a spec-only GPU can be the anchor, and ``profet add-instance`` teaches one from a few runs."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts, load_dataset, make_dataset
from profet_core.cli._main import main
from tests.core.crossgpu._utils import MEASURED, make_multi_gpu, spec_table, train_cross


@pytest.fixture(scope="module")
def tables():
    return make_multi_gpu(n_arch=5)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory, tables):
    return train_cross(*tables, tmp_path_factory.mktemp("cross") / "artifacts", trees=(20, 40))


def _profile(tables, instance="gpu-a", row=0):
    prof = tables[0]
    ops = [c for c in prof.columns if c.startswith(("Host_", "Device_"))]
    return prof[prof["instance"] == instance].iloc[[row]][ops].reset_index(drop=True)


def test_every_catalog_gpu_is_a_target_with_its_basis(artifacts, tables):
    p = load_artifacts(artifacts)
    assert p.instances == MEASURED
    assert p.all_instances == [*MEASURED, "gpu-d", "gpu-e"]
    table = p.predict("gpu-a", _profile(tables), anchor_latency_s=0.01).table.set_index("target")
    assert list(table.index) == ["gpu-b", "gpu-c", "gpu-d", "gpu-e"]
    assert table.loc[["gpu-b", "gpu-c"], "basis"].eq("measured").all()
    assert table.loc[["gpu-d", "gpu-e"], "basis"].eq("specs only").all()
    assert (table["batch_latency_ms"] > 0).all()
    # gpu-e has ~2x the peak FLOPS and bandwidth of gpu-c: the spec model must see it faster.
    assert table.loc["gpu-e", "batch_latency_ms"] < table.loc["gpu-c", "batch_latency_ms"]


def test_fastest_target_on_specs_only_is_warned_about(artifacts, tables):
    res = load_artifacts(artifacts).predict("gpu-a", _profile(tables), anchor_latency_s=0.01)
    fastest = res.table.loc[res.table["batch_latency_ms"].idxmin()]
    assert fastest["basis"] == "specs only"
    # named by its GPU configuration ("1 x GB-E"; no offering rents these synthetic GPUs)
    assert any(
        f"the fastest target (per step), {fastest['configuration'].lower()}, rests on specs only"
        in w.lower()
        for w in res.warnings()
    )


def test_a_spec_only_gpu_can_be_the_anchor(artifacts, tables):
    res = load_artifacts(artifacts).predict(
        "gpu-d", _profile(tables, "gpu-d"), anchor_latency_s=0.01
    )
    assert set(res.table["target"]) == {*MEASURED, "gpu-e"}
    assert res.table["basis"].eq("specs only").all()


def test_add_instance_from_a_few_runs_rewrites_only_the_cross_model(artifacts, tables, tmp_path):
    import shutil

    art = tmp_path / "art"
    shutil.copytree(artifacts, art)
    prof, lat = tables
    few = prof["model"].isin(["Net0", "Net1"]) & prof["instance"].isin([*MEASURED, "gpu-d"])
    few_lat = lat["model"].isin(["Net0", "Net1"]) & lat["instance"].isin([*MEASURED, "gpu-d"])
    data = tmp_path / "data"
    data.mkdir()
    prof[few].to_parquet(data / "profiles.parquet")
    lat[few_lat].to_parquet(data / "latencies.parquet")
    before = (
        load_artifacts(art)
        .predict("gpu-a", _profile(tables), anchor_latency_s=0.01)
        .table.set_index("target")
    )
    error_before = _error_on_unseen_archs(art, tables)
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            ["add-instance", "--instance", "gpu-d", "--data", str(data), "--artifacts", str(art)]
        )
    assert code == 0, err.getvalue()
    assert "calibrated (12 runs)" in out.getvalue()
    after = (
        load_artifacts(art)
        .predict("gpu-a", _profile(tables), anchor_latency_s=0.01)
        .table.set_index("target")
    )
    # Calibrated on Net0 and Net1, it predicts the other architectures on gpu-d better.
    assert _error_on_unseen_archs(art, tables) < error_before
    assert after.loc["gpu-d", "basis"] == "calibrated (12 runs)"
    assert after.loc["gpu-e", "basis"] == "specs only"
    # The measured pairs are untouched.
    pd.testing.assert_series_equal(
        before.loc[MEASURED[1:], "batch_latency_ms"], after.loc[MEASURED[1:], "batch_latency_ms"]
    )


def _error_on_unseen_archs(art, tables) -> float:
    """Mean |log error| of gpu-a -> gpu-d on the architectures calibration did not see."""
    prof, lat = tables
    ops = [c for c in prof.columns if c.startswith(("Host_", "Device_"))]
    key = ["model", "input_size", "batch_size"]
    a = prof[(prof["instance"] == "gpu-a") & ~prof["model"].isin(["Net0", "Net1"])]
    a = a.merge(lat[lat["instance"] == "gpu-a"][[*key, "batch_latency_s"]], on=key)
    d = a[key].merge(lat[lat["instance"] == "gpu-d"], on=key)
    t = (
        load_artifacts(art)
        .predict("gpu-a", a[ops], anchor_latency_s=a["batch_latency_s"].to_numpy())
        .table
    )
    got = t[t["target"] == "gpu-d"]["batch_latency_ms"].to_numpy() / 1000
    return float(np.mean(np.abs(np.log(got / d["batch_latency_s"].to_numpy()))))


def test_add_instance_refuses_a_measured_instance_and_keeps_the_artifacts(
    artifacts, tmp_path, capsys
):
    before = (artifacts / "manifest.json").read_bytes()
    code = main(
        [
            "add-instance",
            "--instance",
            "gpu-a",
            "--data",
            str(tmp_path / "none"),
            "--artifacts",
            str(artifacts),
        ]
    )
    assert code == 2 and capsys.readouterr().err.startswith("profet: error: ")
    assert (artifacts / "manifest.json").read_bytes() == before


@pytest.mark.slow
def test_validate_cross_reports_each_left_out_gpu(tables, tmp_path, capsys):
    prof, lat = tables
    data = tmp_path / "data"
    data.mkdir()
    prof.to_parquet(data / "profiles.parquet")
    lat.to_parquet(data / "latencies.parquet")
    spec_table().to_csv(tmp_path / "specs.csv", index=False)
    code = main(
        [
            "validate",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "val"),
            "--methods",
            "hybrid",
            "--anchors",
            "gpu-a",
            "--targets",
            "gpu-b",
            "--architectures",
            "Net0",
            "--cross",
            "--specs",
            str(tmp_path / "specs.csv"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(tmp_path / "val" / "crossgpu.csv")
    assert set(table["basis"]) == {"specs only", "calibrated", "measured"}
    left = set(table.loc[table["basis"] == "specs only", "left_out"]) - {"all"}
    assert left == {"gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e"}
    assert "GPUs left out" in capsys.readouterr().out


def test_one_gpu_of_a_multi_gpu_instance_is_said_and_priced_whole(artifacts, tables):
    """A target with 8 GPUs is predicted for one GPU, costed at the instance's price,
    and the prediction says so."""
    catalog = pd.DataFrame(
        {"instance": ["gpu-e"], "gpu": ["GPU gpu-e"], "usd_per_hour": [80.0], "gpu_count": [8]}
    )
    res = (
        load_artifacts(artifacts)
        .with_catalog(catalog)
        .predict("gpu-a", _profile(tables), anchor_latency_s=0.01)
    )
    row = res.table.set_index("target").loc["gpu-e"]
    assert row["usd_per_hour"] == 80.0
    assert row["usd_per_1000_steps"] == pytest.approx(row["batch_latency_ms"] * 80.0 / 3600)
    notes = [w for w in res.warnings() if "gpu-e (8 GPUs)" in w]
    assert len(notes) == 1 and "whole instance" in notes[0]
    plain = load_artifacts(artifacts).predict("gpu-a", _profile(tables), anchor_latency_s=0.01)
    assert not any("GPUs)" in w for w in plain.warnings())
    path = artifacts.parent / "eight.csv"
    catalog.to_csv(path, index=False)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert (
            main(["instances", "--targets", "--artifacts", str(artifacts), "--catalog", str(path)])
            == 0
        )
    header, *lines = buf.getvalue().splitlines()
    assert header.split()[:3] == ["instance", "gpu", "gpus"]
    assert next(x for x in lines if x.split()[0] == "gpu-e").split()[3] == "8"


def test_add_instance_refuses_data_of_another_convention(artifacts, tables, tmp_path, capsys):
    """The manifest records the training data's convention; calibration data taken
    otherwise is refused in one line naming both, the artifacts untouched. A manifest without
    the field (older artifacts) counts as profet-2021."""
    import json
    import shutil

    from profet_core.errors import ProfetValueError
    from profet_core.inputs._convention import CONVENTION, CONVENTION_FILE
    from profet_core.training._add_instance import check_convention

    manifest = json.loads((artifacts / "manifest.json").read_text())
    assert (manifest["convention"], manifest["zoo"]) == (CONVENTION, CONVENTION)
    art = tmp_path / "art"
    shutil.copytree(artifacts, art)
    prof, lat = tables
    data = tmp_path / "data"
    data.mkdir()
    prof[prof["instance"] == "gpu-d"].to_parquet(data / "profiles.parquet")
    lat[lat["instance"] == "gpu-d"].to_parquet(data / "latencies.parquet")
    (data / CONVENTION_FILE).write_text(json.dumps({"convention": "keras3-xla", "zoo": "z9"}))
    before = (art / "manifest.json").read_bytes()
    argv = ["add-instance", "--instance", "gpu-d", "--data", str(data), "--artifacts", str(art)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'keras3-xla'" in err[0] and f"{CONVENTION!r}" in err[0]
    assert (art / "manifest.json").read_bytes() == before
    old = {k: v for k, v in manifest.items() if k not in ("convention", "zoo")}
    ours = make_dataset(prof[prof["instance"] == "gpu-d"], lat[lat["instance"] == "gpu-d"])
    check_convention(old, ours)  # an older manifest: profet-2021, accepted
    with pytest.raises(ProfetValueError, match="convention 'keras3-xla'.*trained on convention"):
        check_convention(old, load_dataset(data))


def _few_runs_folder(tables, folder):
    """gpu-d's (and the measured GPUs') rows of Net0 and Net1, as a dataset folder."""
    prof, lat = tables
    for name, table in (("profiles", prof), ("latencies", lat)):
        few = table["model"].isin(["Net0", "Net1"]) & table["instance"].isin([*MEASURED, "gpu-d"])
        folder.mkdir(exist_ok=True)
        table[few].to_parquet(folder / f"{name}.parquet")
    return folder


def test_calibrate_is_the_old_name_of_add_instance_and_says_so(artifacts, tables, tmp_path):
    import contextlib
    import shutil

    data = _few_runs_folder(tables, tmp_path / "data")
    results = {}
    for command in ("add-instance", "calibrate"):
        art = tmp_path / command
        shutil.copytree(artifacts, art)
        out, err = io.StringIO(), io.StringIO()
        argv = [command, "--instance", "gpu-d", "--data", str(data), "--artifacts", str(art)]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        results[command] = code, out.getvalue(), err.getvalue()
        assert load_artifacts(art).cross.basis("gpu-d") == "calibrated (12 runs)"
    assert results["add-instance"] == (
        0,
        "gpu-d: predictions now rest on calibrated (12 runs)\n",
        "",
    )
    assert results["calibrate"] == (
        0,
        results["add-instance"][1],
        "profet: warning: 'profet calibrate' is now 'profet add-instance'; the old name goes in "
        "the next release\n",
    )


def test_add_instance_in_python_takes_a_dataset_or_folders(artifacts, tables, tmp_path):
    import shutil

    from profet_core import add_instance

    data = _few_runs_folder(tables, tmp_path / "data")
    for how, given in (("dataset", load_dataset(data)), ("folders", [data])):
        art = tmp_path / how
        shutil.copytree(artifacts, art)
        assert add_instance(art, "gpu-d", given) == "calibrated (12 runs)"
