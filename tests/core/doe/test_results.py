"""Reading results (profet_core.doe.read_results) and the rule for their numbers: finite, at most
1e15 in magnitude, named with column, row and value when not."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from profet_core.doe import analyze, montgomery_filtration_example, read_results
from profet_core.doe._results import MAX_RESULTS_BYTES
from profet_core.errors import ProfetFileNotFoundError, ProfetValueError

HUGE = "9" * 400


def _csv(last: str) -> bytes:
    """Montgomery's example with the last response replaced by ``last``."""
    df = montgomery_filtration_example().astype({"filtration_rate": object})
    df.loc[7, "filtration_rate"] = last
    return df.to_csv(index=False).encode()


def test_read_results_errors(tmp_path):
    with pytest.raises(ProfetFileNotFoundError, match=r"does not exist"):
        read_results(tmp_path / "missing.csv")
    with pytest.raises(ProfetValueError, match=r"no rows"):
        read_results(b"a,b,y\n")
    with pytest.raises(ProfetValueError, match=r"is empty"):
        read_results(b"")


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("inf", r"column 'filtration_rate'.*row 8: the value inf is not a finite number"),
        ("-inf", r"row 8: the value -inf is not a finite number"),
        ("1e308", r"row 8: the value 1e308 is beyond 1e15"),
        (HUGE, r"row 8: the value 9{20}\.\.\. \(400 characters\) is not a finite number"),
        ("-" + HUGE, r"row 8: the value -9{19}\.\.\. \(401 characters\) is not a finite number"),
        ("1e16", r"row 8: the value 1e16 is beyond 1e15"),
    ],
    ids=["inf", "-inf", "1e308", "400-digits", "-400-digits", "1e16"],
)
def test_absurd_numbers_are_refused_with_column_row_and_value(value, match):
    with pytest.raises(ProfetValueError, match=match):
        read_results(_csv(value))


def test_largest_allowed_number_and_empty_cells_are_read():
    df = read_results(_csv("1e15"))
    assert df["filtration_rate"].iloc[7] == 1e15
    df = read_results(_csv(""))
    assert np.isnan(df["filtration_rate"].iloc[7])
    res = analyze(df, "filtration_rate", ["temperature", "pressure", "concentration"])
    assert res.n_runs == 7 and any("without a 'filtration_rate' value" in n for n in res.notes)


@pytest.mark.parametrize(
    "response",
    [
        [45.0, 100.0, 45.0, 65.0, 75.0, 60.0, 80.0, np.inf],
        [45.0, 100.0, 45.0, 65.0, 75.0, 60.0, 80.0, 1e308],
        ["45", "100", "45", "65", "75", "60", "80", HUGE],
        [45, 100, 45, 65, 75, 60, 80, int(HUGE)],
    ],
    ids=["inf", "1e308", "400-digit-text", "400-digit-int"],
)
def test_analyze_refuses_absurd_response_given_as_frame(response):
    # a frame built in Python never went through read_results
    df = montgomery_filtration_example().assign(filtration_rate=pd.Series(response, dtype=object))
    with pytest.raises(ProfetValueError, match=r"response 'filtration_rate', row 8: the value"):
        analyze(df, "filtration_rate")


def test_text_response_names_row_and_value():
    df = montgomery_filtration_example().astype({"filtration_rate": object})
    df.loc[2, "filtration_rate"] = "fast"
    with pytest.raises(ProfetValueError, match=r"must be numeric; it holds 'fast' \(row 3\)"):
        analyze(df, "filtration_rate")


# ---------------------------------------------------------------------------------- paths
def test_directory_is_named_as_such(tmp_path):
    with pytest.raises(ProfetValueError, match=r"is a folder, not a regular file"):
        read_results(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    # no writer exists: opening it for a blocking read would hang this test forever
    with pytest.raises(ProfetValueError, match=r"is a named pipe \(FIFO\), not a regular file"):
        read_results(fifo)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_device_is_named_as_such():
    with pytest.raises(ProfetValueError, match=r"'/dev/null' is a character device"):
        read_results("/dev/null")


def test_over_long_file_name_is_a_clear_error(tmp_path):
    with pytest.raises(
        ProfetValueError, match=r"results file .* a name in the path is longer than 255 bytes"
    ):
        read_results(tmp_path / ("a" * 300 + ".csv"))


def test_symlink_loop_and_empty_path(tmp_path):
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    with pytest.raises(ProfetValueError, match=r"results file .* is a symlink loop"):
        read_results(loop)
    with pytest.raises(ProfetValueError, match=r"results file path is empty"):
        read_results("")


def test_oversized_content_is_refused(tmp_path):
    with pytest.raises(
        ProfetValueError, match=r"larger than 20 MB|is 2\d\.\d MB or more; the limit is"
    ):
        read_results(b"0" * (MAX_RESULTS_BYTES + 1))
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:  # sparse: no 20 MB written to disk
        fh.truncate(MAX_RESULTS_BYTES + 1)
    with pytest.raises(
        ProfetValueError, match=r"larger than 20 MB|is 2\d\.\d MB or more; the limit is"
    ):
        read_results(big)
