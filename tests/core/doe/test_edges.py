"""DOE responses at the edges of float arithmetic, and results CSV structure."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from profet_core.doe import analyze, read_results
from profet_core.errors import ProfetValueError

RUNS = list(itertools.product([-1, 1], [-1, 1])) * 2


def _frame(y) -> pd.DataFrame:
    return pd.DataFrame({"A": [a for a, _ in RUNS], "B": [b for _, b in RUNS], "y": y})


def test_an_exact_fit_gives_no_f_test():
    # rounding left a residual of ~1e-30, and F = 1e30 with p = 1e-60 came out
    res = analyze(_frame([10 + 3 * a + 2 * b for a, b in RUNS]), "y")
    assert res.df_resid == 4  # A, B, A:B and the intercept
    assert np.isnan(res.anova["F"]).all() and np.isnan(res.anova["p_value"]).all()
    assert any("fits every run exactly" in n for n in res.notes)
    assert res.anova.loc["A", "sum_sq"] == pytest.approx(72)


@pytest.mark.parametrize(
    ("y", "match"),
    [
        ([1e-320 * (i + 1) for i in range(8)], "is below 1e-150"),
        ([1e14 + (i % 3) * 1e-2 for i in range(8)], "below the precision of the arithmetic"),
    ],
    ids=["denormal", "precision-loss"],
)
def test_responses_beyond_float_precision_are_refused(tmp_path, y, match):
    path = tmp_path / "r.csv"
    _frame(y).to_csv(path, index=False)
    with pytest.raises(ProfetValueError, match=match):
        analyze(read_results(path), "y")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("A,A,y\n-1,1,2\n1,1,3\n", "repeats the column name"),
        ("A,B,y\n-1,1,2\n1,1,3,4\n", "line 3: 4 fields, more than the header's 3"),
        ("A,B,y\n-1,1\n1,1,3\n", "line 2: 2 fields, fewer"),
        ("A, B, y\n-1, 1, 2\n", "spaces around it"),
    ],
    ids=["duplicate", "extra-field", "shifted", "comma-space"],
)
def test_results_csv_structure_is_refused_naming_the_line(text, match):
    with pytest.raises(ProfetValueError, match=match):
        read_results(text.encode())
