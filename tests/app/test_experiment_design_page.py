"""AppTest of the Experiment design page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app._utils import plain, plotly_spec

# AppTest resolves relative paths against this file, so anchor on the repository root
PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "experiment_design.py")


@pytest.fixture
def at():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.run()
    assert not app.exception
    return app


def _metrics(app):
    return {m.label: m.value for m in app.metric}


def test_page_opens_with_study_design_and_montgomery_example(at):
    m = _metrics(at)
    assert m["Design"] == "2^(4-1)"
    assert m["Resolution"] == "IV"
    assert m["Total runs"] == "32"
    assert any("I = ABCD" in md.value for md in at.markdown)
    # analyze tab: unreplicated example -> no F tests, half-normal plot offered
    assert m["Runs"] == "8" and m["Residual df"] == "0"
    assert any("No error term" in w.value for w in at.warning)
    effects = next(d.value for d in at.dataframe if "letters" in d.value.columns)
    # shown as text (4 significant digits, an em dash where a statistic does not exist)
    assert float(effects.set_index("letters").loc["AC = BD", "effect"]) == pytest.approx(-18.5)
    assert len(at.get("plotly_chart")) == 4
    assert not at.error


def test_dropping_terms_pools_them_into_error(at):
    terms = at.multiselect(key=at.multiselect[1].key)
    # Montgomery's reduced model: A, C, D, AC, AD (B and AB pooled into the error)
    keep = [
        "temperature",
        "concentration",
        "stirring_rate",
        "temperature:concentration = pressure:stirring_rate",
        "temperature:stirring_rate = pressure:concentration",
    ]
    assert set(keep) < set(terms.options)
    terms.set_value(keep).run()
    assert not at.exception and not at.error
    m = _metrics(at)
    assert m["Residual df"] == "2"
    anova = next(d.value for d in at.dataframe if "F" in d.value.columns)
    assert float(anova.set_index("term").loc["temperature", "F"]) == pytest.approx(222.1, abs=0.1)


def test_synthetic_demo_shows_anova_and_diagnostics(at):
    at.radio(key="doe_source").set_value("Synthetic demo of the Design tab").run()
    assert not at.exception and not at.error
    m = _metrics(at)
    assert m["Runs"] == "32" and m["Residual df"] == "24"
    assert "Shapiro-Wilk p" in m
    assert any("F" in d.value.columns for d in at.dataframe)
    assert len(at.get("plotly_chart")) == 7
    at.selectbox(key=at.selectbox[0].key).set_value("train_time_s").run()
    assert not at.exception and not at.error


def test_bad_generator_shows_error_and_page_keeps_working(at):
    at.text_input(key="doe_generators").set_value("E = ABC").run()
    assert not at.exception
    assert any("only A, B, C, D exist" in e.value for e in at.error)
    # the analysis of the example still renders
    assert _metrics(at)["Runs"] == "8"
    at.text_input(key="doe_generators").set_value("").run()
    assert not at.error
    assert _metrics(at)["Design"] == "2^4"


def test_no_factors_selected_shows_error(at):
    at.multiselect(key=at.multiselect[0].key).set_value([]).run()
    assert not at.exception
    assert any("no factor columns" in e.value for e in at.error)


def _upload(at, content: bytes):
    at.radio(key="doe_source").set_value("Upload CSV").run()
    at.file_uploader(key="doe_upload").upload("results.csv", content, "text/csv").run()
    return at


@pytest.mark.parametrize(
    ("cell", "match"),
    [
        ("9" * 400, r"row 8: the value 9{20}\.\.\. \(400 characters\) is not a finite number"),
        ("inf", r"row 8: the value inf is not a finite number"),
        ("1e308", r"row 8: the value 1e308 is beyond 1e15"),
    ],
    ids=["400-digits", "inf", "1e308"],
)
def test_absurd_uploaded_response_shows_error_not_exception(at, cell, match):
    rows = ["A,B,y", "-1,-1,1", "1,-1,2", "-1,1,3", "1,1,4", "-1,-1,5", "1,-1,6", "-1,1,7"]
    _upload(at, "\n".join([*rows, f"1,1,{cell}"]).encode())
    assert not at.exception
    assert [e.value for e in at.error if re.search(match, plain(e.value))]


def test_uploaded_results_are_analysed(at):
    rows = ["A,B,y", "-1,-1,1", "1,-1,2", "-1,1,3", "1,1,4", "-1,-1,5", "1,-1,6", "-1,1,7", "1,1,9"]
    _upload(at, "\n".join(rows).encode())
    assert not at.exception and not at.error
    assert _metrics(at)["Runs"] == "8"


def test_hostile_upload_is_shown_as_text(at):
    """Level labels and response names carrying Markdown or HTML stay text in the notes
    (Markdown) and in every Plotly chart (titles, legends, ticks)."""
    link, image = "[x](http://evil.example/a)", '<img src="http://evil.example/i.png">'
    rows = ["A,B,y"] + [
        f'"{a}","{b}",{1 + 0.37 * i + i % 3}'
        for i, (a, b) in enumerate([(link, image), (link, "hi"), ("lo", image), ("lo", "hi")] * 2)
    ]
    _upload(at, "\n".join(rows).encode())
    assert not at.exception and not at.error
    notes = [i.value for i in at.info if "alphabetically" in i.value]
    live = re.compile(r"(?<!\\)(\]\(|<img)")  # an unescaped link target or tag
    assert notes and not [n for n in notes if live.search(n)], notes
    for i in range(len(at.get("plotly_chart"))):
        spec = json.dumps(plotly_spec(at, i))
        assert "<img" not in spec and "<a " not in spec, spec[:300]
    assert "&lt;img" in json.dumps(plotly_spec(at, 1))  # the label is there, as text


def _demo(at):
    at.radio(key="doe_source").set_value("Synthetic demo of the Design tab").run()
    assert not at.exception and not at.error
    return at


def test_tables_show_p_values_readably_and_no_none(at):
    """P-values printed as 0.000000000000000000001 (overflowing the Intercept's
    cell) and the residual row's F and p as "None"."""
    _demo(at)
    tables = [d.value for d in at.dataframe if "p_value" in d.value.columns]
    assert len(tables) == 3  # ANOVA, effects, coefficients
    for table in tables:
        assert not table.isna().any().any(), table
        for p in table["p_value"]:
            assert p == "—" or p == "< 1e-6" or len(p) <= 7, p
    anova = next(t for t in tables if "F" in t.columns).set_index("term")
    assert anova.loc["Residual", "F"] == anova.loc["Residual", "p_value"] == "—"
    assert anova.loc["Intercept", "p_value"] == "< 1e-6"


