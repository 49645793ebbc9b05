"""Serve the app on localhost and drive Debian's headless Chromium with Playwright.

Shared by the end-to-end test and ``bench/screenshots.py``.
"""

from __future__ import annotations

import contextlib
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
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
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
                raise RuntimeError(
                    f"streamlit did not become healthy:\n{log.read().decode()[-3000:]}"
                )
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
            )
            try:
                yield context.pages[0] if context.pages else context.new_page()
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
