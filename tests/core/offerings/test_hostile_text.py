"""Text from a catalog is data everywhere: formula-looking cells escaped in the
snapshot CSV ``offerings refresh`` writes, control characters (terminal escape sequences) kept
from what reaches a terminal (refresh's source lines, ``profet instances``, ``predict
--offerings``)."""

from __future__ import annotations

import csv
import io
import re

import pandas as pd
import pytest

from profet_core.offerings import _predict as offerings_predict
from profet_core.offerings import _snapshot, refresh, write_offerings
from tests._utils import ROOT, run

#: The audit's strings: spreadsheet formulas, HTML, Markdown, terminal escapes.
FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "=1+2"]
MARKUP = ['<img src="http://evil.example/i.png">', "[x](http://evil.example)"]
ESCAPES = ["\x1b]8;;http://evil.example\x07link\x1b]8;;\x07", "\x1b[31mred"]
HOSTILE = FORMULAS + MARKUP + ESCAPES
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"


def _catalog(root, names, accelerators=None, regions=None, source=None):
    """A lambda catalog folder whose rows carry ``names`` (and accelerators, regions)."""
    (root / "lambda").mkdir(parents=True)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    for i, name in enumerate(names):
        acc = accelerators[i] if accelerators else "A100"
        region = regions[i] if regions else "us-east-1"
        writer.writerow([name, acc, 1.0, 30.0, 200.0, 1.99, region, ""])
    (root / "lambda" / "vms.csv").write_text(HEADER + text.getvalue())
    if source is not None:
        (root / "lambda" / "SOURCE.md").write_text(source)
    return root


@pytest.mark.parametrize("where", ["instance", "accelerator", "region"])
def test_refresh_writes_formula_cells_escaped(tmp_path, where):
    names = [f"gpu_1x_a100_{i}" for i in range(len(FORMULAS))]
    given = {where: FORMULAS}
    folder = _catalog(
        tmp_path / "c",
        given.get("instance", names),
        given.get("accelerator"),
        given.get("region"),
    )
    done = refresh(folder, previous=_snapshot.load_offerings())
    write_offerings(done, tmp_path / "out")
    cells = [c for row in csv.reader(open(tmp_path / "out" / "offerings.csv")) for c in row]
    live = [c for c in cells if re.match(r"[=+@]|-(?![\d.]+$)", c)]
    assert not live, live
    assert any(c.startswith("'=HYPERLINK") for c in cells)  # kept, as text


def test_refresh_prints_the_source_line_without_terminal_escapes(tmp_path):
    source = "".join(f"- Repository: {e} (x)\n- Commit: {e}abc\n" for e in ESCAPES[:1])
    folder = _catalog(tmp_path / "c", ["gpu_1x_a100"], source=source)
    code, out, err = run("offerings", "refresh", "--catalog", folder)
    assert code == 0, err
    assert not CONTROL.search(out + err), (out + err)[:300]
    assert "evil.example" in out  # still said, as text


@pytest.fixture
def hostile_snapshot(monkeypatch):
    """The shipped snapshot with hostile instance names on its first lines."""
    table = _snapshot.load_offerings()
    lam = table.index[table["cloud"].eq("lambda") & table["gpu"].ne("")][: len(HOSTILE)]
    table.loc[lam, "instance"] = HOSTILE[: len(lam)]
    monkeypatch.setattr(_snapshot, "_shipped", lambda: table)
    offerings_predict._shipped_side.cache_clear()
    yield table
    offerings_predict._shipped_side.cache_clear()


@pytest.mark.parametrize(
    "argv",
    [
        ("instances", "--cloud", "lambda"),
        ("instances", "--cloud", "lambda", "--format", "csv"),
        ("predict", "--profile", ROOT / "examples" / "profile_g3s.json", "--cloud", "lambda"),
    ],
    ids=["instances", "instances-csv", "predict-offerings"],
)
def test_instance_names_reach_the_terminal_without_escapes(hostile_snapshot, argv):
    code, out, err = run(*argv)
    assert code == 0, err
    assert not CONTROL.search(out + err), [ln for ln in (out + err).splitlines() if "\x1b" in ln]
    assert "evil.example" in out + err
    if "csv" in argv:
        frame = pd.read_csv(io.StringIO(out))
        assert not frame["instance"].str.match(r"[=+@]").any()
