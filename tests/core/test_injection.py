"""User strings reach every output escaped: Plotly figures (titles, legends, axes,
hover), the HTML figures of `doe analyze`, and formula-looking text in every CSV written."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re

import pandas as pd
import pytest

from profet_core.doe import analyze, doe_figures
from profet_core.inputs._csv import escape_formulas, escape_text
from tests._utils import run

LINK = '<a href="http://evil.example/">lo</a>'
IMAGE = '<img src="http://evil.example/i.png">'
FORMULA = '=HYPERLINK("http://evil.example","hi")'
MARKDOWN = "![m](http://evil.example/m.png)"
#: Live markup in Plotly text: a link, an image, bold (Plotly renders <a>, <b>, <i>, <br> ...)
LIVE = re.compile(r"<\s*(a|img|b|i|br|span|sup|sub)\b", re.IGNORECASE)


def hostile_results() -> pd.DataFrame:
    rows = list(itertools.product([LINK, FORMULA], [IMAGE, MARKDOWN])) * 2
    return pd.DataFrame(
        {
            "A": [a for a, _ in rows],
            "B": [b for _, b in rows],
            "@y<b>": [1.0 + 0.37 * i + i % 3 for i in range(len(rows))],
        }
    )


def _strings(node):
    """Every string in a figure's JSON (titles, names, ticks, text, hover data) but the
    hover templates, which are ours."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for k, v in node.items():
            if k != "hovertemplate":
                yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def test_doe_figures_show_user_text_as_text_never_markup():
    result = analyze(hostile_results(), "@y<b>", ["A", "B"])
    figs = doe_figures(result)
    assert {"main_effects", "interactions", "boxplots"} <= set(figs)
    for name, fig in figs.items():
        strings = list(_strings(json.loads(fig.to_json())))
        live = [s for s in strings if LIVE.search(s)]
        assert not live, (name, live[:3])
    # still shown, as entities Plotly draws as the characters typed
    text = " ".join(_strings(json.loads(figs["main_effects"].to_json())))
    assert "&lt;a href=" in text and "@y&lt;b&gt;" in text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+2", "'=1+2"),
        ("+A1", "'+A1"),
        ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"),
        ("@SUM(1)", "'@SUM(1)"),
        ("\t=1", "'\t=1"),
        ("-1.5", "-1.5"),
        ("+3e4", "+3e4"),
        ("-", "-"),
        ("g4dn.xlarge", "g4dn.xlarge"),
        ("", ""),
    ],
)
def test_escape_text_follows_owasp(value, expected):
    assert escape_text(value) == expected


def test_escape_formulas_touches_text_only():
    df = pd.DataFrame({"=x": ["=1", "a"], "n": [-1.0, 2.0]}, index=["@i", "j"])
    out = escape_formulas(df)
    assert list(out.columns) == ["'=x", "n"] and list(out.index) == ["'@i", "j"]
    assert out["'=x"].tolist() == ["'=1", "a"] and out["n"].tolist() == [-1.0, 2.0]
    assert df["=x"].tolist() == ["=1", "a"]  # the input is not changed


def _cells(path) -> list[str]:
    with open(path, newline="") as fh:
        return [c for row in csv.reader(fh) for c in row]


def _formula_cells(cells) -> list[str]:
    return [c for c in cells if c and c[0] in "=+-@\t\r" and escape_text(c) != c]


def test_doe_analyze_writes_escaped_html_and_csv(tmp_path):
    src = tmp_path / "results.csv"
    hostile_results().to_csv(src, index=False)
    code, out, err = run("doe", "analyze", src, "--response", "@y<b>", "--out", tmp_path / "o")
    assert code == 0, err
    pages = list((tmp_path / "o").glob("*.html"))
    assert len(pages) >= 5
    for page in pages:
        # the figure is JSON inside a <script>, "<" written \u003c: live markup once parsed
        body = page.read_text().replace("\\u003c", "<").replace("\\u003e", ">")
        body = body.replace("\\u002f", "/").replace('\\"', '"')
        assert LINK not in body and IMAGE not in body and "<b>" not in body.split("<script")[-1]
        if page.name.endswith("main_effects.html"):
            assert "evil.example" in body  # present, as text
    for sheet in (tmp_path / "o").glob("*.csv"):
        assert not _formula_cells(_cells(sheet)), sheet


def test_doe_design_run_sheet_escapes_formula_levels(tmp_path):
    code, _, err = run(
        "doe", "design", "--factor", "a=@SUM(1),-cmd", "--factor", "b==1+2,+A1",
        "--seed", "1", "--out", tmp_path,
    )  # fmt: skip
    assert code == 0, err
    cells = _cells(tmp_path / "run_sheet.csv") + _cells(tmp_path / "factors.csv")
    assert "'@SUM(1)" in cells and "'=1+2" in cells
    assert not _formula_cells(cells)


def test_predict_csv_escapes_catalog_text(trained, tmp_path):
    catalog = tmp_path / "catalog.csv"
    catalog.write_text(
        "instance,gpu,usd_per_hour\n"
        f'gpu-a,GA,1\ngpu-b,"{FORMULA.replace(chr(34), chr(34) * 2)}",2\ngpu-c,@SUM(1),0.5\n'
    )
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"Device_Conv2D": 5000.0, "Device_Relu": 800.0}))
    code, out, err = run(
        "predict", "--anchor", "gpu-a", "--profile", profile, "--artifacts", trained,
        "--catalog", catalog, "--format", "csv",
    )  # fmt: skip
    assert code == 0, err
    cells = [c for row in csv.reader(io.StringIO(out)) for c in row]
    assert "'" + FORMULA in cells and "'@SUM(1)" in cells
    assert not _formula_cells(cells)
