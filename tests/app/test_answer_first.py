"""The Anchor page answers first: the three picks, each with its offering, price and any flag on
that price, directly under the result heading; every warning and note in one expander that says
how many and which concern the picks (11 boxes, 1,623 px at 1440x900, stood between the heading
and the picks). And the slips an audit found: a chart of 105 configurations every other label of
which was dropped, two picks unmarked or overlapping; one number rounded two ways; one quantity
under two names; the breakdown's FP32 one-GPU numbers unexplained after an AMP prediction; a
Streamlit warning on the first upload."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from profet_app import common, result_table, target_chart
from profet_core import format_number
from tests.app._utils import no_exception, plain, plotly_spec

ROOT = Path(__file__).resolve().parents[2]


def _walk(node):
    """The page's elements in the order they are drawn: ``(type, node)``."""
    kind = getattr(node, "type", "")
    if kind and kind not in ("vertical", "horizontal", "column", "flex_container"):
        yield kind, node
    if kind == "expander":
        return  # what an expander holds is collapsed, not on the page's first screen
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


@pytest.fixture(scope="module")
def amp_all(request):
    """The page after Predict with AMP on every GPU count and a run (the audit's question)."""
    from streamlit.testing.v1 import AppTest

    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "pages/anchor_prediction.py"), default_timeout=120).run()
    at.radio(key="precision").set_value("amp")
    at.radio(key="gpus").set_value("all")
    at.number_input(key="dataset_images").set_value(50_000)
    at.button(key="predict").click().run()
    request.addfinalizer(mp.undo)
    no_exception(at)
    return at


def test_the_three_picks_come_directly_under_the_heading(amp_all):
    drawn = list(_walk(amp_all.main))
    heading = next(
        i for i, (k, n) in enumerate(drawn) if k == "subheader" and "Predicted on" in n.value
    )
    after = [k for k, _ in drawn[heading + 1 : heading + 7]]
    assert after == ["metric", "caption"] * 3, after
    between = [k for k, _ in drawn[heading + 1 : heading + 9]]
    assert "warning" not in between and "info" not in between
    prediction = amp_all.session_state[common.ANCHOR_RESULT].prediction
    for (_, metric), (_, caption), (what, best) in zip(
        drawn[heading + 1 : heading + 7 : 2],
        drawn[heading + 2 : heading + 7 : 2],
        prediction.picks().items(),
        strict=True,
    ):
        text = plain(caption.value)
        assert metric.value == best["configuration"], what
        assert f"on {best['offering']} at {format_number(best['usd_per_hour'])} USD/h" in text
        if best["price_check"]:
            assert f"price to check: {best['price_check']}" in text and text.startswith("⚠️")


def test_every_warning_and_note_is_in_one_expander_that_counts_them(amp_all):
    prediction = amp_all.session_state[common.ANCHOR_RESULT].prediction
    said = len(prediction.warnings(0)) + len(prediction.price_notes)
    drawn = list(_walk(amp_all.main))
    result = [k for k, n in drawn if k in ("warning", "info")]
    front = next(i for i, (k, n) in enumerate(drawn) if k == "subheader" and "front" in n.value)
    assert not [k for k, _ in drawn[:front] if k in ("warning", "info")], result
    box = next(e for e in amp_all.expander if e.label.endswith(")") and "notes" in e.label)
    assert f"Warnings and notes: {said} (" in box.label
    assert "about the picks (fastest" in box.label  # the far-below price of the fastest pick
    inside = [*box.warning, *box.info]
    assert len(inside) == said
    # each message about a pick is marked so, the fastest's price to check among them
    kids = list(box.children.values())
    marked = [kids[i + 1] for i, k in enumerate(kids[:-1]) if k.type == "caption"]
    assert all(k.value.startswith("About the ") for k in kids if k.type == "caption")
    assert any("16 x A100 SXM4 40GB (far below" in plain(m.value) for m in marked)


def test_the_chart_labels_every_bar_and_marks_every_pick(amp_all):
    """105 configurations: every other label was dropped, "fastest" and "cheapest" overlapped
    and best value was unmarked."""
    result = amp_all.session_state[common.ANCHOR_RESULT]
    assert result.table["configuration"].nunique() > target_chart.TOP
    spec = plotly_spec(amp_all)
    bars = spec["data"][0]
    names = list(bars["x"])
    assert len(names) <= target_chart.TOP
    xaxis = spec["layout"]["xaxis"]
    assert xaxis["tickmode"] == "array" and list(xaxis["ticktext"]) == names
    marks = spec["layout"]["annotations"]
    picks = result.prediction.picks()
    for what, best in picks.items():
        mark = next(a for a in marks if what in a["text"].split(" (")[0].split(", "))
        assert mark["x"] == best["configuration"] and mark["x"] in names
    heights = [a["ay"] for a in marks]
    assert len(set(heights)) == len(heights)  # one label per row, each at its own height
    assert any("The chart shows" in c.value for c in amp_all.caption)
    # the front's pick labels ran under its markers: each on a box, at its own height
    front = plotly_spec(amp_all, 2)["layout"]["annotations"]
    assert front and all(a.get("bgcolor") for a in front)
    assert len({a["ay"] for a in front}) == len(front)


