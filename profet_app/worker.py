"""A many-row prediction in a child process, so that the app server's memory returns to what it
was when the session ends. No Streamlit import (the child runs this file).

A 43 MB upload is ~95,000 profiles: its prediction peaks at ~1.2 GB, imports scikit-learn's
compiled tree walker (~70 MB the server would keep for good) and leaves the C allocator's arenas
fragmented. In a child that exits, all of that goes back to the system; the server holds only
the answer (its large arrays, which it frees whole).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

from profet_core import Answer, Predictor, ProfetError, answer

#: From this many profile rows a prediction runs in a child process (the tree ensembles' compiled
#: walk, with its scikit-learn import, starts at 1,000 rows; a child costs ~1-2 s to start).
CHILD_MIN_ROWS = 1000


def predict(predictor: Predictor, anchor: str, profiles, request, offering_filter) -> Answer:
    """``answer(predictor, anchor, profiles, request, filter=offering_filter)``, in a child
    process from :data:`CHILD_MIN_ROWS` profile rows.

    The child (this file run by the server's interpreter) loads the predictor's artifacts
    folder; where it finds other artifacts there (a retrain since the app loaded them), the
    predictor has another catalog or no child can be started, the answer is made in process.

    Raises
    ------
    ProfetError
        As ``answer``; or when the child ends without an answer (killed, e.g. out of memory).
    """
    args = (anchor, profiles, request)
    if len(profiles) < CHILD_MIN_ROWS:
        return answer(predictor, *args, filter=offering_filter)
    bundle = predictor.bundle
    task = (str(bundle.path), bundle.manifest, predictor.catalog, *args, offering_filter)
    # A fresh interpreter on this file, not multiprocessing: forking a server that runs threads
    # is unsafe, and multiprocessing's spawn runs the parent's main module again.
    try:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve())],
            input=pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL),
            capture_output=True,
            check=False,
        )
    except OSError:  # no interpreter to start (an embedded Python): answered in process
        return answer(predictor, *args, filter=offering_filter)
    try:
        ok, got = pickle.loads(done.stdout)
    except Exception:  # no answer: killed (out of memory?) or broken before it could say
        raise ProfetError(
            f"the prediction of {len(profiles):,} profile rows stopped before it answered "
            f"(exit status {done.returncode}; out of memory?); try a file with fewer rows"
        ) from None
    if not ok:
        raise got  # the exception answer raised (a ProfetError for bad input)
    if got is None:  # the child found other artifacts than the app's
        return answer(predictor, *args, filter=offering_filter)
    return got


def _answer_in_child(path, manifest, catalog, anchor, profiles, request, offering_filter):
    """The child's work: the artifacts at ``path`` (None where they are not the parent's: other
    manifest or catalog), then the answer."""
    from profet_core import load_artifacts

    try:
        predictor = load_artifacts(path)
    except ProfetError:
        return None
    if predictor.bundle.manifest != manifest or not predictor.catalog.equals(catalog):
        return None
    return answer(predictor, anchor, profiles, request, filter=offering_filter)


def _main() -> None:
    """The child: a pickled task on stdin, ``(True, answer)`` or ``(False, exception)`` pickled
    on stdout."""
    # The answer owns stdout: anything a library prints goes to stderr instead, so it cannot
    # corrupt the pickle the parent reads.
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    task = pickle.loads(sys.stdin.buffer.read())
    try:
        reply = (True, _answer_in_child(*task))
    except Exception as exc:  # handed to the parent, which raises it as answer would
        reply = (False, exc)
    try:
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an exception that does not pickle: its type and message
        data = pickle.dumps((False, RuntimeError(f"{type(reply[1]).__name__}: {exc}")))
    out.write(data)
    out.flush()


if __name__ == "__main__":
    _main()
