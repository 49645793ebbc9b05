"""End to end in a real headless Chromium: serve the app, paste an example profile, predict,
and find the targets in the result table."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlparse

import pandas as pd
import pytest

from tests.e2e.browser import CHROMIUM, ROOT, chromium_page, serve_app, settle, wait_uploaded

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _need_browser() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def predict_and_time(page, url: str, anchor: str, text: str) -> float:
    """Paste ``text`` on the Anchor page, click Predict; seconds until the result grid shows."""
    page.goto(f"{url}/?anchor={anchor}", wait_until="networkidle")
    page.get_by_text("Paste JSON", exact=True).click()
    area = page.get_by_label("Profile JSON (op name -> total microseconds)")
    area.fill(text)
    area.press("Control+Enter")
    settle(page)
    t0 = time.perf_counter()
    page.get_by_role("button", name="Predict").click()
    page.get_by_text(f"from a profile on {anchor}").wait_for()
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    return time.perf_counter() - t0


def _assert_targets_shown(page, predictor, anchor, text: str, shown: str) -> None:
    """The heading counts every GPU configuration the core predicts for the profile (the
    rows are configurations); the grid draws only the rows in view (its accessible cells
    too), so the first rows' configurations, not all of the 30-odd, are in its cells."""
    profile = pd.DataFrame([json.loads(text)])
    configs = list(predictor.predict(anchor, profile).table["configuration"].unique())
    heading = page.get_by_text(f"from a profile on {anchor}").first.inner_text()
    assert f"Predicted on {len(configs)} GPU configurations" in heading, heading
    seen = [c for c in configs if c in shown]
    assert len(seen) >= min(len(configs), 8), f"configurations in the grid: {seen}; {shown[:300]}"


def test_paste_example_and_predict():
    _need_browser()
    from profet_core import load_artifacts

    predictor = load_artifacts()
    anchor = predictor.instances[0]
    text = json.dumps(predictor.examples[anchor]["profile"])
    with serve_app(shared=True) as url, chromium_page(shared=True) as page:
        predict_and_time(page, url, anchor, text)
        assert "Predicted on" in page.get_by_text(f"from a profile on {anchor}").inner_text()
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.wait_for()
        # The grid draws on a canvas; its cells' text is in an accessibility table (hidden).
        cells = grid.locator('[role="gridcell"]')
        cells.first.wait_for(state="attached")
        shown = " ".join(cells.all_text_contents())
        _assert_targets_shown(page, predictor, anchor, text, shown)
        assert not page.locator('[data-testid="stException"]').count()


EVIL = "evil.example"
PAYLOADS = {
    "link": f"[click me](https://{EVIL}/login)",
    "image": f"![x](https://{EVIL}/pixel.png)",
}


def _outside(requests: list) -> list:
    return [u for u in requests if urlparse(u).hostname not in ("127.0.0.1", "localhost", None)]


def _probe(page, url: str, payload: str) -> None:
    """Send ``payload`` through the query string, an op name and an uploaded file's name."""
    page.goto(f"{url}/?anchor={quote(payload)}", wait_until="networkidle")
    page.get_by_text("unknown anchor instance").first.wait_for()
    page.get_by_text("Paste JSON", exact=True).click()
    area = page.get_by_label("Profile JSON (op name -> total microseconds)")
    area.fill(json.dumps({payload: 5.0}))
    area.press("Control+Enter")
    settle(page)
    page.get_by_role("button", name="Predict").click()
    page.get_by_text("is not of the form").first.wait_for()
    settle(page)
    page.get_by_text("Upload a file", exact=True).click()
    page.locator('input[type="file"]').set_input_files(
        {"name": f"{payload}.bin", "mimeType": "application/octet-stream", "buffer": b"x"}
    )
    # Wait until the server has the file, or Predict would report that none was uploaded.
    wait_uploaded(page)
    page.get_by_role("button", name="Predict").click()
    page.get_by_text("has type").first.wait_for()
    settle(page)