def test_one_rounding_rule_and_one_name_per_quantity(amp_all):
    """63.19 USD in the table was 63.2 on the front; latency_ms in the table was
    batch_latency_ms elsewhere, step_ms on the front's grid."""
    grids = [d for d in amp_all.dataframe if "batch_latency_ms" in d.value.columns]
    assert len(grids) == 2  # the per-configuration table and the front's
    front = next(d for d in grids if "cloud" in d.value.columns)
    assert not {"step_ms", "step_low_ms", "latency_ms"} & set(front.value.columns)
    configs = [json.loads(d.proto.columns) for d in grids]
    money_and_time = (
        "usd_per_hour",
        "batch_latency_ms",
        "usd_per_1000_steps",
        "run_usd",
        "run_hours",
        "ms_per_batch",
        "usd_per_1000_batches",
    )
    labels: dict = {}
    for config in configs:
        for col in money_and_time:
            if col in config:
                assert config[col]["type_config"]["format"] == result_table.SIG, col
                labels.setdefault(col, set()).add(config[col]["label"])
    assert all(len(v) == 1 for v in labels.values()), labels
    spec = plotly_spec(amp_all, 2)  # the front
    hover = next(d["hovertemplate"] for d in spec["data"] if d.get("hovertemplate"))
    assert ":.4g}" in hover and ":.3g}" not in hover
    fast = amp_all.session_state[common.ANCHOR_RESULT].prediction.picks()["fastest"]
    shown = [plain(c.value) for c in amp_all.caption if "a2-megagpu-16g" in c.value]
    assert len(shown) == 2 and all(format_number(fast["run_usd"]) in t for t in shown)


def test_the_breakdown_says_it_is_fp32_on_one_gpu(amp_all):
    box = next(e for e in amp_all.expander if "per-op-family breakdown" in e.label)
    assert "FP32 on one GPU" in box.label
    assert any("not the precision and GPU counts" in i.value for i in box.info)


def test_downloads_do_not_rerun_the_page(amp_all):
    """Download JSON clicked just after Download CSV gave no file in 2 of 3 tries: a click
    reran the page, whose new run registered the other button's file anew."""
    buttons = amp_all.get("download_button")
    assert len(buttons) == 3
    for b in buttons:
        assert b.proto.ignore_rerun, b.proto.label


def test_the_first_upload_sets_its_values_without_a_streamlit_warning(page, monkeypatch):
    """A first upload logged "The widget with key ... was created with a default value but also
    had its value set via the Session State API"."""
    from streamlit.elements.lib import policies

    said = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    monkeypatch.setattr(policies._LOGGER, "warning", lambda *a, **k: said.append(a))
    at = page("anchor").run()
    at.radio(key="source").set_value("Upload a file").run()
    data = (ROOT / "examples" / "profile_g3s.json").read_bytes()
    at.file_uploader(key="profile_file").upload("profile_g3s.json", data, "application/json")
    at.run()
    no_exception(at)
    assert not said, said
    meta = json.loads(data)
    assert at.selectbox(key="anchor").value == meta["instance"]
    sizes = [w.value for w in at.number_input if w.label.startswith("Input size")]
    assert sizes == [meta["input_size"]]


def test_the_notes_label_counts_and_names_the_picks():
    from profet_app import anchor_view

    picks = {
        "fastest": pd.Series({"configuration": "8 x A", "offering": "gcp a (x)"}),
        "cheapest": pd.Series({"configuration": "1 x B", "offering": "aws b (y)"}),
        "best value": None,
    }
    notes = [
        ("warning", "something about 8 x A and others", anchor_view.about_picks("8 x A", picks)),
        ("note", "a note about nothing", []),
        ("note", "priced as aws b (y) here", anchor_view.about_picks("aws b (y)", picks)),
    ]
    label = anchor_view.notes_label(notes)
    assert (
        label
        == "⚠️ Warnings and notes: 3 (1 warning, 2 notes); 2 about the picks (fastest, cheapest)"
    )
