"""One rule for numbers shown to people (issue 20): significant digits, not fixed decimals."""

from __future__ import annotations

import pytest

from profet_core import load_artifacts, read_profile
from profet_core._format import format_number
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
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["row", "target"])
    # The picks ("fastest, cheapest") hold spaces too: read up to the column before them.
    cut = lines[at].index("p_fit") + len("p_fit")
    head = lines[at][:cut].split()
    rows = {line.split()[1]: line[:cut].split() for line in lines[at + 1 :]}
    table = (
        load_artifacts()
        .predict("g3s.xlarge", read_profile("examples/profile_g3s.json"), method="profet")
        .table.set_index("target")
    )
    assert "0.000" not in out.split()
    for target, cells in rows.items():
        # GPU names hold spaces: count the number cells from the right
        shown = dict(zip(head[::-1], cells[::-1], strict=False))
        for column in ("low_ms", "usd_per_1000_steps"):
            assert shown[column] == format_number(table.at[target, column]), (target, column)
    assert float(rows["g4dn.xlarge"][head.index("low_ms") - len(head)]) > 0
