"""Library type misuse: every public function and Predictor method given a wrong type or a
well-formed but absurd value raises a ProfetError with one line, never a bare TypeError,
AttributeError, KeyError or OverflowError, and never answers with garbage: a function that
answers junk is a failure unless the table of what it accepts by design (:data:`ACCEPTS`) says
why."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest

import profet_core
from profet_core import ProfetError, ProfetValueError, load_artifacts, read_profile
from tests._utils import ROOT

ANCHOR = "g3s.xlarge"
EXAMPLE = ROOT / "examples" / "profile_g3s.json"
#: Arguments of every type a caller may pass by mistake.
JUNK = [5, None, [], "", b"", math.nan, object(), {"a": 1}, -1, 10**400, True]
JUNK_IDS = [
    "int",
    "none",
    "list",
    "empty-str",
    "bytes",
    "nan",
    "object",
    "dict",
    "neg",
    "huge",
    "bool",
]
#: Public functions given junk for every required argument (the lazily imported training ones
#: too); a function of no parameters cannot be given a wrong value.
FUNCTIONS = [
    name
    for name in profet_core.__all__
    if callable(getattr(profet_core, name))
    and not inspect.isclass(getattr(profet_core, name))
    and inspect.signature(getattr(profet_core, name)).parameters
]
#: The junk a function accepts by design, and why: ``(function, junk id)`` (``"*"``: every
#: value). Every other (function, junk) pair must raise a one-line ProfetError.
ACCEPTS = {
    ("format_number", "*"): "it formats any value for people: '–' for what is not a number",
    ("latency_seconds", "int"): "5 s is a valid step latency",
    ("latency_seconds", "none"): "None means no latency was given (the result is None)",
    ("load_artifacts", "none"): "None is the default folder ($PROFET_ARTIFACTS or artifacts/)",
    ("load_offerings", "none"): "None is the package's offerings snapshot",
    ("price_source", "none"): "None describes the package's offerings snapshot",
}


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture(scope="module")
def profile():
    return read_profile(EXAMPLE)


@pytest.fixture(scope="module")
def ops(profile):
    return profile[[c for c in profile.columns if c.startswith(("Host_", "Device_"))]]


def _call_with_junk(name: str, junk):
    func = getattr(profet_core, name)
    required = [
        p
        for p in inspect.signature(func).parameters.values()
        if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    return func(*[junk] * max(1, len(required)))


@pytest.mark.parametrize(("junk", "junk_id"), list(zip(JUNK, JUNK_IDS, strict=True)), ids=JUNK_IDS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_public_functions_refuse_junk_with_one_profet_error(name, junk, junk_id):
    if (name, junk_id) in ACCEPTS or (name, "*") in ACCEPTS:
        _call_with_junk(name, junk)  # valid by design (see ACCEPTS): it answers
        return
    with pytest.raises(ProfetError) as info:
        _call_with_junk(name, junk)
        pytest.fail(f"{name} accepted {junk_id} junk {junk!r:.40} without a word")
    assert "\n" not in str(info.value) and len(str(info.value)) < 600


def test_the_accepted_junk_table_names_real_functions_and_values():
    for name, junk_id in ACCEPTS:
        assert name in FUNCTIONS and (junk_id in JUNK_IDS or junk_id == "*"), (name, junk_id)


def _bad_predicts(ops):
    cell_text = ops.astype(object).assign(Device_Conv2D="abc")
    cell_list = ops.astype(object)
    cell_list["Device_Conv2D"] = [[1, 2]]
    dup = pd.concat([ops, ops[["Device_Conv2D"]]], axis=1)
    return [
        ("targets-empty", dict(profiles=ops, targets=[]), "targets"),
        ("targets-int", dict(profiles=ops, targets=5), "targets"),
        ("targets-list-of-int", dict(profiles=ops, targets=[5]), "target"),
        ("targets-anchor-only", dict(profiles=ops, targets=[ANCHOR]), "targets"),
        ("text-cell", dict(profiles=cell_text), "Device_Conv2D"),
        ("list-cell", dict(profiles=cell_list), "Device_Conv2D"),
        ("bool-column", dict(profiles=ops.assign(Device_Conv2D=True)), "Device_Conv2D"),
        ("duplicate-column", dict(profiles=dup), "Device_Conv2D"),
        ("latency-400-digits", dict(profiles=ops, anchor_latency_s=10**400), "anchor latency"),
        ("latency-inf", dict(profiles=ops, anchor_latency_s=math.inf), "anchor latency"),
        ("latency-nan", dict(profiles=ops, anchor_latency_s=math.nan), "anchor latency"),
        ("latency-negative", dict(profiles=ops, anchor_latency_s=-0.1), "anchor latency"),
        ("latency-text", dict(profiles=ops, anchor_latency_s="0.1"), "anchor latency"),
        ("latency-list-huge", dict(profiles=ops, anchor_latency_s=[10**400]), "anchor latency"),
        ("latency-object", dict(profiles=ops, anchor_latency_s=object()), "anchor latency"),
        ("batch-size-text", dict(profiles=ops, batch_size="x"), "batch_size"),
        ("input-size-400-digits", dict(profiles=ops, input_size=10**400), "input_size"),
        ("ops-1e300", dict(profiles=ops * 0 + 1e300), "1e\\+12"),
        ("method-list", dict(profiles=ops, method=["hybrid"]), "method"),
        ("latency-column-text", dict(profiles=ops.assign(batch_latency_s="x")), "batch_latency_s"),
    ]


def test_predict_refuses_misuse(predictor, ops):
    for case, kwargs, match in _bad_predicts(ops):
        with pytest.raises(ProfetValueError, match=match):
            predictor.predict(ANCHOR, **kwargs)
            pytest.fail(f"{case}: accepted")


def test_targets_as_one_string_is_that_instance(predictor, ops):
    table = predictor.predict(ANCHOR, ops, targets="p3.2xlarge").table
    assert table["target"].tolist() == ["p3.2xlarge"]
    frame = predictor.breakdown(ANCHOR, ops, targets="p3.2xlarge")
    assert set(frame["target"]) == {"p3.2xlarge"}


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda p, ops: p.breakdown(ANCHOR, ops, targets=[]), "targets"),
        (lambda p, ops: p.breakdown(ANCHOR, ops, targets=3.5), "targets"),
        (lambda p, ops: p.scale_from_point("p3.2xlarge", "batch", 10**400, 32, [64], 128), "ms"),
        (lambda p, ops: p.scale_from_point("p3.2xlarge", "batch", 38.5, 32, [64], 10**400), "px"),
        (
            lambda p, ops: p.scale("p3.2xlarge", "batch", {16: 10**400, 256: 210.0}, 64),
            "milliseconds",
        ),
        (lambda p, ops: p.scale("p3.2xlarge", "batch", {16: 20.0, 256: 210.0}, None), "size"),
        (lambda p, ops: p.scale("p3.2xlarge", "batch", {16: 20.0, 256: 210.0}, [None]), "size"),
        (lambda p, ops: p.scale_warnings("batch", None), "size: ms"),
        (lambda p, ops: p.scale_warnings("batch", {"a": "b"}), "size"),
        (lambda p, ops: p.novelty_band("x", True), "novelty"),
        (lambda p, ops: p.with_catalog(5), "catalog"),
        (lambda p, ops: p.with_catalog("prices.csv"), "catalog"),
        (lambda p, ops: p.size_range("batch", target=["x"]), "target"),
        (lambda p, ops: load_artifacts(catalog=5), "catalog"),
        (lambda p, ops: load_artifacts(5), "path"),
        (lambda p, ops: profet_core.estimate_run(pd.DataFrame(), 1000, 32, 1), "batch_latency_ms"),
        (lambda p, ops: profet_core.estimate_run(ops, 1000, 32, 1), "batch_latency_ms"),
        (lambda p, ops: profet_core.parse_profile({"Device_X": 1.0}), "bytes or text"),
        (lambda p, ops: profet_core.parse_profile("{}", name=5), "name"),
        (lambda p, ops: read_profile(None), "path"),
        (lambda p, ops: read_profile(EXAMPLE, steps="x"), "steps"),
    ],
    ids=[
        "breakdown-targets-empty",
        "breakdown-targets-float",
        "one-point-latency-400-digits",
        "one-point-other-size-400-digits",
        "two-point-latency-400-digits",
        "scale-size-none",
        "scale-size-list-none",
        "scale-warnings-none",
        "scale-warnings-text",
        "novelty-band-text",
        "with-catalog-int",
        "with-catalog-path-text",
        "size-range-target-list",
        "load-catalog-int",
        "load-path-int",
        "estimate-run-empty",
        "estimate-run-not-a-prediction",
        "parse-profile-dict",
        "parse-profile-name-int",
        "read-profile-none",
        "read-profile-steps-text",
    ],
)
def test_methods_refuse_misuse(predictor, ops, call, match):
    with pytest.raises(ProfetError, match=match):
        call(predictor, ops)


def test_refusals_are_one_line(predictor, ops):
    for case, kwargs, _ in _bad_predicts(ops):
        try:
            predictor.predict(ANCHOR, **kwargs)
        except ProfetError as exc:
            assert "\n" not in str(exc), case
            assert not any(len(w) > 60 and w.isdigit() for w in str(exc).split()), case


def test_good_calls_still_answer(predictor, profile, ops):
    result = predictor.predict(ANCHOR, profile, anchor_latency_s=np.float32(0.113))
    assert np.isfinite(result.table["batch_latency_ms"]).all()
    assert np.isfinite(predictor.scale("p3.2xlarge", "batch", {16: 20, 256: 210}, [64, 128])).all()
    run = profet_core.estimate_run(result.table, 50_000, 32, np.int64(10))
    assert (run["run_hours"] > 0).all()


@pytest.mark.parametrize(
    ("batch", "size"), [(1_000_000, 128), (32, 100_000)], ids=["batch-1e6", "input-1e5"]
)
def test_far_workloads_get_no_fit_probability_and_a_note(predictor, ops, batch, size):
    # batch 1,000,000 once "fit" a T4 with P 0.99
    result = predictor.predict(
        ANCHOR, ops, anchor_latency_s=0.113, batch_size=batch, input_size=size
    )
    assert result.table["p_fit"].isna().all()
    assert any("no P(fits)" in w and f"{batch:,}" in w for w in result.warnings())
    usual = predictor.predict(ANCHOR, ops, anchor_latency_s=0.113, batch_size=32, input_size=128)
    assert usual.table["p_fit"].notna().any()
    assert not any("no P(fits)" in w for w in usual.warnings())
