"""Every page runs without an exception, alone and through app.py's navigation; opening the app
does not import TensorFlow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.app._utils import no_exception

ROOT = Path(__file__).resolve().parents[2]
PAGE_FILES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))


#: What each page must show when opened (its working content, not just a title).
MAIN_CONTENT = {
    "anchor_prediction": lambda at, p: (
        at.button(key="predict").label == "Predict"
        and len(at.selectbox(key="anchor").options) == len(p.all_instances)
    ),
    "scaler_prediction": lambda at, p: (
        len(at.radio(key="by").options) == 2
        and any("Enter the batch latency" in i.value for i in at.info)
    ),
    "model_accuracy": lambda at, p: any("mape_pct" in d.value.columns for d in at.dataframe),
    "about": lambda at, p: "How to profile on the anchor instance" in [h.value for h in at.header],
    "experiment_design": lambda at, p: len(at.metric) >= 4,
}


@pytest.mark.parametrize("path", PAGE_FILES, ids=[Path(p).stem for p in PAGE_FILES])
def test_page_runs(page, predictor, path):
    at = page(path).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.title, f"{path} shows no title"
    assert MAIN_CONTENT[Path(path).stem](at, predictor), f"{path} lacks its main content"


@pytest.mark.parametrize("path", PAGE_FILES, ids=[Path(p).stem for p in PAGE_FILES])
def test_page_runs_through_navigation(page, predictor, path):
    at = page("app.py").run()
    no_exception(at)
    at.switch_page(path).run()
    no_exception(at)
    assert at.title


@pytest.mark.slow  # about 5 s or more
def test_app_does_not_import_tensorflow(predictor):
    script = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"pages = {PAGE_FILES!r}\n"
        f"at = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=120).run()\n"
        "assert not at.exception, at.exception\n"
        "for p in pages:\n"
        "    at.switch_page(p).run()\n"
        "    assert not at.exception, (p, at.exception)\n"
        "print('TF' if 'tensorflow' in sys.modules else 'NO-TF')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "NO-TF"


def _cache_decorators(path: Path):
    """``(function, keyword names)`` of every ``st.cache_data``/``st.cache_resource`` decorator."""
    import ast

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        for dec in getattr(node, "decorator_list", []):
            call = dec if isinstance(dec, ast.Call) else None
            func = call.func if call else dec
            if isinstance(func, ast.Attribute) and func.attr in ("cache_data", "cache_resource"):
                yield node.name, {k.arg for k in call.keywords} if call else set()


def test_every_app_cache_is_bounded():
    """A cache shared by every session holds at most a bounded number of entries (or
    forgets them after a time), so sessions cannot grow the server's memory through it."""
    files = [ROOT / "app.py", ROOT / "profet_app/common.py", *(ROOT / p for p in PAGE_FILES)]
    found = [(f.name, name, kw) for f in files for name, kw in _cache_decorators(f)]
    assert found, "no cache found: the check looks in the wrong place"
    unbounded = [(f, name) for f, name, kw in found if not kw & {"max_entries", "ttl"}]
    assert not unbounded, unbounded
