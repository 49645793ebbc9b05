"""One request object (``PredictRequest``): every field checked once, by one table, whichever
door it comes in by; the keyword form and the object form answer alike; one question's engine
work is done once however many views of it are asked for."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from profet_core import (
    OfferingFilter,
    PredictRequest,
    ProfetValueError,
    answer,
    load_artifacts,
    predict_offerings,
    read_profile,
)
from profet_core.prediction import _blocks
from profet_core.prediction._request import CONSTRAINTS, request_fields, request_of
from tests._utils import ROOT

EXAMPLE = ROOT / "examples" / "profile_g3s.json"


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture(scope="module")
def profile():
    return read_profile(EXAMPLE)


BAD = {
    "anchor": (5, "anchor 5 is not allowed"),
    "anchor_latency_s": (["x"], "anchor latency 'x' is not a number"),
    "method": ("", "method is empty"),
    "targets": ([], "targets is empty"),
    "steps": (0, "steps 0 at row 0 is not allowed"),
    "batch_size": (1.5, "batch_size 1.5 is not allowed"),
    "input_size": (10**400, "input_size 1e\\+400 .*is not allowed"),
    "precision": ("fp16", "precision 'fp16' is not allowed"),
    "gpus": (0, "gpus 0 is not allowed"),
    "anchor_amp_latency_s": (-1.0, "anchor_amp_latency_s -1 s is not allowed"),
    "params": (True, "params True is not allowed"),
    "dataset_images": ("5", "dataset_images '5' is not allowed"),
    "epochs": (10**6, "epochs 1000000 is not allowed; it must be a whole number 1..100,000"),
    "run_steps": (-3, "run_steps -3 is not allowed"),
    "framework": ("jax", "framework 'jax' is not allowed"),
}


def test_every_field_has_one_constraint_and_a_refusal_test():
    fields = [f.name for f in dataclasses.fields(PredictRequest)]
    assert fields == list(CONSTRAINTS)
    assert set(BAD) == set(fields)


@pytest.mark.parametrize("field", list(BAD))
def test_each_field_is_refused_by_name_at_every_door(predictor, profile, field, tmp_path):
    value, match = BAD[field]
    with pytest.raises(ProfetValueError, match=match):
        PredictRequest(**{field: value})
    if field == "anchor":  # the calls take it beside the profile
        with pytest.raises(ProfetValueError, match=match):
            predictor.predict(value, profile)
        return
    with pytest.raises(ProfetValueError, match=match):  # the keyword form: the same check
        predictor.predict("g3s.xlarge", profile, **{field: value})
    with pytest.raises(ProfetValueError, match=match):
        predict_offerings(predictor, "g3s.xlarge", profile, **{field: value})


def test_fields_are_checked_together():
    with pytest.raises(ProfetValueError, match="only used with precision amp"):
        PredictRequest(anchor_amp_latency_s=0.05)
    with pytest.raises(ProfetValueError, match="dataset_images and epochs go together"):
        PredictRequest(epochs=3)
    with pytest.raises(ProfetValueError, match="not both"):
        PredictRequest(dataset_images=10, epochs=1, run_steps=5)


def test_a_request_or_keywords_not_both(predictor, profile):
    with pytest.raises(ProfetValueError, match="not both"):
        predictor.predict("g3s.xlarge", profile, PredictRequest(), precision="amp")
    with pytest.raises(ProfetValueError, match="unknown request field.*'latency'"):
        predictor.predict("g3s.xlarge", profile, latency=0.1)
    with pytest.raises(ProfetValueError, match="request must be a PredictRequest"):
        predictor.predict("g3s.xlarge", profile, 0.113)
    with pytest.raises(ProfetValueError, match="differs from the request's"):
        predictor.predict("g4dn.xlarge", profile, PredictRequest(anchor="g3s.xlarge"))


def test_the_object_and_the_keywords_answer_alike(predictor, profile):
    kw = dict(anchor_latency_s=0.113, precision="amp", gpus="all", batch_size=32)
    by_words = predictor.predict("g3s.xlarge", profile, **kw)
    by_object = predictor.predict(None, profile, PredictRequest(anchor="g3s.xlarge", **kw))
    pd.testing.assert_frame_equal(by_words.table, by_object.table, check_exact=True)
    assert by_words.notes == by_object.notes


def test_a_run_in_the_request_adds_its_totals_and_picks(predictor, profile):
    got = predictor.predict(None, profile, dataset_images=50_000, epochs=3, batch_size=32)
    want = predictor.predict(None, profile).with_run(50_000, 32, 3)
    pd.testing.assert_frame_equal(got.table, want.table, check_exact=True)
    assert {"run_hours", "run_usd", "pick"} <= set(got.table)


def test_steps_in_the_request_rescale_as_the_reader_does(predictor):
    ten = ROOT / "examples" / "profile_g3s_10steps.json"
    by_reader = predictor.predict("g3s.xlarge", read_profile(ten, steps=10))
    by_request = predictor.predict("g3s.xlarge", read_profile(ten), steps=10)
    pd.testing.assert_frame_equal(by_reader.table, by_request.table, check_exact=True)
    assert by_reader.warnings() == by_request.warnings()


def test_fields_travel_to_a_child_process_and_back():
    request = PredictRequest(
        anchor="g3s.xlarge", anchor_latency_s=[0.1, None], gpus=[4, 2], dataset_images=9, epochs=1
    )
    import json

    again = request_of(json.loads(json.dumps(request_fields(request))))
    assert json.dumps(request_fields(again)) == json.dumps(request_fields(request))
    assert again.gpus == (2, 4)
    assert request.options[1] == [2, 4]
    with pytest.raises(ProfetValueError, match="unknown request field"):
        request_of({"anchors": "x"})


def _count_evaluations(monkeypatch) -> list:
    """Each target the engine evaluates, as ``(method, target)``."""
    seen, real = [], _blocks.Blocks._evaluate

    def counted(self, predictor, method, targets):
        seen.extend((method, t) for t in targets)
        return real(self, predictor, method, targets)

    monkeypatch.setattr(_blocks.Blocks, "_evaluate", counted)
    return seen


def test_one_answer_evaluates_each_target_once(predictor, profile, monkeypatch):
    seen = _count_evaluations(monkeypatch)
    got = answer(predictor, None, profile, precision="amp", gpus="all", filter=OfferingFilter())
    assert len(seen) == len(set(seen)) == got.evaluations
    assert {t for _, t in seen} == set(predictor.targets("g3s.xlarge"))
    # the same views asked for one by one evaluate some targets again
    seen.clear()
    predictor.predict(None, profile, precision="amp", gpus="all")
    predict_offerings(predictor, None, profile, precision="amp", gpus="all")
    assert len(seen) > len(set(seen))


def test_one_answer_equals_its_views_asked_one_by_one(predictor, profile):
    kw = dict(anchor_latency_s=0.113, precision="amp", gpus="all", batch_size=32)
    f = OfferingFilter(spot=None)
    got = answer(predictor, "g3s.xlarge", profile, filter=f, dataset_images=50_000, epochs=2, **kw)
    table = predictor.predict("g3s.xlarge", profile, dataset_images=50_000, epochs=2, **kw).table
    pd.testing.assert_frame_equal(got.prediction.table, table, check_exact=True)
    offers = predict_offerings(
        predictor, "g3s.xlarge", profile, filter=f, dataset_images=50_000, epochs=2, **kw
    )
    pd.testing.assert_frame_equal(got.offerings.table, offers.table, check_exact=True)
    assert got.offerings.notes == offers.notes
    pd.testing.assert_frame_equal(got.breakdown, predictor.breakdown("g3s.xlarge", profile))
