"""End to end in a real headless Chromium: serve the app, paste an example profile, predict,
and find the targets in the result table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.browser import CHROMIUM, chromium_page, serve_app

pytestmark = pytest.mark.browser


def test_paste_example_and_predict():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from profet_core import load_artifacts

    predictor = load_artifacts()
    anchor = predictor.instances[0]
    text = json.dumps(predictor.examples[anchor]["profile"])
    with serve_app() as url, chromium_page() as page:
        page.goto(f"{url}/?anchor={anchor}", wait_until="networkidle")
        page.get_by_text("Paste JSON", exact=True).click()
        area = page.get_by_label("Profile JSON (op name -> total microseconds)")
        area.fill(text)
        area.press("Control+Enter")
        page.get_by_role("button", name="Predict").click()
        heading = page.get_by_text(f"from a profile on {anchor}")
        heading.wait_for(timeout=60_000)
        assert "Predicted on" in heading.inner_text()
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.wait_for(timeout=30_000)
        # The grid draws on a canvas; its cells' text is in an accessibility table (hidden).
        cells = grid.locator('[role="gridcell"]')
        cells.first.wait_for(state="attached", timeout=30_000)
        shown = " ".join(cells.all_text_contents())
        for target in predictor.targets(anchor):
            assert target in shown, f"{target} is not in the result table: {shown[:500]}"
        assert not page.locator('[data-testid="stException"]').count()
