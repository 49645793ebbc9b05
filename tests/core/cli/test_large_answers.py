"""The CLI bounds what the app bounds: a many-row profile's offerings are priced for
its first row (with a note, as the app does), and the table format refuses an answer too long
to align in memory, saying to use --format csv."""

from __future__ import annotations

import io

import pandas as pd

from profet_core.cli import _predict
from tests._utils import ROOT, run

MANY = ROOT / "examples" / "profiles_g3s.csv"


def test_offerings_of_a_many_row_profile_price_the_first_row_with_a_note():
    code, out, err = run(
        "predict", "--profile", MANY, "--anchor", "g3s.xlarge", "--offerings", "--format", "csv"
    )
    assert code == 0, err
    assert "--offerings prices the first one" in err
    assert set(pd.read_csv(io.StringIO(out))["row"]) == {0}


def test_the_table_format_refuses_an_answer_too_long_to_align(tmp_path):
    # the example's rows repeated until rows x targets passes the bound (refused before predicting)
    from profet_core import load_artifacts

    rows = pd.read_csv(MANY)
    targets = len(load_artifacts().targets("g3s.xlarge"))  # a g3s.xlarge profile's (32)
    n = _predict.TABLE_MAX_LINES // targets // len(rows) + 1
    big = tmp_path / "big.csv"
    pd.concat([rows] * n, ignore_index=True).to_csv(big, index=False)
    code, out, err = run("predict", "--profile", big, "--anchor", "g3s.xlarge")
    assert code == 2 and err.count("\n") == 1, err
    assert f"table format prints at most {_predict.TABLE_MAX_LINES:,}; use --format csv" in err
    assert out == ""
    code, out, err = run("predict", "--profile", MANY, "--anchor", "g3s.xlarge", "--format", "csv")
    assert code == 0 and len(out.splitlines()) == 1 + targets * len(rows), err
