"""A note is a note, a warning a warning: what an answer rests on (where its
prices come from, the region view, the picks' criterion) prints as ``profet: note:``; what is
wrong with the input or the answer as ``profet: warning:``. CSV numbers keep 4 significant
digits, ``profet instances`` included."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from profet_core import price_source
from profet_core.cli._offerings import write_table
from tests._utils import run

PROFILE = "examples/profile_g3s.json"


@pytest.mark.parametrize(
    "argv",
    [
        ("instances", "--gpu", "A100"),
        ("predict", "--profile", PROFILE),
        ("predict", "--profile", PROFILE, "--offerings"),
    ],
    ids=["instances", "predict", "predict-offerings"],
)
def test_the_price_source_is_a_note_not_a_warning(argv):
    code, _, err = run(*argv)
    assert code == 0, err
    lines = err.splitlines()
    assert any(line.startswith(f"profet: note: {price_source()}") for line in lines)
    assert not [line for line in lines if line.startswith("profet: warning: Prices:")]
    if "instances" in argv or "--offerings" in argv:
        region = [line for line in lines if "at its cheapest region" in line]
        assert region and all(line.startswith("profet: note:") for line in region)


def test_a_warning_stays_a_warning():
    """A profile traced over 10 steps that says nothing of it: the input's problem, a warning."""
    code, _, err = run(
        "predict", "--anchor", "g3s.xlarge", "--profile", "examples/profile_g3s_10steps.json"
    )
    assert code == 0, err
    said = [line for line in err.splitlines() if "per-step overhead ops" in line]
    assert said and all(line.startswith("profet: warning:") for line in said)


def test_csv_keeps_4_significant_digits(capsys):
    """``profet instances --format csv`` rounded to 4 decimals: 0.0016 kept 2 digits."""
    table = pd.DataFrame({"instance": ["a", "b"], "usd_per_hour": [0.00161798, 21.957641]})
    write_table(table, "csv")
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert got["usd_per_hour"].tolist() == [0.001618, 21.9576]
