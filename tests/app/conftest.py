"""Fixtures of the app tests: the repository root on sys.path (pages import ``profet_app``), the
predictor from the default artifacts, and helpers to run one page with AppTest."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.components.v2 import manifest_scanner  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

# Every AppTest scans the metadata of every installed distribution for Streamlit components
# (about 0.5 s of CPU each time with this venv's ~260 packages: half the CPU of the app tests).
# The app uses none, and the installed packages do not change during a run: scan once per
# process. Every discovered component is still registered in each AppTest.
manifest_scanner.scan_component_manifests = functools.cache(
    manifest_scanner.scan_component_manifests
)

from profet_core import ProfetError, load_artifacts  # noqa: E402

PAGES = {
    "anchor": "pages/anchor_prediction.py",
    "scaler": "pages/scaler_prediction.py",
    "accuracy": "pages/model_accuracy.py",
    "about": "pages/about.py",
}


def _instances() -> list[str]:
    try:
        return load_artifacts().instances
    except ProfetError:
        # Collected anyway so that the `predictor` fixture fails with the loader's message.
        return ["no-artifacts"]


def pytest_generate_tests(metafunc):
    if "anchor" in metafunc.fixturenames:
        names = _instances()
        metafunc.parametrize("anchor", names, ids=names)


@pytest.fixture(scope="session")
def predictor():
    """The predictor the app serves (``$PROFET_ARTIFACTS`` or the repository's ``artifacts/``)."""
    return load_artifacts()


@pytest.fixture
def page(monkeypatch):
    """``page(name)``: an AppTest of one page, run from the repository root."""
    monkeypatch.chdir(ROOT)

    def make(name: str) -> AppTest:
        return AppTest.from_file(str(ROOT / PAGES.get(name, name)), default_timeout=60)

    return make


@pytest.fixture
def use_artifacts(monkeypatch):
    """``use_artifacts(path)``: the app loads artifacts from ``path`` for this test only."""
    from profet_app import common

    def use(path) -> None:
        monkeypatch.setenv("PROFET_ARTIFACTS", str(path))
        common.get_predictor.clear()

    yield use
    common.get_predictor.clear()


@pytest.fixture(autouse=True, scope="session")
def _no_keras_reset_after_each_run():
    """After every script run Streamlit clears Keras' session if ``keras`` is imported
    (``_clean_problem_modules``): 0.3-0.5 s a run, most of an AppTest's time. The app never
    imports TensorFlow (``test_smoke`` checks it in a fresh process); here ``keras`` is loaded
    only by another test file of the same pytest-xdist worker, so the reset is skipped (the app
    draws with Plotly: matplotlib, the other module it resets, is never loaded either)."""
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner._clean_problem_modules
    script_runner._clean_problem_modules = lambda: None
    yield
    script_runner._clean_problem_modules = original
