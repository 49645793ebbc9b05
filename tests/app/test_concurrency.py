"""A heavy upload in one session does not break or block another (issue 13): the upload is
refused after bounded work, and a concurrent prediction in a second session still answers with
the core's numbers."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from streamlit.testing.v1 import AppTest

from profet_core import parse_profile

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages/1_Anchor_prediction.py")


def _heavy(results: dict) -> None:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.radio(key="source").set_value("Upload a file").run()
    name = "Device_" + "x" * 40_000_000  # one 40-million-character op name (a 40 MB file)
    at.file_uploader(key="profile_file").upload("big.json", json.dumps({name: 1.0}).encode())
    at.run()
    at.button(key="predict").click().run()
    results["heavy"] = at


def _light(results: dict, predictor) -> None:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.button(key="predict").click().run()
    results["light"] = at


def test_heavy_upload_and_a_normal_prediction_at_once(monkeypatch, predictor):
    monkeypatch.chdir(ROOT)
    results: dict = {}
    threads = [
        threading.Thread(target=_heavy, args=(results,)),
        threading.Thread(target=_light, args=(results, predictor)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    heavy, light = results["heavy"], results["light"]
    assert not heavy.exception and not light.exception
    # The heavy upload is refused with a short message, not echoed back.
    assert len(heavy.error) == 1 and len(heavy.error[0].value) < 2000
    # The other session answered, with the same numbers as the core.
    anchor = light.selectbox(key="anchor").value
    example = predictor.examples[anchor]
    want = predictor.predict(
        anchor, parse_profile(json.dumps(example["profile"]), "e.json"), example["batch_latency_s"]
    ).table
    shown = next(d.value for d in light.dataframe if "batch_latency_ms" in d.value.columns)
    assert list(shown["batch_latency_ms"].round(6)) == list(want["batch_latency_ms"].round(6))
