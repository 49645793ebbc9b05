"""``--catalog`` and ``--out`` values that were taken silently: an empty ``--catalog``, a
catalog line with an impossible GPU count or a control character in its GPU name, a ``collect``
dataset written inside an artifacts folder or into a folder named ``~``; and the CSV writer's
one rule for text (control characters never reach a CSV)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from profet_core import escape_formulas
from profet_core._messages import CONTROL
from profet_core.capture._collect import check_collect_out
from tests._utils import ROOT, run

PROFILE = str(ROOT / "examples" / "profile_g3s.json")


def _refused(code: int, err: str, match: str) -> None:
    assert code == 2 and err.count("\n") == 1 and match in err, err


def test_an_empty_catalog_is_refused():
    code, _, err = run("predict", "--profile", PROFILE, "--catalog", "")
    _refused(code, err, "--catalog '' is empty")


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("g4dn.xlarge,T4,0.5,-8", "gpu_count -8 for 'g4dn.xlarge' is not allowed"),
        ("g4dn.xlarge,T4,0.5,2.5", "gpu_count 2.5 for 'g4dn.xlarge' is not allowed"),
        ("g4dn.xlarge,T4\x00\x1b[31mx,0.5,1", "holds control characters"),
    ],
    ids=["gpu-count-negative", "gpu-count-fraction", "gpu-nul-escape"],
)
def test_a_catalog_line_no_instance_has_is_refused(tmp_path, line, match):
    path = tmp_path / "catalog.csv"
    path.write_text(f"instance,gpu,usd_per_hour,gpu_count\n{line}\n")
    for argv in (
        ("instances", "--targets", "--catalog", path),
        ("predict", "--profile", PROFILE, "--catalog", path, "--format", "csv"),
    ):
        code, out, err = run(*argv)
        _refused(code, err, match)
        assert not CONTROL.search(out + err)


def test_a_csv_never_holds_a_control_character():
    table = pd.DataFrame({"gpu": ["T4\x00\x1b[31mx", "=1+2", "A100"], "n": [1, 2, 3]})
    cells = escape_formulas(table)["gpu"].tolist()
    assert cells == ["T4[31mx", "'=1+2", "A100"]


@pytest.mark.parametrize("out", ["~", "~/profet-data"], ids=["tilde", "tilde-path"])
def test_collect_refuses_an_unexpanded_tilde(tmp_path, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception, match="starts with '~', which the shell did not expand"):
        check_collect_out(out)
    assert list(tmp_path.iterdir()) == []


def test_collect_refuses_a_folder_inside_artifacts(tmp_path):
    shutil.copytree(ROOT / "artifacts", tmp_path / "artifacts")
    with pytest.raises(Exception, match="inside the artifacts folder"):
        check_collect_out(tmp_path / "artifacts" / "data")
    code, _, err = run(
        "collect", "--instance", "g4dn.xlarge", "--quick", "--out", tmp_path / "artifacts" / "d"
    )
    _refused(code, err, "inside the artifacts folder")
    assert not (tmp_path / "artifacts" / "d").exists()
