"""Every spec value of ``gpu_specs.csv`` and ``gpu_reference.csv`` has a source row in
``spec_sources.csv`` with the same value, and nothing written "as recalled" goes
unmarked."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

DATA = Path(__file__).resolve().parents[3] / "profet_core" / "data"
#: The spec-sheet values that need a source (the sheets' other numbers are prices, counts of
#: GPUs per instance, years, vCPUs and link rates).
FIELDS = (
    "fp32_tflops",
    "tensor_tflops_fp32_training",
    "fp16_tensor_tflops",
    "bf16",
    "mem_bandwidth_gbs",
    "gpu_memory_gb",
    "sm_count",
    "boost_clock_mhz",
)
SOURCE_COLUMNS = (
    "gpu",
    "field",
    "value",
    "unit",
    "status",
    "source_title",
    "locator",
    "url",
    "read_in",
    "to_settle",
)


def _sheets() -> dict[str, pd.DataFrame]:
    return {n: pd.read_csv(DATA / n) for n in ("gpu_specs.csv", "gpu_reference.csv")}


def _sources() -> pd.DataFrame:
    return pd.read_csv(DATA / "spec_sources.csv", dtype=str, keep_default_na=False)


def problems(sheets: dict[str, pd.DataFrame], sources: pd.DataFrame) -> list[str]:
    """Each way the sheets and their sources disagree, one line each (empty: they agree)."""
    out = []
    pairs = zip(sources["gpu"], sources["field"], strict=True)
    key = dict(zip(pairs, sources["value"], strict=True))
    if len(key) != len(sources):
        out.append("spec_sources.csv has a (gpu, field) twice")
    used = set()
    for name, sheet in sheets.items():
        for _, row in sheet.iterrows():
            for field in FIELDS:
                if field not in sheet.columns:
                    continue
                used.add((row["gpu"], field))
                cited = key.get((row["gpu"], field))
                if cited is None:
                    out.append(f"{name}: {row['gpu']} {field} has no source row")
                elif not math.isclose(float(cited), float(row[field]), rel_tol=1e-9):
                    out.append(
                        f"{name}: {row['gpu']} {field} = {row[field]}, its source says {cited}"
                    )
    out += [f"spec_sources.csv: {g} {f} is no sheet's value" for g, f in key if (g, f) not in used]
    return out


def test_sources_have_their_columns_and_statuses():
    src = _sources()
    assert tuple(src.columns) == SOURCE_COLUMNS
    assert set(src["status"]) <= {"cited", "unsure"}
    assert set(src["field"]) <= set(FIELDS)
    for col in ("unit", "source_title", "locator", "read_in"):
        assert (src[col].str.len() > 0).all(), f"a source row without {col}"
    unsure = src[src["status"] == "unsure"]
    assert (unsure["to_settle"].str.len() > 10).all(), "an unsure value must say what settles it"


def test_every_spec_value_has_a_source_with_that_value():
    assert problems(_sheets(), _sources()) == []


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (("NVIDIA L4", "fp32_tflops", 31.0), "L4 fp32_tflops = 31.0, its source says 30.3"),
        (("NVIDIA L40S", "fp16_tensor_tflops", 733.0), "its source says 362"),
    ],
    ids=["changed-value", "sparse-rate"],
)
def test_a_value_that_differs_from_its_source_is_found(change, match):
    sheets = _sheets()
    gpu, field, value = change
    specs = sheets["gpu_specs.csv"]
    specs.loc[specs["gpu"] == gpu, field] = value
    assert any(match in p for p in problems(sheets, _sources()))


def test_a_missing_source_row_is_found():
    src = _sources()
    src = src[~((src["gpu"] == "NVIDIA T4") & (src["field"] == "sm_count"))]
    assert "gpu_specs.csv: NVIDIA T4 sm_count has no source row" in problems(_sheets(), src)


@pytest.mark.parametrize("name", ["gpu_specs.csv", "gpu_reference.csv"])
def test_no_spec_source_as_recalled_unless_marked_unsure(name):
    sheet = _sheets()[name]
    for text in sheet["spec_source"]:
        if "as recalled" in text.lower():
            assert "unsure" in text.lower(), text


@pytest.mark.parametrize("name", ["gpu_specs.csv", "gpu_reference.csv"])
def test_a_gpu_with_an_unsure_value_says_so_in_its_spec_source(name):
    src = _sources()
    unsure = src[src["status"] == "unsure"]
    sheet = _sheets()[name]
    for _, row in sheet.iterrows():
        fields = [f for f in unsure[unsure["gpu"] == row["gpu"]]["field"] if f in sheet.columns]
        for f in fields:
            assert f in row["spec_source"].split("unsure:", 1)[-1], (row["gpu"], f)


def test_ada_parts_agree_with_each_other():
    """The Ada lines side by side: L40S at least the L40 on every rate with the same
    bandwidth; no dense rate above what FP32 and the SM count allow per clock (a sparse rate left
    undivided would break this)."""
    specs = pd.concat(_sheets().values()).drop_duplicates("gpu").set_index("gpu")
    l40, l40s = specs.loc["NVIDIA L40"], specs.loc["NVIDIA L40S"]
    for f in ("fp32_tflops", "tensor_tflops_fp32_training", "fp16_tensor_tflops"):
        assert l40s[f] >= l40[f]
    assert l40s["mem_bandwidth_gbs"] == l40["mem_bandwidth_gbs"]
    ada = specs[specs["arch"] == "Ada"]
    assert len(ada) >= 5
    # Ada per SM per clock: 256 FP32 flops; FP16 tensor at most 1024 (dense, full rate); TF32 512.
    sm = ada["sm_count"].fillna(ada["fp32_tflops"] * 1e6 / (256 * ada["boost_clock_mhz"]))
    per_clock = sm * ada["boost_clock_mhz"] * 1e-6  # tera-cycles per second
    assert ((ada["fp32_tflops"] / per_clock - 256).abs() < 3).all()
    assert (ada["fp16_tensor_tflops"] / per_clock <= 1024 * 1.01).all()
    assert (ada["tensor_tflops_fp32_training"] / per_clock <= 512 * 1.01).all()