def test_user_strings_never_become_links_or_requests():
    """A shared URL, an op name and a file name carrying Markdown stay text on every path."""
    _need_browser()
    with serve_app(shared=True) as url, chromium_page(shared=True) as page:
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        for payload in PAYLOADS.values():
            _probe(page, url, payload)
            targets = page.eval_on_selector_all(
                "a[href], img[src]", "els => els.map(e => e.href || e.src)"
            )
            assert not [t for t in targets if urlparse(t).hostname == EVIL], targets
            assert payload.split("(")[0] in page.inner_text("body")
        assert not _outside(requests), _outside(requests)


def test_heavy_upload_does_not_block_another_session():
    """One session uploads a 10 MB profile (a 10-million-character op name) while
    another predicts; the upload is refused with a short message and the other session answers."""
    _need_browser()
    from profet_core import load_artifacts

    predictor = load_artifacts()
    anchor = predictor.instances[0]
    text = json.dumps(predictor.examples[anchor]["profile"])
    heavy = json.dumps({"Device_" + "x" * 10_000_000: 1.0}).encode()
    with serve_app() as url, chromium_page(shared=True) as page:
        other = page.context.new_page()
        page.goto(url, wait_until="networkidle")
        page.get_by_text("Upload a file", exact=True).click()
        page.locator('input[type="file"]').set_input_files(
            {"name": "big.json", "mimeType": "application/json", "buffer": heavy}
        )
        wait_uploaded(page)
        page.get_by_role("button", name="Predict").click()
        # Meanwhile, in the second session:
        predict_and_time(other, url, anchor, text)
        cells = other.locator('[data-testid="stDataFrame"]').first.locator('[role="gridcell"]')
        cells.first.wait_for(state="attached")
        shown = " ".join(cells.all_text_contents())
        _assert_targets_shown(other, predictor, anchor, text, shown)
        error = page.locator('[data-testid="stAlertContentError"]').first
        error.wait_for()
        assert "op name" in error.inner_text() and len(error.inner_text()) < 2000


def _hostile_results() -> bytes:
    """A DOE results CSV whose level labels and response name carry links and remote images."""
    link, image = f"[x](https://{EVIL}/a)", f'<img src="https://{EVIL}/i.png">'
    html_link = f'<a href="https://{EVIL}/b">lo</a>'
    rows = [(link, image), (link, "hi"), (html_link, image), (html_link, "hi")] * 2
    lines = ['A,B,"<b>y</b>"'] + [
        f'"{a.replace(chr(34), chr(34) * 2)}","{b.replace(chr(34), chr(34) * 2)}",{1 + i % 3 + i / 7}'
        for i, (a, b) in enumerate(rows)
    ]
    return "\n".join(lines).encode()


def test_hostile_doe_results_render_no_link_or_remote_image():
    """The Experiment design page once rendered uploaded level labels as live links
    and remote images (notes in Markdown, labels in Plotly charts)."""
    _need_browser()
    with serve_app(shared=True) as url, chromium_page(shared=True) as page:
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(f"{url}/experiment_design", wait_until="networkidle")
        page.get_by_role("tab", name="Analyze").click()
        page.get_by_text("Upload CSV", exact=True).click()
        page.locator('input[type="file"]').set_input_files(
            {"name": "results.csv", "mimeType": "text/csv", "buffer": _hostile_results()}
        )
        wait_uploaded(page)
        page.get_by_text("ordered alphabetically").first.wait_for()
        page.locator(".js-plotly-plot").first.wait_for()
        settle(page)
        targets = page.eval_on_selector_all(
            "a, img, image",
            "els => els.map(e => e.getAttribute('href') || e.getAttribute('xlink:href')"
            " || e.getAttribute('src') || '')",
        )
        assert not [t for t in targets if EVIL in t], targets
        assert "evil.example" in page.inner_text("body")  # shown, as text
        assert not page.locator('[data-testid="stException"]').count()
        assert not _outside(requests), _outside(requests)


def _chart_texts(chart, selector: str) -> list[str]:
    return [t.strip() for t in chart.locator(selector).all_text_contents() if t.strip()]


