"""The core's ``validate()`` (issue 21): what ``profet validate`` printed is returned, and the
files are written as before; with ``cross=True`` the cross-instance model's leave-one-GPU-out."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core import ProfetError, Validation, validate
from profet_core.training._validate import SUMMARY_COLUMNS
from tests.core.crossgpu._utils import GPUS, make_multi_gpu, spec_table

#: Small ensembles: these tests check what is written and returned, not accuracy.
SMALL = {"hybrid": {"n_trees_et": 10, "n_trees_gb": 20}}


def test_validate_writes_the_report_and_returns_it(synthetic_dir, tmp_path):
    done = validate(
        synthetic_dir,  # a folder, read as `profet validate --data` reads it
        tmp_path / "val",
        methods=["hybrid"],
        anchors=["gpu-a"],
        targets=["gpu-b"],
        method_params=SMALL,
    )
    assert isinstance(done, Validation) and done.out == tmp_path / "val"
    assert done.report == (tmp_path / "val" / "report.md").read_text()
    assert "MAPE" in done.report
    assert done.files[0] == "report.md"
    assert all((done.out / name).is_file() for name in (*done.files, "run.json"))
    metrics = pd.read_csv(done.out / "metrics.csv")
    assert set(metrics["anchor"]) == {"gpu-a"} and set(metrics["target"]) == {"gpu-b"}
    assert done.crossgpu is None and done.crossgpu_summary() is None
    assert not (done.out / "crossgpu.csv").exists()


def test_validate_cross_leaves_each_gpu_out(tmp_path):
    from profet_core import make_dataset

    gpus = {g: GPUS[g] for g in ("gpu-a", "gpu-b", "gpu-c", "gpu-d")}
    dataset = make_dataset(*make_multi_gpu(n_arch=4, gpus=gpus))
    done = validate(
        dataset,
        tmp_path / "val",
        methods=["hybrid"],
        anchors=["gpu-a"],
        targets=["gpu-b"],
        method_params=SMALL,
        cross=True,
        specs=spec_table(gpus),
    )
    written = pd.read_csv(tmp_path / "val" / "crossgpu.csv")
    assert len(written) == len(done.crossgpu)
    summary = done.crossgpu_summary()
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert set(summary["left_out"]) >= set(gpus)


def test_validate_refuses_a_bad_spec_file_before_any_work(synthetic_dataset, tmp_path):
    with pytest.raises(ProfetError, match="none.csv"):
        validate(synthetic_dataset, tmp_path / "val", cross=True, specs=tmp_path / "none.csv")
    assert not (tmp_path / "val").exists()
