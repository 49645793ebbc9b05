"""Run times per SkyPilot accelerator configuration and the time estimator (no SkyPilot needed):
the offerings' own answer, data-parallel steps, the reasons where there is none, refusals."""

from __future__ import annotations

import copy
import math
import os
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from profet_core import (
    PredictRequest,
    ProfetValueError,
    load_artifacts,
    predict_offerings,
    read_profile,
)
from profet_core.sky import (
    UNANSWERED_S,
    estimate_runs,
    reason_for,
    run_spec,
    time_estimator,
)
from tests.core.sky._utils import ROOT

RUN = {"dataset_images": 50_000, "epochs": 10}
G3S = PredictRequest(anchor="g3s.xlarge")


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture(scope="module")
def profile():
    return read_profile(ROOT / "examples" / "profile_g3s.json")


class Resources:
    """What the estimator reads of a ``sky.Resources``: its ``accelerators``."""

    def __init__(self, accelerators):
        self.accelerators = accelerators


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "the run's length"),
        ({"dataset_images": 100, "epochs": 1, "run_steps": 10}, "not both"),
        ({"dataset_images": 100}, "go together"),
        ({"dataset_images": 0, "epochs": 1}, "dataset_images is 0"),
        ({"dataset_images": 100, "epochs": 2.5}, "epochs is 2.5"),
        ({"run_steps": True}, "run_steps is True"),
        ({"run_steps": 10, "batch_size": 10**7}, "batch_size is 10000000"),
        ({"run_steps": 10**12, "batch_size": 1000}, "over 100,000,000,000 images"),
    ],
    ids=["none", "both", "half", "zero", "fraction", "bool", "huge-batch", "too-much-work"],
)
def test_run_spec_refuses(profile, kwargs, match):
    with pytest.raises(ProfetValueError, match=match):
        run_spec(profile, **kwargs)


def test_run_spec_reads_the_profile_batch_and_counts_steps_as_work(profile):
    assert run_spec(profile, **RUN).batch_size == 32  # the file's own batch_size
    steps = run_spec(profile, run_steps=1000, batch_size=16)
    assert (steps.dataset_images, steps.epochs, steps.batch_size) == (16_000, 1, 16)
    bare = profile.drop(columns="batch_size")
    with pytest.raises(ProfetValueError, match="does not say its batch size"):
        run_spec(bare, **RUN)


@pytest.mark.parametrize(
    ("name", "count", "match"),
    [
        (None, 0, "no accelerator"),
        ("tpu-v3-8", 1, "is a TPU"),
        ("Inferentia2", 1, "is not a GPU"),
        ("L4", 0.5, "a fraction of a GPU"),
        ("H100", 128, "answers for 1..64"),
        ("MI300X", 8, "has no spec model"),
        ("B300", 8, "has no spec model"),
        ("H100", "8", "is not a number"),
        ("H100", float("nan"), "GPU count nan of 'H100' is not a number of GPUs"),
        ("H100", float("inf"), "GPU count inf of 'H100' is not a number of GPUs"),
        ("T4", -2, "GPU count -2 of 'T4' is not a number of GPUs"),
        ("T4", 10**400, "1e+400 (a 401-digit number) GPUs: the data-parallel model answers"),
    ],
    ids=[
        *("none", "tpu", "inferentia", "fraction", "too-many", "amd", "no-spec", "text-count"),
        *("nan", "inf", "negative", "10^400"),
    ],
)
def test_reason_for_what_profet_cannot_answer(name, count, match):
    assert match in reason_for(name, count)


@pytest.mark.parametrize(("name", "count"), [("T4", 1), ("H100", 8), ("A100-80GB", 4.0)])
def test_no_reason_where_profet_answers(name, count):
    assert reason_for(name, count) == ""


def test_run_times_are_the_offerings_views(predictor, profile):
    # The same run on the shipped snapshot's offerings of each configuration, all its GPUs used.
    configs = [("T4", 1), ("A10G", 1), ("A100", 8), ("H100", 8)]
    instances = ["g4dn.xlarge", "g5.xlarge", "p4d.24xlarge", "p5.48xlarge"]
    table, _ = estimate_runs(predictor, profile, configs, run_spec(profile, **RUN), G3S)
    off = predict_offerings(predictor, "g3s.xlarge", profile, gpus="all", batch_size=32, **RUN)
    off = off.table
    off = off[(off["cloud"] == "aws") & off["instance"].isin(instances)].set_index("instance")
    for (name, count), inst, hours, steps in zip(
        configs, instances, table["run_hours"], table["steps"], strict=True
    ):
        assert hours == pytest.approx(off.loc[inst, "run_hours"], rel=1e-12), (name, count)
        # data-parallel at the profile's per-GPU batch: steps at the global batch
        assert steps == math.ceil(50_000 / (32 * count)) * 10
    assert (table["run_hours_low"] < table["run_hours"]).all()
    assert (table["run_hours"] < table["run_hours_high"]).all()
    assert (table["reason"] == "").all()


