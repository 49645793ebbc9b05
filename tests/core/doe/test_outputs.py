"""`profet doe design/analyze --out` follow the one write rule: a new or empty folder,
or one the same command wrote and nobody changed since; a run sheet with results filled in is
never replaced; the results file is never inside the output folder."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core.doe._cli import main
from tests.core.training.test_swap import snapshot

DESIGN = ["design", "--factor", "a=1,2", "--factor", "b=x,y", "--seed", "1"]


def test_design_rewrites_its_own_untouched_folder(tmp_path, capsys):
    out = tmp_path / "d"
    assert main([*DESIGN, "--out", str(out)]) == 0
    assert main([*DESIGN, "--seed", "2", "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]
    assert (out / "run_sheet.csv").is_file()


def test_design_never_replaces_a_run_sheet_with_results(tmp_path, capsys):
    out = tmp_path / "d"
    assert main([*DESIGN, "--out", str(out)]) == 0
    sheet = pd.read_csv(out / "run_sheet.csv").assign(latency_ms=[1.0, 2.0, 3.0, 4.0])
    sheet.to_csv(out / "run_sheet.csv", index=False)
    before = snapshot(tmp_path)
    assert main([*DESIGN, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "'run_sheet.csv' was changed after PROFET wrote it" in err and err.count("\n") == 1
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("name", ["run_sheet.csv", "notes.txt"])
def test_design_refuses_a_users_folder(name, tmp_path, capsys):
    (tmp_path / name).write_text("mine\n")
    before = snapshot(tmp_path)
    assert main([*DESIGN, "--out", str(tmp_path)]) == 2
    assert "is not one `profet doe design` wrote" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_analyze_out_containing_the_results_is_refused(tmp_path, capsys):
    results = tmp_path / "results.csv"
    pd.DataFrame({"a": [-1, 1, -1, 1], "b": [-1, -1, 1, 1], "y": [1.0, 2, 3, 5]}).to_csv(
        results, index=False
    )
    before = snapshot(tmp_path)
    argv = ["analyze", str(results), "--response", "y"]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert "overlaps the input" in capsys.readouterr().err
    assert snapshot(tmp_path) == before
    assert main([*argv, "--out", str(tmp_path / "an")]) == 0
    assert (tmp_path / "an" / "y_anova.csv").is_file() and results.read_bytes() == before[
        "results.csv"
    ]
