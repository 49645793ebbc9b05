"""``profet collect`` of a text-zoo model on CPU: the same folder as for CNNs, rows that say
"text" and their sequence length, and a rerun that skips what is done. One workload (16 tokens,
batch 16, 2 steps per epoch) in one worker process: the kill-and-resume and failure paths are
the CNN test's (``test_collect.py``), which run the same code."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from profet_core._schema import KEY
from profet_core.cli._main import main
from tests.core.capture._utils import requires_tf

pytestmark = [requires_tf, pytest.mark.slow]
GRID = ["--models", "TextRNN", "--input-sizes", "16", "--batch-sizes", "16"]
GRID += ["--steps-per-epoch", "2", "--latency-steps", "2"]


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    d = tmp_path_factory.mktemp("text-collected")
    assert main(["collect", "--instance", "cpu-box", "--out", str(d), *GRID]) == 0
    return d


def test_text_rows_in_the_shared_schema(collected):
    prof = pd.read_parquet(collected / "profiles.parquet")
    assert list(prof.columns[: len(KEY)]) == list(KEY)  # the op table is the CNNs' schema
    ops = list(prof.columns[len(KEY) :])
    assert ops == sorted(ops) and all(c.startswith(("Host_", "Device_")) for c in ops)
    types = {c.split("_", 1)[1] for c in ops}
    # the embedding and the recurrent loop (matrix products are _MklMatMul where oneDNN is on)
    assert {"ResourceGather", "TensorListFromTensor", "Tanh"} <= types
    row = prof.iloc[0]
    assert (row["model"], row["input_size"], row["batch_size"]) == ("TextRNN", 16, 16)
    lat = pd.read_parquet(collected / "latencies.parquet")
    assert list(lat.columns) == [
        *KEY, "batch_latency_s", "epoch_latency_s", "model_kind", "seq_len", "vocab_size",
    ]  # fmt: skip
    lat_row = lat.iloc[0]
    assert (lat_row["model_kind"], lat_row["seq_len"], lat_row["vocab_size"]) == (
        "text",
        16,
        10_000,
    )
    assert lat_row["batch_latency_s"] > 0
    status = pd.read_csv(collected / "status.csv")
    assert status[["status", "model_kind", "seq_len"]].values.tolist() == [["ok", "text", 16]]
    record = json.loads((collected / "convention.json").read_text())
    assert (record["convention"], record["text_zoo"]) == ("profet-2021", "profet-text-1")


def test_rerun_skips_what_is_done(collected, capsys):
    assert main(["collect", "--instance", "cpu-box", "--out", str(collected), *GRID]) == 0
    assert "0 workloads, 0 failed" in capsys.readouterr().out
    assert len(pd.read_csv(collected / "status.csv")) == 1


def test_another_optimizer_is_another_convention(collected, capsys):
    argv = ["collect", "--instance", "cpu-box", "--out", str(collected), *GRID]
    assert main([*argv, "--optimizer", "adadelta"]) == 2
    err = capsys.readouterr().err
    assert "'profet-2021+adadelta'" in err and "collect into a new folder" in err
