"""End to end in a real headless Chromium: serve the app, paste an example profile, predict,
and find the targets in the result table."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(timeout: float = 90.0):
    """Run ``streamlit run app.py`` on a free localhost port; yield its URL; stop it after.

    Parameters
    ----------
    timeout : float
        Seconds to wait for ``/_stcore/health``.
    """
    port = _free_port()
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError(f"streamlit did not become healthy:\n{log.read().decode()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@contextlib.contextmanager
def chromium_page(width: int = 1400, height: int = 1000):
    """A Playwright page in Debian's headless Chromium with a fresh profile directory."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    profile = tempfile.mkdtemp(prefix="profet-chromium-")
    try:
        with sync_api.sync_playwright() as pw:
            # A persistent context is how Playwright passes a fresh --user-data-dir.
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": width, "height": height})
            try:
                yield context.pages[0] if context.pages else context.new_page()
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


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
