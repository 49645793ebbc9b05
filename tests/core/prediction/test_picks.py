"""The one set of picks: fastest, cheapest and best value computed once per input row
by one named criterion (per step, per image, whole run), with run totals per configuration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts, predict_offerings, read_profile
from profet_core.prediction._picks import (
    PER_IMAGE,
    PER_STEP,
    WHOLE_RUN,
    interval_words,
    pick_arrays,
    steps_text,
    with_picks,
)

RUN = {"dataset_images": 50_000, "batch_size": 32, "epochs": 10}


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture(scope="module")
def profile():
    return read_profile("examples/profile_g3s.json")


def _toy(**extra) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "row": [0, 0, 0, 1, 1],
            "target": ["a", "b", "c", "a", "b"],
            "batch_latency_ms": [10.0, 20.0, 40.0, 5.0, 5.0],
            "usd_per_1000_steps": [3.0, 1.0, 0.5, 2.0, 1.0],
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("extra", "want"),
    [
        ({}, PER_STEP),
        ({"gpus": [1, 1, 1, 1, 1]}, PER_STEP),
        ({"gpus": [1, 8, 1, 1, 8]}, PER_IMAGE),
        ({"gpus": [1, 8, 1, 1, 8], "run_hours": 1.0, "run_usd": 1.0}, WHOLE_RUN),
        ({"gpus": [8] * 5, "gpus_used": [1] * 5}, PER_STEP),
    ],
    ids=["no-gpus", "one-gpu", "gpu-counts-differ", "run", "offerings-use-one"],
)
def test_the_criterion_follows_what_the_rows_compare(extra, want):
    assert with_picks(_toy(**extra))[1] is want


def test_picks_per_row_and_their_tie_breaks():
    out, crit = with_picks(_toy())
    assert crit is PER_STEP
    # row 0: fastest a, cheapest c, best value b (products 30, 20, 20: the earlier on a tie)
    # row 1: a time tie is broken by the cost, so b is the fastest and the cheapest
    want = ["fastest", "best value", "cheapest", "", "fastest, cheapest, best value"]
    assert out["pick"].tolist() == want


def test_per_image_adds_the_columns_its_picks_rest_on():
    """A step of 8 GPUs does 8 batches: per image, b (20 ms for 8 batches) beats a."""
    out, crit = with_picks(_toy(gpus=[1, 8, 1, 1, 1]))
    assert crit is PER_IMAGE
    np.testing.assert_allclose(out["ms_per_batch"], [10.0, 2.5, 40.0, 5.0, 5.0])
    np.testing.assert_allclose(out["usd_per_1000_batches"], [3.0, 0.125, 0.5, 2.0, 1.0])
    assert out.loc[1, "pick"] == "fastest, cheapest, best value"


def test_a_row_without_a_price_is_never_cheapest_but_a_fastest_needs_one_only_where_any_has():
    t = np.array([1.0, 2.0, np.nan, 1.0])
    c = np.array([np.nan, 5.0, 1.0, np.nan])
    gid = np.array([0, 0, 0, 1])
    # group 0: the priced 2.0 is fastest (one row has a price); group 1: none has, 1.0 is
    assert pick_arrays(t, c, gid).tolist() == ["", "fastest, best value", "cheapest", "fastest"]


@pytest.mark.parametrize(
    ("low", "high", "wide"),
    [(91.0, 109.0, False), (75.0, 130.0, True), (85.0, 121.0, True)],
    ids=["9pct", "wide-both", "wide-above"],
)
def test_the_width_words_follow_the_width(low, high, wide):
    words = interval_words({"batch_latency_ms": 100.0, "low_ms": low, "high_ms": high})
    assert words.startswith(f"its 80% interval runs {100 - low:.0f}% below to {high - 100:.0f}%")
    assert words.endswith(", wide") is wide


def test_a_pick_on_a_narrow_spec_interval_is_not_called_wide(predictor, profile):
    """ "so its interval is wide" was said of a +-9% interval."""
    text = predictor.predict("g3s.xlarge", profile).basis_warning()
    assert "rests on specs only" in text and "(per step)" in text
    # the shipped specs-only width (x0.87..x1.14 since the pooled source factor)
    w = predictor.cross.interval_log_["specs only"]
    below, above = 100 * (1 - np.exp(-w)), 100 * (np.exp(w) - 1)
    assert "wide" not in text and f"interval runs {below:.0f}% below to {above:.0f}% above" in text


def test_the_cli_case_picks_the_fastest_whole_run_not_one_gpu_step(predictor, profile):
    """The repro that asked for one set of picks: amp, all GPUs, a run: the metric said gpu-b200 (the fastest one-GPU
    step, a 0.0414 h run) while the chart said p5.48xlarge (a 0.0105 h run), and the front
    named 16 x A100 40GB (gcp a2-megagpu-16g), a configuration the table did not list."""
    p = predictor.predict("g3s.xlarge", profile, precision="amp", gpus="all")
    done = p.with_run(**RUN)
    assert done.criterion is WHOLE_RUN
    picks = done.picks()
    table = done.table.set_index("configuration")
    assert table.index.is_unique  # one row per GPU configuration
    fastest = picks["fastest"]
    assert fastest["configuration"] == table["run_hours"].idxmin() == "16 x A100 SXM4 40GB"
    assert fastest["offering"] == "gcp a2-megagpu-16g (europe-west4)"
    assert fastest["target"] == "p4d.24xlarge" and fastest["gpus"] == 16
    assert picks["cheapest"]["configuration"] == table["run_usd"].idxmin()
    # Run totals per configuration: steps at each one's global batch
    assert table.at["8 x H100 SXM5 80GB", "steps"] == 1960
    assert table.at["1 x B200", "steps"] == 15630
    assert table.at["16 x A100 SXM4 40GB", "steps"] == 980
    assert done.steps_text() == (
        "Steps in the run: 15,630 on 1 GPU, 7,820 on 2 GPUs, 3,910 on 4 GPUs, 1,960 on 8 GPUs, "
        "980 on 16 GPUs (each configuration's global batch = GPUs used x the per-GPU batch)."
    )
    assert (
        "The fastest target (whole run), 16 x A100 SXM4 40GB on gcp a2-megagpu-16g "
        "(europe-west4), rests on"
    ) in done.basis_warning()
    # Without a run, the GPU counts differ: picks per image, and the columns they rest on
    per = p.with_run()
    assert per.criterion is PER_IMAGE
    assert per.picks()["fastest"]["configuration"] == "16 x A100 SXM4 40GB"
    assert {"ms_per_batch", "usd_per_1000_batches", "pick"} <= set(per.table.columns)
    # latencies untouched
    np.testing.assert_array_equal(per.table["batch_latency_ms"], p.table["batch_latency_ms"])


def test_steps_text_without_a_run_is_none():
    assert steps_text(_toy()) is None


@pytest.mark.parametrize("run", [None, RUN], ids=["no-run", "run"])
def test_offerings_rank_by_the_same_criterion(predictor, profile, run):
    done = predict_offerings(
        predictor, "g3s.xlarge", profile, gpus="all", precision="amp", **(run or {})
    )
    want = WHOLE_RUN if run else PER_IMAGE
    assert done.criterion is want
    assert (done.time_column, done.cost_column) == (want.time_column, want.cost_column)
    assert want.describe()[1:] in done.notes[-1]
    assert f"picks ({want.name})" in done.front_text()
    t = done.table[done.table["batch_latency_ms"].notna()]
    fastest = done.picks()["fastest"]
    assert fastest[want.time_column] == t[want.time_column].min()
    if run:
        assert "offering (whole run)" in " ".join(done.warnings())


@pytest.mark.parametrize("offerings", [False, True], ids=["targets", "offerings"])
@pytest.mark.parametrize(
    ("extra", "rests_on"),
    [
        ((), ["usd_per_1000_steps"]),
        (("--gpus", "all"), ["ms_per_batch", "usd_per_1000_batches"]),
        (("--dataset-images", "50000", "--epochs", "1"), ["run_hours", "run_usd"]),
    ],
    ids=["per-step", "per-image", "whole-run"],
)
def test_the_cli_tables_pick_sits_beside_the_columns_it_rests_on(extra, rests_on, offerings):
    """``p_fit`` stood between the costs and ``pick``; the columns a pick (and the
    front) ranks by now end the line, just before it."""
    from tests._utils import run

    argv = ("predict", "--profile", "examples/profile_g3s.json", *extra)
    code, out, err = run(*argv, *(("--offerings",) if offerings else ()))
    assert code == 0, err
    head = next(line.split() for line in out.splitlines() if line.split()[:1] == ["row"])
    tail = [*rests_on, *(["pareto"] if offerings else []), "pick"]
    assert head[-len(tail) :] == tail, head
