"""``profet collect`` on CPU: shared schema, kill + resume, failures recorded, train on it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from profet_core._schema import KEY
from profet_core.cli._main import main
from profet_core.errors import ProfetValueError
from tests._utils import make_synthetic, synthetic_catalog
from tests.core.capture._utils import requires_tf

pytestmark = requires_tf
ROOT = Path(__file__).resolve().parents[3]
# Two workloads (two CNNs, one batch size): enough for a kill after the first and a resume.
# Each runs in its own TensorFlow process (about 15 CPU-s with TensorFlow's import), so every
# workload more costs that (the grid over sizes and batches: tests/core/capture/test_zoo_data.py).
GRID = ["--models", "LeNet5", "MNIST_CNN", "--input-sizes", "32"]
GRID += ["--batch-sizes", "16", "--steps-per-epoch", "3", "--latency-steps", "5"]
N_WORKLOADS = 2


def _status(d: Path) -> pd.DataFrame:
    path = d / "status.csv"
    return pd.read_csv(path) if path.is_file() else pd.DataFrame()


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """Start a collect, kill it after its first finished workload, then resume it."""
    d = tmp_path_factory.mktemp("collected")
    cmd = [sys.executable, "-m", "profet_core", "collect", "--instance", "cpu-box"]
    cmd += ["--out", str(d), *GRID]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(_status(d)) < 1 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the collect and its worker, mid-campaign
    proc.wait()
    before = len(_status(d))
    assert 1 <= before < N_WORKLOADS
    argv = ["collect", "--instance", "cpu-box", "--out", str(d), *GRID]
    assert main([*argv, "--gpu", "CPU", "--usd-per-hour", "0.05"]) == 0
    return d, before


@pytest.mark.slow
def test_tables_in_the_shared_schema_without_duplicates(collected):
    d, _ = collected
    prof = pd.read_parquet(d / "profiles.parquet")
    lat = pd.read_parquet(d / "latencies.parquet")
    kind = ["model_kind", "seq_len", "vocab_size"]  # cnn, empty, empty: no token sequences
    assert list(lat.columns) == [*KEY, "batch_latency_s", "epoch_latency_s", *kind]
    assert set(lat["model_kind"]) == {"cnn"} and lat[kind[1:]].isna().all().all()
    ops = list(prof.columns[len(KEY) :])
    assert list(prof.columns[: len(KEY)]) == list(KEY) and ops == sorted(ops)
    assert all(c.startswith(("Host_", "Device_")) for c in ops)
    for df in (prof, lat):
        assert len(df) == N_WORKLOADS and not df.duplicated(list(KEY)).any()
        assert set(df["model"]) == {"LeNet5", "MNIST_CNN"} and set(df["exp"]) == {"exp01"}
    assert (lat["batch_latency_s"] > 0).all() and (prof[ops] >= 0).all().all()
    status = _status(d)
    assert len(status) == N_WORKLOADS and (status["status"] == "ok").all()
    catalog = pd.read_csv(d / "instances.csv")
    assert catalog.to_dict("records") == [
        {"instance": "cpu-box", "gpu": "CPU", "usd_per_hour": 0.05}
    ]


@pytest.mark.slow
def test_resume_skips_what_is_done(collected, capsys):
    d, _ = collected
    assert main(["collect", "--instance", "cpu-box", "--out", str(d), *GRID]) == 0
    assert "0 workloads, 0 failed" in capsys.readouterr().out
    assert len(_status(d)) == N_WORKLOADS


def _digest(d: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


@pytest.mark.slow
def test_a_failing_model_is_recorded_and_nothing_is_lost(collected, tmp_path):
    d, _ = collected
    bad = tmp_path / "Exploding.py"
    bad.write_text("def build_model(input_shape, classes):\n    raise MemoryError('boom')\n")
    kept = pd.read_parquet(d / "profiles.parquet")
    argv = ["collect", "--instance", "cpu-box", "--out", str(d), "--models", str(bad)]
    assert main([*argv, "--input-sizes", "32", "--batch-sizes", "16"]) == 0
    row = _status(d).query("model == 'Exploding'").iloc[0]
    assert (row["status"], row["error_kind"]) == ("failed", "oom")
    pd.testing.assert_frame_equal(pd.read_parquet(d / "profiles.parquet"), kept)


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra, match",
    [
        (["--models", "NoSuchNet"], "not in the zoo"),
        (["--models", "missing.py"], "does not exist"),
        (["--models", "LeNet5", "--batch-sizes", "0"], "batch size 0 is not allowed"),
        (["--models", "LeNet5", "--gpu", "X"], "go together"),
    ],
    ids=["unknown-model", "missing-file", "batch-size-0", "gpu-without-price"],
)
def test_bad_input_exits_2_and_keeps_the_data(collected, capsys, extra, match):
    d, _ = collected
    before = _digest(d)
    assert main(["collect", "--instance", "cpu-box", "--out", str(d), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0]
    assert _digest(d) == before


def test_unwritable_out_exits_2(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    argv = ["collect", "--instance", "x", "--out", str(tmp_path / "file" / "d")]
    assert main([*argv, "--models", "LeNet5"]) == 2
    assert "not writable" in capsys.readouterr().err


@pytest.mark.slow
def test_train_on_shared_and_collected_data(collected, tmp_path):
    """The new instance joins the (synthetic stand-in for the) shared data as anchor and target."""
    d, _ = collected
    prof, lat = make_synthetic(n_arch=4, n_exp=2)
    names = {"Net0": "LeNet5", "Net1": "MNIST_CNN"}
    for df in (prof, lat):  # the collected zoo names and exp01 pair with these rows
        df["model"] = df["model"].replace(names)
        df["exp"] = df["exp"].replace({"exp00": "exp01", "exp01": "exp02"})
    shared = tmp_path / "shared"
    shared.mkdir()
    prof.to_parquet(shared / "profiles.parquet")
    lat.to_parquet(shared / "latencies.parquet")
    synthetic_catalog().to_csv(shared / "instances.csv", index=False)
    # Training needs 4 rows per pair: the 2 collected workloads stand in for a second
    # repetition too (exp02), in a copy, rather than 2 more TensorFlow runs in the fixture.
    both = tmp_path / "collected"
    shutil.copytree(d, both)
    for name in ("profiles.parquet", "latencies.parquet"):
        rows = pd.read_parquet(d / name)
        pd.concat([rows, rows.assign(exp="exp02")], ignore_index=True).to_parquet(both / name)
    out = tmp_path / "art"
    argv = ["train", "--data", str(shared), "--data", str(both), "--out", str(out)]
    assert main([*argv, "--methods", "hybrid", "--no-intervals"]) == 0
    from profet_core import load_artifacts

    predictor = load_artifacts(out)
    assert "cpu-box" in predictor.instances
    # A CPU-collected profile has no device time: predicting from it is refused, plainly.
    profile = pd.read_parquet(d / "profiles.parquet").iloc[:1, len(KEY) :]
    with pytest.raises(ProfetValueError, match="predictions need a GPU anchor profile"):
        predictor.predict("cpu-box", profile)
    table = predictor.predict("gpu-a", prof.iloc[:1, len(KEY) :]).table
    assert "cpu-box" in set(table["target"])


@pytest.mark.slow
def test_folder_records_its_convention_and_an_older_one_is_refused(collected, tmp_path, capsys):
    d, _ = collected
    record = json.loads((d / "convention.json").read_text())
    assert (record["convention"], record["zoo"]) == ("profet-2021", "profet-2021")
    assert record["parts"]["optimizer"].startswith("legacy SGD") and not record["parts"]["xla"]
    old = tmp_path / "old"  # collected before conventions were recorded: no convention.json
    old.mkdir()
    for name in ("profiles.parquet", "latencies.parquet", "status.csv"):
        shutil.copy(d / name, old / name)
    argv = ["collect", "--instance", "cpu-box", "--out", str(old), "--models", "LeNet5"]
    assert main(argv) == 2
    assert "collect into a new folder" in capsys.readouterr().err
    assert not (old / "convention.json").exists()
    argv = ["train", "--data", str(d), "--data", str(old), "--out", str(tmp_path / "a")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot join" in err[0] and "unrecorded" in err[0]
