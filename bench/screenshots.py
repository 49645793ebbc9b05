"""Screenshots of the app's pages for the README, taken with Debian's headless Chromium.

Usage::

    python bench/screenshots.py [--out docs/screenshots]

Serves ``app.py`` on a free localhost port, drives ``/usr/bin/chromium`` with Playwright (with a
fresh profile directory), predicts the first anchor's built-in example, and saves one PNG per
page. Uses the artifacts the app uses (``$PROFET_ARTIFACTS`` or ``artifacts/``).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextlib.contextmanager
def serve_app(timeout: float = 90.0):
    """Run the app on a free localhost port until the block ends; yield its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
                raise RuntimeError("streamlit did not become healthy")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def settle(page, extra_s: float = 1.5) -> None:
    """Wait until Streamlit finished running the script and Plotly drew its charts."""
    page.wait_for_selector('[data-testid="stApp"]')
    time.sleep(0.5)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
    if page.locator(".js-plotly-plot").count():
        page.wait_for_selector(".js-plotly-plot .main-svg", state="attached", timeout=30_000)
    time.sleep(extra_s)


def goto_page(page, title: str) -> None:
    """Open a page through the sidebar navigation (keeps the session, so results carry over)."""
    page.get_by_role("link", name=title).first.click()
    settle(page)


def take(out: Path) -> list[Path]:
    """Take the screenshots into ``out``; return the files written."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="profet-chromium-")
    written = []
    try:
        with serve_app() as url, sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1440, "height": 1900}, device_scale_factor=1)
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.goto(url)
            settle(page)
            page.get_by_label("Dataset size (images per epoch)").fill("50000")
            page.get_by_label("Dataset size (images per epoch)").press("Enter")
            settle(page, 0.5)
            page.get_by_role("button", name="Predict").click()
            page.get_by_text("from a profile on").wait_for(timeout=60_000)
            settle(page)
            shots = [("1_anchor_prediction", None), ("2_scaler_prediction", "Scaler prediction"),
                     ("3_model_accuracy", "Model accuracy"),
                     ("4_about", "About / how to profile"),
                     ("5_experiment_design", "Experiment design")]
            for name, link in shots:
                if link:
                    goto_page(page, link)
                if name.startswith("2_"):
                    # The anchor prediction fills one point; a person would type the other one.
                    for which, value in (("smaller", "4"), ("larger", "120")):
                        field = page.get_by_label(f"Batch latency at the {which} size (ms)")
                        if not field.input_value():
                            field.fill(value)
                            field.press("Enter")
                            settle(page)
                path = out / f"{name}.png"
                page.screenshot(path=str(path))
                written.append(path)
            ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 1
    for path in take(args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
