"""First content of the Model accuracy and Experiment design pages in a fresh browser on a warm
server: seconds from the browser's first request for the page to its first metric (Model
accuracy) or its tabs (Experiment design).

    .venv/bin/python bench/claims/first_load.py [--repeats 3] [--settle 20] [--root CHECKOUT]

Serves the app as the README's start command does (``streamlit run app.py`` with its two glibc
settings), warms it as a user would (one browser opens the app's first page and waits for its
Predict button; then ``--settle`` seconds pass), then for each page and repeat starts a fresh
headless Chromium (its own new profile: no cache, no cookies) and times its first request of the
page. The first repeat of each page is that page's first run in the server process. Prints each
time, the median and the load average (the goal: within 3 s). ``--root`` serves another
checkout's app (an older commit, to compare) with this venv.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.e2e.browser import ROOT, TIMEOUT_MS, chromium_page, serve_app_process

#: Each page's path and the first element of its own content.
PAGES = {
    "Model accuracy": ("model_accuracy", '[data-testid="stMetric"]'),
    "Experiment design": ("experiment_design", '[data-testid="stTabs"]'),
}
#: The start command's environment (README).
START_ENV = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "262144"}


def first_content(url: str, path: str, selector: str) -> float:
    """Seconds from a fresh browser's request of ``url/path`` to ``selector`` showing."""
    with chromium_page(width=1440, height=900) as page:
        t0 = time.perf_counter()
        page.goto(f"{url}/{path}", wait_until="commit")
        page.locator(selector).first.wait_for(timeout=TIMEOUT_MS)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--settle", type=float, default=20.0, help="seconds after the warm-up")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app is served")
    args = ap.parse_args()
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with serve_app_process(root=args.root, env=START_ENV) as (url, _):
        with chromium_page(width=1440, height=900) as page:
            t0 = time.perf_counter()
            page.goto(url, wait_until="commit")
            page.get_by_role("button", name="Predict").wait_for(timeout=TIMEOUT_MS)
            print(f"warm-up: the first page in {time.perf_counter() - t0:.2f} s")
        time.sleep(args.settle)
        for name, (path, selector) in PAGES.items():
            times = [first_content(url, path, selector) for _ in range(args.repeats)]
            print(
                f"{name}: first content in {', '.join(f'{t:.2f}' for t in times)} s "
                f"(median {statistics.median(times):.2f} s; the first is the page's first run "
                "in the server)"
            )
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
