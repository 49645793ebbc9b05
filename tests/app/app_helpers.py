"""Helpers shared by the app tests (imported as a plain module; pytest puts this folder on
sys.path)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from profet_core import parse_profile


def example_profile(predictor, anchor: str):
    """The anchor's built-in example as the page parses it (a one-row op table)."""
    return parse_profile(json.dumps(predictor.examples[anchor]["profile"]), "example.json")


def plotly_spec(at: AppTest, index: int = 0) -> dict:
    """The Plotly figure JSON of the ``index``-th chart an AppTest shows."""
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