def test_charts_read_right_in_the_browser():
    """The breakdown's log axis labelled 0.3..0.9 as "3 .. 9"; the cost axis read
    0.0201/0.0402; no legend said what the hatched bars are; the DOE interaction legend was cut
    off at the figure's bottom."""
    _need_browser()
    from profet_core import load_artifacts

    predictor = load_artifacts()
    anchor = predictor.instances[0]
    text = json.dumps(predictor.examples[anchor]["profile"])
    with serve_app(shared=True) as url, chromium_page(shared=True) as page:
        predict_and_time(page, url, anchor, text)
        page.get_by_text("Which kinds of work get faster").click()
        charts = page.locator(".js-plotly-plot")
        charts.nth(1).locator(".ytick text").first.wait_for()
        latency, breakdown = charts.nth(0), charts.nth(1)
        assert any("spec model (hatched)" in t for t in _chart_texts(latency, ".legendtext"))
        dollars = _chart_texts(latency, ".y2tick text")
        assert dollars and all(re.fullmatch(r"\$\d+(\.\d{1,2})?", t) for t in dollars), dollars
        ticks = _chart_texts(breakdown, ".ytick text")
        assert "1x" in ticks and all(re.fullmatch(r"[\d.]+x", t) for t in ticks), ticks
        page.goto(f"{url}/experiment_design", wait_until="networkidle")
        page.get_by_role("tab", name="Analyze").click()
        page.get_by_text("Synthetic demo of the Design tab", exact=True).click()
        figure = page.locator(".js-plotly-plot:visible").filter(has_text="Two-factor interactions")
        figure.locator(".legendtext").first.wait_for()
        settle(page)
        time.sleep(2)  # the page settles; then figure and legend are measured at one moment
        outside = figure.first.evaluate(
            """el => {
                const box = el.querySelector('.main-svg').getBoundingClientRect();
                return [...el.querySelectorAll('.legendtext')].map(t => {
                    const r = t.getBoundingClientRect();
                    return r.bottom > box.bottom || r.right > box.right ? t.textContent : null;
                });
            }"""
        )
        assert len(outside) == 6, outside  # both levels of the three second factors
        assert not [t for t in outside if t], outside


def _wait_until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.3)


def _wait_change(page, before: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page.wait_for_load_state("networkidle")
        shown = page.locator('[data-testid="stMetricValue"]')
        if shown.count() and shown.first.inner_text() != before:
            return shown.first.inner_text()
        time.sleep(0.3)
    raise AssertionError(f"the answer stayed {before!r}")


def test_min_max_latency_sliders_drag():
    """The Scaler page's minimum and maximum latencies are sliders; dragging one
    with the mouse and moving one with the arrow keys change the answer."""
    _need_browser()
    with serve_app(shared=True) as url, chromium_page(width=1440, shared=True) as page:
        page.goto(f"{url}/scaler_prediction", wait_until="networkidle")
        page.get_by_text("Two or three measured latencies", exact=True).click()
        sliders = page.locator('[data-testid="stSlider"]')
        sliders.nth(1).wait_for(timeout=30_000)  # min and max latency
        page.wait_for_load_state("networkidle")
        low = sliders.nth(0).get_by_role("slider")
        low.focus()
        low.press("ArrowRight")  # a keyboard move sets the minimum latency
        minimum = page.get_by_label("Min latency (ms)", exact=True)
        _wait_until(lambda: minimum.input_value() != "")
        high = sliders.nth(1).get_by_role("slider")
        box = high.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + 150, box["y"] + box["height"] / 2, steps=8)  # to the right
        page.mouse.up()
        first = _wait_change(page, "")
        assert re.fullmatch(r"[\d.,]+ m?s", first), first
        boxes = page.get_by_label("Max latency (ms)", exact=True)
        assert boxes.input_value(), "the drag did not fill the number box"
        high.focus()
        before = boxes.input_value()
        high.press("PageDown")  # a tenth of the range down
        second = _wait_change(page, first)
        assert float(boxes.input_value()) < float(before)
        assert second != first
        assert not page.locator('[data-testid="stException"]').count()


