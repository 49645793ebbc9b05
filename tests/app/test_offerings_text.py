"""A catalog's names on the Anchor page's offerings section are text, never markup:
the price-source and no-spec-model captions and the picks' metrics escaped for Markdown, the
front's legend, annotations and hover text escaped for Plotly (which renders <a>, <b>, <br>)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from profet_app.offerings_front import front_figure, note_captions, pick_metrics, source_caption
from profet_core import (
    OfferingFilter,
    load_artifacts,
    load_offerings,
    predict_offerings,
    read_profile,
)
from profet_core.offerings import offerings_meta
from tests._utils import ROOT

HOSTILE = [
    '<img src="http://evil.example/i.png">',
    "[x](http://evil.example)",
    '<a href="http://evil.example">a</a>',
    '=HYPERLINK("http://evil.example","x")',
]
#: Live Markdown or HTML: a link or image, raw tags.
LIVE_MD = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\(|(?<!\\)<\s*(img|a)\b", re.IGNORECASE)
LIVE_HTML = re.compile(r"<\s*(a|img|b|i|br|span)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def hostile_result():
    """Offerings of a snapshot whose lambda names (instances, GPUs, clouds) are hostile."""
    import pandas as pd

    predictor = load_artifacts()
    table = load_offerings()
    lam = table.index[table["cloud"].eq("lambda") & table["gpu"].ne("")]
    table.loc[lam, "instance"] = [HOSTILE[i % len(HOSTILE)] + str(i) for i in range(len(lam))]
    extra = table.loc[lam[:1]].assign(gpu="", accelerator=HOSTILE[0], instance="x1")
    table = pd.concat([table, extra], ignore_index=True)
    profiles = read_profile(ROOT / "examples" / "profile_g3s.json")
    return predict_offerings(
        predictor,
        "g3s.xlarge",
        profiles,
        filter=OfferingFilter(clouds=("lambda",)),
        offerings=table,
    )


def test_metrics_show_the_picks_names_as_text(hostile_result):
    metrics = pick_metrics(hostile_result)
    # the offering in the caption under each metric (it wraps there)
    assert metrics and any("evil" in text for _, _, text in metrics)
    assert not [v for _, value, text in metrics for v in (value, text) if LIVE_MD.search(v)]


def test_front_annotations_hover_and_legend_are_plotly_text(hostile_result):
    t = replace(hostile_result, table=hostile_result.table.assign(cloud=HOSTILE[2])).table
    fig = front_figure(t, hostile_result.cost_column, "USD per 1,000 steps")
    spec = json.loads(fig.to_json())
    texts = [a["text"] for a in spec["layout"]["annotations"]]
    assert texts and any("evil" in s for s in texts)
    strings = texts + [tr.get("name", "") for tr in spec["data"]]
    strings += [str(c) for tr in spec["data"] for c in tr.get("customdata", [])]
    assert not [s for s in strings if LIVE_HTML.search(s)]


def test_captions_escape_the_catalogs_text(hostile_result):
    meta = json.loads(json.dumps(offerings_meta()))
    meta["clouds"]["lambda"]["commit"] = "[x](http://evil.example)"
    meta["clouds"]["lambda"]["schema"] = '<img src="http://evil.example/i.png">'
    captions = [source_caption(meta), *note_captions(hostile_result)]
    assert any("no spec model" in c and "evil" in c for c in captions)
    assert not [c for c in captions if LIVE_MD.search(c)]
