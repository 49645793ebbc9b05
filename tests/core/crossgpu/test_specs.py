import pandas as pd
import pytest

from profet_core.errors import ProfetFileNotFoundError, ProfetValueError
from profet_core.inputs._gpu_specs import SPEC_COLUMNS, load_specs, validate_specs


def test_shipped_catalog_loads_and_lists_required_gpus():
    specs = load_specs()
    assert set(SPEC_COLUMNS) <= set(specs.columns)
    gpus = " ".join(specs["gpu"])
    for name in ("K80", "M60", "T4", "V100", "A10G", "L4", "L40S", "A100", "H100"):
        assert name in gpus
    assert specs["spec_source"].str.len().min() > 10


def _good():
    return load_specs().head(2).copy()


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("fp32_tflops", -1.0, "fp32_tflops"),
        ("mem_bandwidth_gbs", float("nan"), "mem_bandwidth_gbs"),
        ("sm_count", 0, "sm_count"),
        ("boost_clock_mhz", float("inf"), "boost_clock_mhz"),
        ("gpu_memory_gb", "lots", "gpu_memory_gb"),
        ("mem_bandwidth_gbs", 0.9, r"within \[10"),
        ("tensor_tflops_fp32_training", -5, "tensor_tflops"),
        ("spec_source", "", "spec_source"),
    ],
    ids=["negative", "nan", "zero-count", "inf", "text", "unit-slip", "neg-tensor", "no-source"],
)
def test_bad_values_rejected(column, value, match):
    df = _good()
    df[column] = df[column].astype(object)
    df.loc[0, column] = value
    with pytest.raises(ProfetValueError, match=match):
        validate_specs(df)


def test_duplicate_and_missing_column_rejected():
    df = _good()
    with pytest.raises(ProfetValueError, match="more than once"):
        validate_specs(pd.concat([df, df.head(1)]))
    with pytest.raises(ProfetValueError, match="lacks column"):
        validate_specs(df.drop(columns="sm_count"))


def test_user_csv_round_trip(tmp_path):
    df = _good()
    df.loc[1, "instance"] = "my-new.xlarge"
    path = tmp_path / "mine.csv"
    df.to_csv(path, index=False)
    assert list(load_specs(path)["instance"]) == [df.loc[0, "instance"], "my-new.xlarge"]
    with pytest.raises(ProfetFileNotFoundError, match="does not exist"):
        load_specs(tmp_path / "absent.csv")


def test_the_spec_sheet_holds_no_price():
    """A price belongs to an offering (tests/core/offerings/test_prices.py), never to
    the spec sheet, which keeps specs and their sources."""
    specs = load_specs()
    assert not [c for c in specs.columns if "usd" in c or c.startswith("price")]
    assert specs["spec_source"].str.len().gt(0).all()


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"gpu": lambda s: " " + s["gpu"] + "\t"},
        {"spec_source": 2024},
        {"arch": lambda s: s["arch"].astype(object)},
    ],
    ids=["clean-text", "padded-text", "a-number-as-text", "object-column"],
)
def test_text_columns_stripped_as_text(change):
    """Clean text is kept as it is (no per-column string pass: it cost the speed of pricing every offering); padded text, a
    number or an object column gives what stripping every value as text gives."""
    raw = pd.read_csv("profet_core/data/gpu_specs.csv").assign(**change)
    got = validate_specs(raw)
    for c in ("instance", "gpu", "arch", "spec_source"):
        want = raw[c].astype("string").str.strip().astype(str)
        pd.testing.assert_series_equal(got[c], want.reset_index(drop=True), check_exact=True)
    assert (got["gpu"] == got["gpu"].str.strip()).all()