def test_result_table_fits_at_1440_px():
    """The cost and run columns were off the grid's right edge at 1440 px."""
    _need_browser()
    from profet_core import load_artifacts

    anchor = load_artifacts().instances[0]
    with serve_app(shared=True) as url, chromium_page(width=1440, height=900, shared=True) as page:
        page.goto(f"{url}/?anchor={anchor}", wait_until="networkidle")
        images = page.get_by_label("Dataset size (images per epoch)")
        images.fill("50000")
        images.press("Enter")
        page.wait_for_load_state("networkidle")
        page.get_by_role("button", name="Predict").click()
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.locator('[role="gridcell"]').first.wait_for(state="attached", timeout=60_000)
        page.wait_for_load_state("networkidle")
        time.sleep(1)  # the grid lays its columns out
        widths = grid.evaluate(
            "el => { const s = el.querySelector('.dvn-scroller');"
            " return [s.scrollWidth, s.clientWidth]; }"
        )
        assert widths[0] <= widths[1], widths
        headers = " ".join(grid.locator('[role="columnheader"]').all_text_contents())
        for label in ("Run (USD)", "80% (USD)", "Pick", "Price check"):
            assert label in headers, headers
        # Each pick's offering was cut short in its metric ("… runpod …" in the
        # table's deltas, "lambda gpu_1x_b200_s…" as the front's values): no text of a metric
        # is clipped, and each pick's numbers and offering read in full in a caption below it.
        assert page.locator('[data-testid="stMetric"]').count() == 6  # the table's, the front's
        clipped = page.evaluate(
            "() => [...document.querySelectorAll('[data-testid=\"stMetric\"] *')]"
            ".filter(e => getComputedStyle(e).overflow !== 'visible'"
            " && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"
        )
        assert not clipped, clipped
        captions = page.locator('[data-testid="stCaptionContainer"]').all_text_contents()
        assert sum("; on " in c and "USD per run" in c for c in captions) == 6, captions


def _memory_bytes(url: str) -> dict[str, int]:
    """The server's ``cache_memory_bytes`` per cache type (``/_stcore/metrics``): uploaded files,
    session state, download data and caches."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=30) as r:
        text = r.read().decode()
    out: dict[str, int] = {}
    for m in re.finditer(r'^cache_memory_bytes\{cache_type="([^"]*)"[^}]*\} (\S+)$', text, re.M):
        out[m[1]] = out.get(m[1], 0) + int(float(m[2]))
    return out


def test_a_closed_session_releases_its_upload_and_results():
    """A closed browser's session was kept for a reconnect and, once expired, dropped
    without a shutdown, so its uploaded profile and download data stayed in the server's memory
    for good (five sessions with 43 MB profiles grew it by gigabytes)."""
    _need_browser()
    rows = (ROOT / "examples" / "profiles_g3s.csv").read_bytes().split(b"\n", 1)
    data = rows[0] + b"\n" + (rows[1].rstrip(b"\n") + b"\n") * 150  # ~450 profile rows, 0.3 MB
    with serve_app() as url, chromium_page(shared=True) as page:
        page.goto(f"{url}/?anchor=g3s.xlarge", wait_until="networkidle")
        page.get_by_text("Upload a file", exact=True).click()
        page.locator('input[type="file"]').set_input_files(
            {"name": "profiles.csv", "mimeType": "text/csv", "buffer": data}
        )
        wait_uploaded(page)
        page.get_by_role("button", name="Predict").click()
        page.get_by_text("from a profile on g3s.xlarge").first.wait_for()
        settle(page)
        held = _memory_bytes(url)
        assert held.get("UploadedFileManager", 0) >= len(data), held  # the probe sees the file
        page.goto("about:blank")  # the browser leaves: its websocket closes
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            held = _memory_bytes(url)
            media = held.get("st_memory_media_file_storage", 0)
            if not held.get("UploadedFileManager") and media < 10_000:
                break
            time.sleep(1)
        assert not held.get("UploadedFileManager"), held  # the uploaded profile
        assert held.get("st_memory_media_file_storage", 0) < 10_000, held  # download data
