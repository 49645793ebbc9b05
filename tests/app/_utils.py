"""Helpers shared by the app tests (imported as ``tests.app._utils``)."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
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


def values(v) -> np.ndarray:
    """A Plotly JSON array as floats; Plotly 6 writes numpy arrays as base64 ``bdata``."""
    if isinstance(v, dict) and "bdata" in v:
        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        return (
            arr.reshape([int(n) for n in str(v["shape"]).split(",")]) if "shape" in v else arr
        ).astype(float)
    return np.asarray(v, dtype=float)


def plain(markdown: str) -> str:
    """Text of an escaped Markdown message as a person reads it (``common.safe`` undone)."""
    import html

    return html.unescape(re.sub(r"\\(.)", r"\1", markdown)).replace("\u2060", "")
