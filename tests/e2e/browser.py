"""Serve the app on localhost and drive Debian's headless Chromium with Playwright.

Shared by the end-to-end test and ``bench/claims/screenshots.py``. Tests share one served app and one
browser (``serve_app(shared=True)``, ``chromium_page(shared=True)``: a fresh browser context,
its own cookies and storage, per call) so that each does not pay a server's and a browser's
start; a test that measures the server itself (its memory, a heavy upload) starts its own.
``close_shared()`` stops both (the e2e conftest calls it at the session's end).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps dialling out, which this network refuses.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


#: Milliseconds any one browser step (navigation, click, wait for an element) may take. Generous
#: for a loaded machine (at a load average of 6 on 2 cores one script run can take tens of
#: seconds); a wait ends as soon as what it waits for shows, so an idle machine never waits it.
TIMEOUT_MS = 240_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, log, timeout: float) -> None:
    """Poll ``/_stcore/health`` until it answers 200; raise with the server's log when the
    process exits or ``timeout`` seconds pass (health, not the first page, says it is up)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            raise RuntimeError(f"streamlit did not become healthy:\n{log.read().decode()[-3000:]}")
        time.sleep(0.5)


@contextlib.contextmanager
def serve_app_process(timeout: float = 180.0, root: Path = ROOT, env: dict | None = None):
    """Run ``streamlit run app.py`` from ``root`` on a free localhost port; yield its URL and
    process; stop it after.

    Parameters
    ----------
    timeout : float
        Seconds to wait for ``/_stcore/health`` (generous: a loaded machine starts slowly).
    root : pathlib.Path
        The checkout whose ``app.py`` is served.
    env : dict, optional
        Variables added to the server's environment.
    """
    port = _free_port()
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=root,
        env={**os.environ, **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, log, timeout)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


#: What ``shared=True`` reuses: {"app": (context manager, url), "playwright": ..., "browser": ...}.
_SHARED: dict = {}


@contextlib.contextmanager
def serve_app(timeout: float = 180.0, shared: bool = False):
    """Run ``streamlit run app.py`` on a free localhost port; yield its URL; stop it after.

    Parameters
    ----------
    timeout : float
        Seconds to wait for ``/_stcore/health``.
    shared : bool
        Reuse one server for every such call until :func:`close_shared` (tests); its sessions
        are still apart, but it is never stopped in between.
    """
    if not shared:
        with serve_app_process(timeout) as (url, _):
            yield url
        return
    if "app" not in _SHARED:
        manager = serve_app_process(timeout)
        url, _ = manager.__enter__()
        _SHARED["app"] = (manager, url)
    yield _SHARED["app"][1]


def _shared_browser():
    """The one headless Chromium of :func:`chromium_page` with ``shared=True``."""
    if "browser" not in _SHARED:
        from playwright.sync_api import sync_playwright

        pw = sync_playwright().start()
        _SHARED["playwright"] = pw
        _SHARED["browser"] = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, timeout=TIMEOUT_MS
        )
    return _SHARED["browser"]


def close_shared() -> None:
    """Stop the shared browser and server, if they were started."""
    if "browser" in _SHARED:
        _SHARED.pop("browser").close()
        _SHARED.pop("playwright").stop()
    if "app" in _SHARED:
        _SHARED.pop("app")[0].__exit__(None, None, None)


@contextlib.contextmanager
def chromium_page(width: int = 1400, height: int = 1000, shared: bool = False):
    """A Playwright page in Debian's headless Chromium with a fresh profile directory (or, with
    ``shared``, in a fresh context of one browser kept for every such call)."""
    if shared:
        context = _shared_browser().new_context(
            viewport={"width": width, "height": height}, device_scale_factor=1
        )
        context.set_default_timeout(TIMEOUT_MS)
        context.set_default_navigation_timeout(TIMEOUT_MS)
        try:
            yield context.new_page()
        finally:
            context.close()
        return
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="profet-chromium-")
    try:
        with sync_playwright() as pw:
            # A persistent context is how Playwright passes a fresh --user-data-dir.
            context = pw.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": width, "height": height},
                device_scale_factor=1,
                timeout=TIMEOUT_MS,  # starting Chromium alone can take a minute under load
            )
            # Every page of the context (tests open a second one) waits this long by default.
            context.set_default_timeout(TIMEOUT_MS)
            context.set_default_navigation_timeout(TIMEOUT_MS)
            try:
                yield context.pages[0] if context.pages else context.new_page()
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def settle(page, timeout_ms: float = TIMEOUT_MS) -> None:
    """Wait until Streamlit has finished running the page's script: its status widget
    ("Running...") shows while a run is under way and is removed after it."""
    page.wait_for_timeout(500)  # a run a click just requested may not show its status yet
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout_ms)


def wait_uploaded(page, timeout_ms: float = TIMEOUT_MS) -> None:
    """Wait until the file chosen in the page's file uploader is on the server: its chip shows
    at once, with a spinner until the upload is done (Predict clicked before that finds no file),
    then the run the new file starts has finished."""
    page.locator('[data-testid="stFileChip"]').first.wait_for(timeout=timeout_ms)
    spinner = page.locator('[data-testid="stFileChipIconSpinner"]')
    spinner.first.wait_for(state="detached", timeout=timeout_ms)
    settle(page, timeout_ms)