def test_the_anchors_own_gpu_needs_its_latency(predictor, profile):
    bare = profile.drop(columns="batch_latency_s")
    table, _ = estimate_runs(predictor, bare, [("M60", 1)], run_spec(profile, **RUN), G3S)
    assert "anchor's own GPU" in table.loc[0, "reason"] and np.isnan(table.loc[0, "run_hours"])
    spec, asked = run_spec(profile, **RUN), G3S.replace(anchor_latency_s=0.1)
    timed = estimate_runs(predictor, bare, [("M60", 1)], spec, asked)[0]
    assert timed.loc[0, "run_hours"] == pytest.approx(0.1 * 15_630 / 3600)


def test_estimator_gives_seconds_and_never_a_silent_guess(predictor, profile):
    est = time_estimator(profile, predictor=predictor, **RUN)
    table, _ = estimate_runs(predictor, profile, [("A100", 8), ("T4", 1)], est.run, G3S)
    assert est(Resources({"A100": 8})) == pytest.approx(table.loc[0, "run_hours"] * 3600)
    assert est(Resources({"T4": 1})) == pytest.approx(table.loc[1, "run_hours"] * 3600)
    assert est(Resources({"H100": 3})) < est(Resources({"H100": 1}))  # a count not prepared
    with pytest.warns(UserWarning, match=r"fraction of a GPU.*L4:0.5"):
        assert est(Resources({"L4": 0.5})) == UNANSWERED_S
    with pytest.warns(UserWarning, match="without accelerators"):
        assert est(Resources(None)) == UNANSWERED_S
    assert set(est.unanswered) == {"L4:0.5", "a resource without accelerators"}
    assert UNANSWERED_S > 1000 * 3600 and math.isfinite(UNANSWERED_S)


def test_the_estimator_can_be_copied_and_pickled(predictor, profile):
    # SkyPilot deep-copies a task with ordered resources, its estimator with it; the predictor's
    # open artifacts file pickled nowhere ("cannot pickle '_io.BufferedReader' object")
    est = time_estimator(profile, predictor=predictor, **RUN)
    want = est(Resources({"H100": 8}))
    for other in (copy.deepcopy(est), pickle.loads(pickle.dumps(est))):
        assert other(Resources({"H100": 8})) == want  # predicted before: kept
        # a count never asked about: the copy loads the artifacts again and predicts it
        assert other(Resources({"H100": 3})) == pytest.approx(est(Resources({"H100": 3})))


def test_the_estimator_answers_every_count_and_name_without_a_traceback(predictor, profile):
    est = time_estimator(profile, predictor=predictor, **RUN)
    with pytest.warns(UserWarning, match=r"401-digit number\) GPUs: the data-parallel"):
        assert est(Resources({"T4": 10**400})) == UNANSWERED_S
    with pytest.warns(UserWarning) as said:
        assert est(Resources({"\x1b]8;;http://evil.example\x07X": 1})) == UNANSWERED_S
    assert "\x1b" not in str(said[0].message) and "\x07" not in str(said[0].message)
    for bad in (None, 5, [("T4",)], ["T4"]):
        with pytest.raises(ProfetValueError, match="configs must be .accelerator name, GPU count"):
            est.warnings_for(bad)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda p: pd.concat([p, p], ignore_index=True), "has 2 rows"),
        (lambda p: p.assign(**{c: 0.0 for c in p.columns if c.startswith("Device_")}), "GPU"),
        (lambda p: p.drop(columns="instance"), "give --anchor"),
    ],
    ids=["two-rows", "cpu-profile", "no-anchor"],
)
def test_estimator_refuses_at_once(predictor, profile, change, match):
    with pytest.raises(ProfetValueError, match=match):
        time_estimator(change(profile), predictor=predictor, **RUN)


def test_estimator_refuses_a_bad_precision(predictor, profile):
    with pytest.raises(ProfetValueError, match="precision 'fp16'"):
        time_estimator(profile, predictor=predictor, precision="fp16", **RUN)


def test_nothing_imports_skypilot_until_a_plan_runs():
    code = (
        "import sys, profet_core, profet_core.sky\n"
        "from profet_core import sky_plan, time_estimator, SkyPlan\n"
        "import profet_core.cli._main as c; c.build_parser()\n"
        "print('sky' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"catalog": 5}, "the catalog folder must be a path"),
        ({"clouds": 5}, "clouds must be a list of cloud names"),
        ({"clouds": [5]}, "clouds must be a list of cloud names"),
        ({"clouds": []}, r"clouds must be a list .* got \[\]"),
        ({"minimize": "fast"}, "minimize 'fast' is not allowed"),
        ({"artifacts": 5}, "the artifacts path must be a path"),
        ({"timeout_s": "x"}, "timeout_s 'x' is not allowed"),
        ({"epochs": None}, "go together"),
    ],
    ids=[
        "catalog",
        "clouds-int",
        "clouds-list-int",
        "clouds-empty",
        "minimize",
        "artifacts",
        "timeout",
        "half-run",
    ],
)
def test_sky_plan_refuses_bad_arguments_before_skypilot_runs(profile, tmp_path, kwargs, match):
    from profet_core import sky_plan

    task = tmp_path / "t.yaml"
    task.write_text("resources:\n  accelerators: T4\n")
    with pytest.raises(ProfetValueError, match=match):
        sky_plan(task, profile, **{"dataset_images": 100, "epochs": 1, **kwargs})
