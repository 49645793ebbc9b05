"""The browser tests share one served app and one headless Chromium (tests/e2e/browser.py);
they are stopped once the session ends."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_browser_and_app():
    yield
    from tests.e2e.browser import close_shared

    close_shared()
