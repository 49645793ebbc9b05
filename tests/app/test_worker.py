"""A many-row prediction runs in a child process (profet_app/worker.py): the app server keeps
none of its peak, imports or fragmentation; the answer and the errors are the in-process ones."""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

from profet_app import common, worker
from profet_core import (
    OfferingFilter,
    Predictor,
    PredictRequest,
    ProfetError,
    answer,
    load_artifacts,
    parse_profile,
)
from tests.app._utils import no_exception


@pytest.fixture
def rows3(predictor):
    """A three-row profile of the first instance's example, and that instance."""
    anchor = predictor.instances[0]
    ops = predictor.examples[anchor]["profile"]
    rows = [{k: f * v for k, v in ops.items()} for f in (1, 2, 3)]
    return anchor, parse_profile(json.dumps(rows), "rows.json")


#: The offerings the Anchor page prices (both markets).
BOTH = OfferingFilter(spot=None)


@pytest.fixture
def in_child_only(monkeypatch):
    """From 2 rows in a child; this process' engine fails (the child has its own)."""
    monkeypatch.setattr(worker, "CHILD_MIN_ROWS", 2)

    def refuse(*args, **kwargs):
        raise AssertionError("predicted in the server's process")

    monkeypatch.setattr(Predictor, "predict_prepared", refuse)


def test_many_rows_are_predicted_in_a_child(predictor, rows3, in_child_only):
    anchor, profile = rows3
    request = PredictRequest(batch_size=32, input_size=224, gpus="all")
    got = worker.predict(predictor, anchor, profile, request, BOTH)
    assert got.prediction.table["row"].nunique() == 3
    assert got.offerings is not None and (got.offerings.table["row"] == 0).all()


def test_the_childs_answer_equals_the_in_process_one(predictor, rows3, monkeypatch):
    anchor, profile = rows3
    request = PredictRequest(precision="amp", gpus="all")
    expected = answer(predictor, anchor, profile, request, filter=BOTH)
    monkeypatch.setattr(worker, "CHILD_MIN_ROWS", 2)
    got = worker.predict(predictor, anchor, profile, request, BOTH)
    pd.testing.assert_frame_equal(got.prediction.table, expected.prediction.table, check_exact=True)
    pd.testing.assert_frame_equal(got.prediction.rows, expected.prediction.rows)
    pd.testing.assert_frame_equal(got.offerings.table, expected.offerings.table, check_exact=True)
    pd.testing.assert_frame_equal(got.breakdown, expected.breakdown, check_exact=True)
    p, e = got.prediction, expected.prediction
    assert (p.notes, p.ignored_ops, p.method) == (e.notes, e.ignored_ops, e.method)
    assert got.offerings.notes == expected.offerings.notes


def test_a_bad_input_in_the_child_raises_its_profet_error(predictor, rows3, in_child_only):
    anchor, profile = rows3
    with pytest.raises(ProfetError, match="targets name only the anchor"):
        worker.predict(predictor, anchor, profile, PredictRequest(targets=[anchor]), BOTH)


def test_a_child_that_dies_is_one_line(predictor, rows3, in_child_only, monkeypatch):
    anchor, profile = rows3
    monkeypatch.setattr(sys, "executable", shutil.which("false"))  # exits 1 and says nothing
    with pytest.raises(ProfetError, match=r"3 profile rows stopped .*exit status 1"):
        worker.predict(predictor, anchor, profile, PredictRequest(), BOTH)


def test_other_artifacts_on_disk_are_not_used(predictor, rows3, tmp_path, monkeypatch):
    # A retrain after the app loaded its artifacts: the child sees another manifest, so the
    # server's own (loaded) models answer, as for one row.
    folder = tmp_path / "artifacts"
    shutil.copytree(predictor.bundle.path, folder)
    loaded = load_artifacts(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "retrained": True}))
    anchor, profile = rows3
    expected = predictor.predict(anchor, profile).table
    monkeypatch.setattr(worker, "CHILD_MIN_ROWS", 2)
    calls, real = [], Predictor.predict_prepared
    monkeypatch.setattr(
        Predictor, "predict_prepared", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    got = worker.predict(loaded, anchor, profile, PredictRequest(), BOTH)
    assert calls and len(calls) <= 2  # answered here (table, offerings), by the server's models
    table = got.prediction.table
    np.testing.assert_allclose(table["batch_latency_ms"], expected["batch_latency_ms"])


def test_the_anchor_page_predicts_a_many_row_file_in_a_child(page, predictor, in_child_only):
    anchor = predictor.instances[0]
    ops = predictor.examples[anchor]["profile"]
    rows = [{k: f * v for k, v in ops.items()} for f in (1, 2, 3)]
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value(anchor)
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(json.dumps(rows))
    at.button(key="predict").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state[common.ANCHOR_RESULT].table["row"].nunique() == 3


def test_no_interpreter_to_start_predicts_in_process(predictor, rows3, monkeypatch):
    anchor, profile = rows3
    monkeypatch.setattr(worker, "CHILD_MIN_ROWS", 2)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    calls, real = [], Predictor.predict_prepared
    monkeypatch.setattr(
        Predictor, "predict_prepared", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    got = worker.predict(predictor, anchor, profile, PredictRequest(), BOTH)
    assert calls and got.prediction.table["row"].nunique() == 3


def test_what_the_child_prints_does_not_corrupt_its_answer(monkeypatch):
    import io
    import pickle

    class Stream:
        def __init__(self, data=b""):
            self.buffer = io.BytesIO(data)

    def noisy(*task):
        print("a library's notice on stdout")
        return "the answer"

    stdout = Stream()
    task = ("path", "m", "c", "a", "p", PredictRequest(), BOTH)
    monkeypatch.setattr(sys, "stdin", Stream(pickle.dumps(task)))
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(worker, "_answer_in_child", noisy)
    worker._main()
    assert pickle.loads(stdout.buffer.getvalue()) == (True, "the answer")