def test_the_demo_uses_the_design_levels_and_they_can_be_changed(at):
    """The note "pass the levels to choose" could not be acted on in the app; and
    the synthetic demo said its network levels were "ordered alphabetically" although the
    Design tab set low and high: it now says what the Design tab set."""
    _demo(at)
    assert not any("ordered alphabetically" in plain(i.value) for i in at.info)
    said = " ".join(plain(c.value) for c in at.caption)
    assert "Levels as the Design tab set them" in said
    assert "network: low FashionMNISTCNN, high FashionMNISTResNet" in said
    effects = next(d.value for d in at.dataframe if "letters" in d.value.columns)
    before = float(effects.set_index("term").loc["network", "effect"])
    low = at.selectbox(key="doe_low_Synthetic demo of the Design tab_network")
    low.set_value("FashionMNISTResNet").run()
    assert not at.exception and not at.error
    assert not any("'network' are not numbers" in plain(i.value) for i in at.info)
    effects = next(d.value for d in at.dataframe if "letters" in d.value.columns)
    assert float(effects.set_index("term").loc["network", "effect"]) == pytest.approx(
        -before, rel=1e-3
    )


def test_interaction_legend_sits_under_the_plots(at):
    """The interaction plot's legend, a column beside the plots, was cut off."""
    _demo(at)
    specs = [plotly_spec(at, i) for i in range(len(at.get("plotly_chart")))]
    fig = next(s for s in specs if "interactions" in s["layout"]["title"]["text"])
    entries = [d for d in fig["data"] if d.get("showlegend", True)]
    legend = fig["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["yref"] == "container"
    assert fig["layout"]["margin"]["b"] >= 24 * -(-len(entries) // 3)
