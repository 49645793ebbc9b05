"""Screenshots of the app's pages for the README, taken with Debian's headless Chromium.

Usage::

    python bench/claims/screenshots.py [--out docs/screenshots]  (default: a scratch folder)

Serves ``app.py`` on a free localhost port, drives ``/usr/bin/chromium`` with Playwright (with a
fresh profile directory), predicts the first anchor's built-in example, and saves one PNG per
page. Uses the artifacts the app uses (``$PROFET_ARTIFACTS`` or ``artifacts/``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.e2e.browser import CHROMIUM, chromium_page, serve_app  # noqa: E402


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
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with serve_app() as url, chromium_page(1440, 1900) as page:
        page.goto(url)
        settle(page)
        page.get_by_label("Dataset size (images per epoch)").fill("50000")
        page.get_by_label("Dataset size (images per epoch)").press("Enter")
        settle(page, 0.5)
        page.get_by_role("button", name="Predict").click()
        page.get_by_text("from a profile on").wait_for(timeout=60_000)
        settle(page)
        # The results (table and chart), not the form above them: they are what the page is for.
        page.get_by_text("from a profile on").evaluate("el => el.scrollIntoView()")
        settle(page, 0.5)
        shots = [
            ("1_anchor_prediction", None),
            ("2_scaler_prediction", "Scaler prediction"),
            ("3_model_accuracy", "Model accuracy"),
            ("4_about", "About / how to profile"),
            ("5_experiment_design", "Experiment design"),
        ]
        for name, link in shots:
            if link:
                goto_page(page, link)
            path = out / f"{name}.png"
            page.screenshot(path=str(path))
            written.append(path)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the PNGs (docs/screenshots, tracked: only to regenerate the README's "
        "screenshots); default: a new scratch folder",
    )
    args = parser.parse_args(argv)
    if args.out is None:  # a README command never rewrites tracked files
        args.out = Path(tempfile.mkdtemp(prefix="profet-screenshots-"))
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 1
    for path in take(args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
