"""One rule for numbers shown to people: significant digits, not fixed decimals."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts, read_profile
from profet_core._format import format_number, round_significant
from tests._utils import run


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0089312, "0.008931"),
        (0.04798, "0.04798"),
        (60.778, "60.78"),
        (1.006, "1.006"),
        (2153.941, "2,154"),
        (999.96, "1,000"),
        (1e-7, "0.0000001"),
        (0.0, "0"),
        (-0.5, "-0.5"),
        (float("nan"), "–"),
        (float("inf"), "–"),
        (None, "–"),
    ],
    ids=["usd-per-1000", "sub-ms", "ms", "price", "thousands", "rounds-up", "tiny", "zero",
         "negative", "nan", "inf", "none"],
)  # fmt: skip
def test_format_number(value, text):
    assert format_number(value) == text


def test_predict_table_shows_significant_digits_never_0_000():
    """The reference method's interval on g4dn.xlarge starts below 0.05 ms: it printed 0.000."""
    code, out, err = run("predict", "--profile", "examples/profile_g3s.json", "--method", "profet")
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:3] == ["row", "configuration", "target"])  # fmt: skip

    # Configurations ("1 x T4"), offerings ("aws g4dn.xlarge (us-east-1)") and picks ("fastest,
    # cheapest") hold spaces: read each column from the right of a slice that ends just after
    # it; a row's target is the first cell after its configuration (one GPU: one row each).
    def cells(column):
        cut = lines[at].index(column) + len(column)
        head = lines[at][:cut].split()
        after = lines[at].index("configuration") + len("configuration")
        return {line[after:].split()[0]: dict(zip(head[::-1], line[:cut].split()[::-1], strict=False))
                for line in lines[at + 1 :]}  # fmt: skip

    shown = {c: cells(c) for c in ("low_ms", "usd_per_1000_steps")}
    table = (
        load_artifacts()
        .predict("g3s.xlarge", read_profile("examples/profile_g3s.json"), method="profet")
        .table.set_index("target")
    )
    assert "0.000" not in out.split()
    for column, rows in shown.items():
        for target, row in rows.items():
            value = table.at[target, column]
            want = "-" if pd.isna(value) else format_number(value)  # unpriced: a dash, as the app
            assert row[column] == want, (target, column)
    assert float(shown["low_ms"]["g4dn.xlarge"]["low_ms"]) > 0


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (0.00161798, 0.001618),
        (0.0413712, 0.04137),
        (154.81234, 154.8123),
        (12345.678912, 12345.6789),
        (0.0, 0.0),
        (-0.000123456, -0.0001235),
        (1.5e-9, 1.5e-9),
    ],
    ids=["usd-per-1000", "run-hours", "ms", "large", "zero", "negative", "tiny"],
)
def test_round_significant_keeps_four_digits_and_four_decimals(value, want):
    assert round_significant([value])[0] == want


@pytest.mark.parametrize(
    "options",
    [{}, {"precision": "amp", "gpus": "all"}],
    ids=["fp32-1gpu", "amp-all"],
)
def test_the_csv_keeps_a_small_cost_s_digits_and_every_latency_as_before(options):
    """``--format csv`` rounded to 4 decimals, so 0.0016 USD per 1,000 steps kept 2
    digits; latencies (>= 0.1 ms) are written exactly as before."""
    p = load_artifacts().predict("g3s.xlarge", read_profile("examples/profile_g3s.json"), **options)
    p = p.with_run(50_000, 32, 10)
    got = pd.read_csv(io.BytesIO(p.to_csv()))
    cost = p.table["usd_per_1000_steps"].to_numpy(float)
    assert (cost < 0.01).any()
    want = [float(f"{v:.4g}") if abs(v) < 0.1 else round(v, 4) for v in cost]
    np.testing.assert_array_equal(got["usd_per_1000_steps"], want)
    assert (p.table["batch_latency_ms"] >= 0.1).all()
    np.testing.assert_array_equal(got["batch_latency_ms"], p.table["batch_latency_ms"].round(4))
