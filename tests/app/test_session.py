"""The app's process-level memory settings (profet_app/session.py): what a finished session
freed goes back to the system rather than staying in an allocator's pools."""

from __future__ import annotations

import ctypes

import pyarrow
import pytest

from profet_app import session


@pytest.fixture
def restored_pool():
    pool = pyarrow.default_memory_pool()
    yield
    pyarrow.set_memory_pool(pool)


def test_pyarrow_allocates_from_the_c_library(restored_pool, monkeypatch):
    # pandas' string columns live in pyarrow's pool; its default (mimalloc or jemalloc) kept
    # ~200 MB that three rounds of five 43 MB uploads had freed.
    calls = []

    class FakeLibc:
        def mallopt(self, param, value):
            calls.append((param, value))

    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    session.tune_allocator.__wrapped__()  # the cached one has run once already, or will
    assert pyarrow.default_memory_pool().backend_name == "system"
    # glibc: a fixed mapping threshold (no growth to 32 MiB) and 2 arenas shared by the threads
    assert calls == [(-3, 256 * 1024), (-8, 2)]


def test_no_glibc_is_no_error(restored_pool, monkeypatch):
    def no_library(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", no_library)
    session.tune_allocator.__wrapped__()
    assert pyarrow.default_memory_pool().backend_name == "system"


def test_an_ended_session_state_is_cleared_with_its_widgets_callbacks(monkeypatch):
    # Streamlit's runtime loop keeps the last shut-down session alive; its state held the page's
    # tables (~400 MB for a 43 MB upload), and a widget's callback the page's globals.
    from streamlit.runtime.state.common import WidgetMetadata
    from streamlit.runtime.state.session_state import SessionState

    page_globals = {"result": object()}
    callback = eval("lambda: None", page_globals)  # a page function: its globals are the page's
    state = SessionState()
    state["anchor_result"] = object()
    state._new_widget_state.set_widget_metadata(
        WidgetMetadata("profile_file", lambda v: v, lambda v: v, "int_value", callback=callback)
    )
    monkeypatch.setattr(session, "release_freed_memory", lambda: None)
    session._release_later(("session-id", state))
    assert "anchor_result" not in state
    assert state._new_widget_state.widget_metadata == {}
