"""``profet doe design`` and ``profet doe analyze``."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core.doe import demo_results, make_design, montgomery_filtration_example
from profet_core.doe._cli import main
from tests.core.doe._helpers import STUDY


def test_cli_design_prints_and_writes(tmp_path, capsys):
    argv = [
        "design",
        *[a for f in STUDY for a in ("--factor", f)],
        "--generator",
        "D=ABC",
        "--replicates",
        "4",
        "--seed",
        "1",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Defining relation: I = ABCD" in out and "Resolution: IV" in out
    assert "AB = CD" in out
    sheet = pd.read_csv(tmp_path / "run_sheet.csv")
    assert len(sheet) == 32
    assert list(sheet.columns) == [
        "run",
        "std_order",
        "replicate",
        "cpu",
        "memory",
        "network",
        "epochs",
    ]
    assert set(sheet["memory"]) == {"1.5Gi", "3Gi"}


def test_cli_analyze_prints_and_writes(tmp_path, capsys):
    path = tmp_path / "mont.csv"
    montgomery_filtration_example().to_csv(path, index=False)
    out_dir = tmp_path / "out"
    assert main(["analyze", str(path), "--response", "filtration_rate", "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "No error term" in out and "AC = BD" in out and "-18.5" in out
    effects = pd.read_csv(out_dir / "filtration_rate_effects.csv")
    assert effects["effect"].tolist() == pytest.approx([19, 1.5, 14, 16.5, -1, -18.5, 19])
    assert (out_dir / "filtration_rate_half_normal.html").is_file()
    assert (out_dir / "plotly.min.js").is_file()


def test_cli_analyze_two_responses_with_factor_list(tmp_path, capsys):
    d = make_design(STUDY, "D=ABC", replicates=2, seed=1)
    path = tmp_path / "r.csv"
    demo_results(d).to_csv(path, index=False)
    code = main(
        [
            "analyze",
            str(path),
            "--response",
            "accuracy",
            "--response",
            "train_time_s",
            "--factors",
            "cpu,memory,network,epochs",
            "--levels",
            "network=FashionMNISTCNN,FashionMNISTResNet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "Response: accuracy" in out and "Response: train_time_s" in out
    assert "ANOVA (type III)" in out and "Shapiro-Wilk" in out
    assert "alphabetically" not in out


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["design", "--factor", "cpu=1"], "'cpu' has 1 level"),
        (
            ["design", "--factor", "a=0,1", "--factor", "b=0,1", "--generator", "C=AB"],
            "only A, B exist",
        ),
        (["analyze", "missing.csv", "--response", "y"], "does not exist"),
    ],
    ids=["one-level", "bad-generator", "missing-file"],
)
def test_cli_errors_exit_2_with_message(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("profet: error:") and match in err
