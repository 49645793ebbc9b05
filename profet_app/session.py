"""A session's end: the server shuts a session down when its browser leaves, and hands the
memory it freed back to the system."""

from __future__ import annotations

import ctypes
import functools
import gc
import threading

import streamlit as st


def release_freed_memory() -> None:
    """Collect garbage and hand the memory the C allocator keeps free back to the system.

    glibc keeps what a finished session freed (the parsed profile, its tables) in its arenas:
    without a trim the server's resident memory stays at its peak after every session is gone.
    A no-op where the C library has no ``malloc_trim`` (macOS, musl).
    """
    gc.collect()
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


#: glibc's mallopt parameters: the size from which a block gets its own mapping (returned to the
#: system when freed) and the number of arenas threads share.
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8


@functools.cache  # once a process
def tune_allocator() -> None:
    """Have the memory a finished session freed go back to the system.

    - pyarrow (pandas' string columns) allocates from the C library, not its default mimalloc
      pool, which keeps what it freed (200 MB after three rounds of five 43 MB uploads).
    - glibc gives every block of 256 KiB or more (a column of a parsed profile or prediction
      table) its own mapping, which ``free`` returns to the system; its default raises that
      threshold after each freed block up to 32 MiB, and the tables of one session then land in
      arenas that stay fragmented after it ends. Threads (one per session) share 2 arenas.

    Called once a process, from the first session's run (the app's earliest code).
    """
    try:
        import pyarrow

        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    except ImportError:  # pandas without pyarrow: nothing to switch
        pass
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (macOS, musl)
        return
    mallopt(_M_MMAP_THRESHOLD, 256 * 1024)
    mallopt(_M_ARENA_MAX, 2)


def clear_session_state(state) -> None:
    """Drop what an ended session holds in its ``state`` (the parsed profile, the prediction and
    offerings tables: ~400 MB for a 43 MB upload).

    Streamlit's runtime loop keeps the last session it looked at in a local variable until it
    looks at another, so a shut-down session's state outlived it when it was the last one; and
    its ``clear`` keeps the widgets' callbacks, whose page globals hold the page's last results.
    """
    clear = getattr(state, "clear", None)
    if callable(clear):
        clear()
    # The widgets' callbacks stay (a page's functions, whose globals hold its last results).
    metadata = getattr(getattr(state, "_new_widget_state", None), "widget_metadata", None)
    if isinstance(metadata, dict):
        metadata.clear()


def _release_later(marker: tuple) -> None:
    # Runs as the session shuts down (its cached marker released): its state goes first.
    clear_session_state(marker[1])
    timer = threading.Timer(RELEASE_DELAY_S, release_freed_memory)
    timer.daemon = True
    timer.start()


#: Seconds between a session's disconnect and the trim (its shutdown frees its state first).
RELEASE_DELAY_S = 5.0


def _session_marker(session_id: str) -> tuple:
    """The session's id and its state (``SessionState``), for :func:`_release_later`."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return session_id, getattr(getattr(ctx, "session_state", None), "_state", None)


try:  # a session-scoped resource: released (and _release_later called) when the session ends
    _session_marker = st.cache_resource(
        scope="session", max_entries=1, on_release=_release_later, show_spinner=False
    )(_session_marker)
except TypeError:  # a Streamlit before session-scoped caches: no trim at the session's end
    pass


def end_with_the_browser() -> None:
    """Have the server shut this session down, and release what it holds (uploaded files, the
    prediction in session state, download data), as soon as its browser disconnects.

    By default Streamlit keeps a disconnected session for a reconnect; a kept session that
    expires is dropped without being shut down, so its uploaded files and download data stay in
    the server's memory for good (five sessions with 43 MB profiles grew it by gigabytes). The
    price: a browser that loses its connection and comes back gets a fresh session (the inputs
    stay in the browser; the prediction is made again). After the session has gone, the memory
    it freed is handed back to the system (:func:`release_freed_memory`). Called by ``app.py``
    on every run; a no-op outside a served app (bare mode) or on a Streamlit without the option.
    """
    from streamlit import runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not runtime.exists():
        return
    mark = getattr(runtime.get_instance(), "mark_session_nonresumable", None)
    if callable(mark):
        mark(ctx.session_id)
    tune_allocator()
    _session_marker(ctx.session_id)
