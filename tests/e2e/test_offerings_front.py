"""The time-cost front in a real headless Chromium at 1440 px: after Predict on the
Anchor page, one point per priced offering of the whole snapshot, the front and the picks drawn
inside the page's width; and how long the page takes to answer (printed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.browser import CHROMIUM, chromium_page, serve_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_front_renders_readable_at_1440_px_with_every_offering():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from profet_core import OfferingFilter, load_artifacts, parse_profile, predict_offerings

    predictor = load_artifacts()
    anchor = predictor.instances[0]
    example = predictor.examples[anchor]
    want = predict_offerings(
        predictor,
        anchor,
        parse_profile(json.dumps(example["profile"]), "example.json", steps=2),
        anchor_latency_s=example["batch_latency_s"],
        batch_size=int(example["batch_size"]),
        input_size=int(example["input_size"]),
        filter=OfferingFilter(),
    ).table
    points = int(want[["batch_latency_ms", "usd_per_1000_steps"]].notna().all(axis=1).sum())
    with serve_app(shared=True) as url, chromium_page(width=1440, height=1100, shared=True) as page:
        page.goto(f"{url}/?anchor={anchor}", wait_until="networkidle")
        t0 = time.perf_counter()
        page.get_by_role("button", name="Predict").click()
        page.get_by_text("Every GPU offering: the time-cost front").wait_for(timeout=90_000)
        chart = page.locator(".js-plotly-plot").last
        chart.wait_for(timeout=60_000)
        elapsed = time.perf_counter() - t0
        print(f"\nAnchor page answered with the front in {elapsed:.2f} s after Predict")
        box = chart.bounding_box()
        assert box and 700 <= box["width"] <= 1440 and box["x"] >= 0
        assert box["x"] + box["width"] <= 1440
        # every marker drawn in the SVG: one per priced offering
        drawn = chart.evaluate("el => el.querySelectorAll('.scatterlayer .points path').length")
        assert drawn == points and drawn >= 20
        text = chart.inner_text()
        for pick in ("fastest", "cheapest", "best value", "time-cost front"):
            assert pick in text, f"{pick!r} is not drawn: {text[:300]}"
        assert not page.locator('[data-testid="stException"]').count()
