"""Time from clicking Predict to the result table in the served app (headless Chromium).

    .venv/bin/python bench/app_speed.py [--repeats 5]

Uses the browser test's helpers (tests/e2e): serves `streamlit run app.py` on localhost, pastes
the first anchor's example profile and clicks Predict; prints each time and the median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profet_core import load_artifacts
from tests.e2e.browser import chromium_page, serve_app
from tests.e2e.test_browser import predict_and_time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    predictor = load_artifacts()
    anchor = predictor.instances[0]
    text = json.dumps(predictor.examples[anchor]["profile"])
    with serve_app() as url, chromium_page() as page:
        times = [predict_and_time(page, url, anchor, text) for _ in range(args.repeats)]
    print("Predict click -> result table (s):", ", ".join(f"{t:.2f}" for t in times))
    print(f"median {statistics.median(times):.2f} s (goal <= 1 s)")


if __name__ == "__main__":
    main()
