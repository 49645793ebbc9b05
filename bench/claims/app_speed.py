"""Speed of the served app in headless Chromium: Predict to the result table on the Anchor page,
and the Model accuracy page's load on a warm server.

    .venv/bin/python bench/claims/app_speed.py [--repeats 5] [--page predict|accuracy|both]

Uses the browser test's helpers (tests/e2e): serves `streamlit run app.py` on localhost. Predict:
pastes the first anchor's example profile and clicks Predict; the time is from the click to the
result grid. Accuracy: opens the Model accuracy page (once to warm the server, not counted), then
per repeat in a fresh tab from navigation until the page's last element (the artifacts' caption)
is shown and its chart is drawn. Prints each time and the median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from profet_core import load_artifacts
from tests.e2e.browser import chromium_page, serve_app
from tests.e2e.test_browser import predict_and_time

#: Plotly charts the Model accuracy page draws on opening (its first section: the MAPE heatmap).
ACCURACY_CHARTS = 1


def accuracy_load(page, url: str, charts: int = ACCURACY_CHARTS) -> float:
    """Seconds from clicking "Model accuracy" in the menu (the app open on its first page)
    until the page's last element (the artifacts' caption) shows and ``charts`` Plotly charts
    are drawn (their SVG exists)."""
    page.goto(url, wait_until="commit")
    link = page.locator('[data-testid="stSidebarNav"] a', has_text="Model accuracy")
    link.wait_for()
    page.wait_for_timeout(1000)  # the first page's run, not timed
    t0 = time.perf_counter()
    link.click()
    page.get_by_text("Artifacts created").wait_for()  # the page's last element: its run is done
    page.wait_for_function(
        "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n",
        arg=charts,
    )
    return time.perf_counter() - t0


def _report(label: str, times: list[float], goal: str) -> None:
    print(f"{label} (s):", ", ".join(f"{t:.2f}" for t in times))
    print(f"median {statistics.median(times):.2f} s ({goal})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--page", choices=["predict", "accuracy", "both"], default="both")
    args = ap.parse_args()
    import os

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    predictor = load_artifacts()
    anchor = predictor.instances[0]
    text = json.dumps(predictor.examples[anchor]["profile"])
    with serve_app() as url, chromium_page() as page:
        if args.page in ("predict", "both"):
            times = [predict_and_time(page, url, anchor, text) for _ in range(args.repeats)]
            _report("Predict click -> result table", times, "goal <= 1 s")
        if args.page in ("accuracy", "both"):
            accuracy_load(page, url)  # warms the server: models loaded, modules imported
            times = []
            for _ in range(args.repeats):
                tab = page.context.new_page()
                times.append(accuracy_load(tab, url))
                tab.close()
            _report("Model accuracy page, warm server", times, "goal < 3 s")


if __name__ == "__main__":
    main()
