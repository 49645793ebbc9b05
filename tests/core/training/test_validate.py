"""The core's ``validate()``: what ``profet validate`` printed is returned, and the
files are written as before; with ``cross=True`` the cross-instance model's leave-one-GPU-out."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core import ProfetError, Validation, validate
from profet_core.training._validate import SUMMARY_COLUMNS
from tests.core.crossgpu._utils import GPUS, make_multi_gpu, spec_table

# validate() trains a model per left-out fold: seconds each.
pytestmark = pytest.mark.slow

#: Small ensembles: these tests check what is written and returned, not accuracy.
SMALL = {"hybrid": {"n_trees_et": 10, "n_trees_gb": 20}}


@pytest.fixture(scope="module")
def validated(tmp_path_factory, synthetic_dir):
    """``validated(**selection)``: the folder data validated (hybrid, small) under a selection,
    once per selection for this module (a validation takes seconds)."""
    done = {}

    def run(**selection):
        key = repr(sorted(selection.items()))
        if key not in done:
            out = tmp_path_factory.mktemp("val") / "val"
            # the folder, read as `profet validate --data` reads it
            done[key] = validate(synthetic_dir, out, methods=["hybrid"], method_params=SMALL,
                                 **selection)  # fmt: skip
        return done[key]

    return run


def test_validate_writes_the_report_and_returns_it(validated):
    done = validated(anchors=["gpu-a"], targets=["gpu-b"])
    assert isinstance(done, Validation) and done.out.name == "val"
    assert done.report == (done.out / "report.md").read_text()
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


def _sections(report: str) -> dict:
    """``{heading: text up to the next heading}`` of a Markdown report."""
    out, head = {}, None
    for line in report.splitlines():
        if line.startswith("#"):
            head = line
            out[head] = ""
        elif head is not None:
            out[head] += line + "\n"
    return out


@pytest.mark.parametrize(
    ("selection", "said"),
    [
        ({"architectures": ["arch0", "arch1"]}, "architectures arch0, arch1"),
        ({"anchors": ["gpu-a"], "targets": ["gpu-b"]}, "anchors gpu-a; targets gpu-b"),
        ({}, None),
    ],
    ids=["architectures", "pairs", "no-selection"],
)
def test_full_data_tables_are_labelled_under_a_selection(
    validated, synthetic_dataset, selection, said
):
    """The noise floor and scaler tables ignore the selection, and say so."""
    archs = sorted(synthetic_dataset.profiles["model"].unique())
    if "architectures" in selection:
        selection = {"architectures": archs[:2]}
        said = f"architectures {', '.join(archs[:2])}"
    done = validated(**selection)
    sections = _sections(done.report)
    full = [h for h in sections if h.startswith(("## Noise floor", "## Scaler"))]
    assert len(full) >= 3
    for head in full:
        labelled = "**Full data, not the selection" in sections[head]
        assert labelled == (said is not None), head
        if said:
            assert f"({said})" in sections[head]
    pair_tables = [h for h in sections if h.startswith("## MAPE %")]
    assert pair_tables and not any("Full data" in sections[h] for h in pair_tables)
