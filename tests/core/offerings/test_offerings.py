"""Offerings priced with one prediction per GPU configuration: filters, markets,
the join, the time-cost front and the picks, and the command line."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetValueError, load_artifacts, read_profile
from profet_core.offerings import (
    OfferingFilter,
    choose,
    join_offerings,
    load_offerings,
    markets,
    matches,
    pareto_mask,
    predict_offerings,
)
from tests._utils import run

PROFILE = "examples/profile_g3s.json"


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture(scope="module")
def priced(predictor):
    return predict_offerings(predictor, "g3s.xlarge", read_profile(PROFILE))


def test_spot_offerings_exist_only_where_the_catalog_has_a_spot_price():
    table = load_offerings()
    rows = markets(table)
    spot = rows[rows["spot"]]
    assert len(spot) == table["spot_usd_per_hour"].notna().sum()
    assert (spot["price_usd_per_hour"] == spot["spot_usd_per_hour"]).all()
    lam = rows[rows["cloud"] == "lambda"]
    assert len(lam) and not lam["spot"].any()  # never the on-demand price as a spot one


@pytest.mark.parametrize(
    ("f", "check"),
    [
        (OfferingFilter(clouds=("GCP",)), lambda r: set(r["cloud"]) == {"gcp"}),
        (OfferingFilter(gpus=("L4",)), lambda r: set(r["accelerator"]) == {"L4"}),
        (OfferingFilter(gpus=("A100",)), lambda r: {"A100", "A100-80GB"} <= set(r["accelerator"])),
        (OfferingFilter(spot=True), lambda r: r["spot"].all()),
        (OfferingFilter(max_usd_per_hour=1.0), lambda r: (r["price_usd_per_hour"] <= 1).all()),
        (
            OfferingFilter(spot=True, max_usd_per_hour=0.3),
            lambda r: (r["spot_usd_per_hour"] <= 0.3).all() and (r["usd_per_hour"] > 0.3).any(),
        ),
    ],
    ids=["cloud", "gpu-l4-not-l40s", "gpu-a100-variants", "spot", "max-price", "max-spot-price"],
)
def test_one_matches_function_applies_each_filter(f, check):
    rows = markets(load_offerings())
    kept = rows[matches(rows, f)]
    assert len(kept) and check(kept)


def test_default_view_is_each_type_once_per_cloud_at_its_cheapest_region():
    table = load_offerings()
    rows = choose(table, OfferingFilter())
    assert not rows.duplicated(["cloud", "instance"]).any()
    g4 = rows[rows["instance"] == "g4dn.xlarge"].iloc[0]
    assert g4["usd_per_hour"] == table.loc[table["instance"] == "g4dn.xlarge", "usd_per_hour"].min()
    both = choose(table, OfferingFilter(all_regions=True))
    assert both["region"].nunique() > rows["region"].nunique()
    east = choose(table, OfferingFilter(regions=("us-east-1",)))
    assert set(east["region"]) == {"us-east-1"}


@pytest.mark.parametrize(
    "bad",
    [{"max_usd_per_hour": -1.0}, {"max_usd_per_hour": float("nan")}, {"clouds": "aws"}],
    ids=["negative", "nan", "string-not-tuple"],
)
def test_bad_filters_are_refused_by_name(bad):
    with pytest.raises(ProfetValueError, match=next(iter(bad))):
        OfferingFilter(**bad)


def test_pareto_front_keeps_only_undominated_offerings():
    time = np.array([10.0, 20.0, 15.0, 30.0, np.nan])
    cost = np.array([5.0, 1.0, 6.0, 0.5, 0.1])
    assert pareto_mask(time, cost).tolist() == [True, True, False, True, False]


def test_one_prediction_per_gpu_configuration_serves_every_offering(predictor, priced):
    t = priced.table
    per_gpu = priced.prediction.table
    assert per_gpu["target"].is_unique  # one prediction per spec line
    assert len(t) > 3 * len(per_gpu)  # many offerings share it
    for target, grp in t[t["target"] != ""].groupby("target"):
        assert grp["batch_latency_ms"].nunique() == 1, target
    steps = t["batch_latency_ms"] * 1000 / 3.6e6 * t["usd_per_hour"]
    np.testing.assert_allclose(t["usd_per_1000_steps"], steps)


def test_example_profile_prices_offerings_of_many_clouds_and_names_the_front(priced):
    t = priced.table
    assert t["usd_per_1000_steps"].notna().sum() >= 20
    assert t["cloud"].nunique() >= 4
    front = t[t["pareto"]]
    assert len(front) >= 2
    picks = priced.picks()
    assert all(picks[p] is not None and picks[p]["pareto"] for p in picks)
    fastest, cheapest = picks["fastest"], picks["cheapest"]
    assert fastest["batch_latency_ms"] == t["batch_latency_ms"].min()
    assert cheapest["usd_per_1000_steps"] == t["usd_per_1000_steps"].min()
    value = front["batch_latency_ms"] * front["usd_per_1000_steps"]
    assert picks["best value"]["batch_latency_ms"] * picks["best value"][
        "usd_per_1000_steps"
    ] == pytest.approx(value.min())
    assert "time-cost front" in priced.front_text() and fastest["instance"] in priced.front_text()


def test_gpus_without_a_spec_line_are_listed_not_predicted(priced):
    none = priced.table[priced.table["basis"] == "no spec model"]
    assert {"MI300X", "Radeon Pro V520"} <= set(none["accelerator"])
    assert none["batch_latency_ms"].isna().all() and not none["pareto"].any()


def test_a_measured_gpu_on_another_cloud_takes_the_measured_prediction(priced):
    t = priced.table
    own = t[t["instance"] == "g4dn.xlarge"].iloc[0]
    gcp = t[(t["cloud"] == "gcp") & (t["accelerator"] == "T4") & (t["gpus"] == 1)].iloc[0]
    assert own["basis"] == "measured" and gcp["basis"] == "measured on g4dn.xlarge"
    assert gcp["batch_latency_ms"] == own["batch_latency_ms"]
    assert "another host" in gcp["note"]


def test_the_join_uses_gpus_and_precision_columns_when_the_prediction_has_them():
    rows = choose(load_offerings(), OfferingFilter(gpus=("T4",), clouds=("gcp",)))
    pred = pd.DataFrame(
        {
            "row": 0,
            "target": "g4dn.xlarge",
            "gpus": [1, 2, 4],
            "precision": "fp32",
            "basis": "measured",
            "batch_latency_ms": [60.0, 32.0, 17.0],
            "low_ms": np.nan,
            "high_ms": np.nan,
        }
    )
    out = join_offerings(pred, rows, gpus="all")
    by_count = out.set_index("gpus")["batch_latency_ms"].groupby(level=0).first()
    assert by_count.to_dict() == {1: 60.0, 2: 32.0, 4: 17.0}
    with pytest.raises(ProfetValueError, match="multi-GPU model"):
        join_offerings(pred.drop(columns="gpus"), rows, gpus=2)


# ------------------------------------------------------------------ the command line
def test_instances_csv_lists_one_gpu_a100_and_h100_of_four_clouds_with_spot():
    code, out, err = run("instances", "--format", "csv")
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    expected = {"cloud", "instance", "region", "gpu", "gpus", "usd_per_hour", "spot_usd_per_hour"}
    assert expected <= set(t.columns)
    assert t["cloud"].nunique() >= 4
    one = t[t["gpus"] == 1]
    for gpu in ("A100", "H100"):
        rows = one[one["gpu"].fillna("").str.contains(gpu)]
        assert len(rows) and rows["spot_usd_per_hour"].notna().any(), gpu
    assert "SkyPilot" in err and "cheapest region" in err and "taken back" in err


def test_instances_json_carries_the_source_and_the_notes():
    code, out, err = run("instances", "--format", "json", "--cloud", "lambda", "--gpu", "H100")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["source"]["clouds"]["lambda"]["commit"].startswith("0f407038")
    assert {r["cloud"] for r in doc["offerings"]} == {"lambda"}
    assert any("SkyPilot" in n for n in doc["notes"])


def test_predict_prices_twenty_offerings_and_names_the_front():
    code, out, err = run("predict", "--profile", PROFILE, "--offerings", "--format", "csv")
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    assert t["usd_per_1000_steps"].notna().sum() >= 20
    assert "time-cost front" in err and "fastest" in err and "cheapest" in err


def test_predict_cloud_gcp_keeps_only_gcp():
    code, out, err = run("predict", "--profile", PROFILE, "--cloud", "gcp", "--format", "csv")
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    assert len(t) and set(t["cloud"]) == {"gcp"}


def test_predict_spot_uses_spot_prices():
    code, out, err = run("predict", "--profile", PROFILE, "--spot", "--format", "csv")
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    assert set(t["market"]) == {"spot"}
    assert np.allclose(t["usd_per_hour"], t["spot_usd_per_hour"])
    assert "taken back" in err


def test_predict_with_a_run_ranks_by_run_cost():
    code, out, err = run(
        "predict",
        "--profile",
        PROFILE,
        "--offerings",
        "--dataset-images",
        "50000",
        "--batch-size",
        "32",
        "--epochs",
        "10",
        "--format",
        "csv",
        "--max-usd-per-hour",
        "2",
    )
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    assert (t["usd_per_hour"] <= 2).all() and t["run_usd"].notna().any()
    assert "USD per run" in err


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["instances", "--max-usd-per-hour", "-3"], "max_usd_per_hour"),
        (["offerings", "refresh", "--catalog", "/nonexistent/x"], "does not exist"),
    ],
    ids=["negative-price", "missing-catalog"],
)
def test_bad_offering_arguments_are_one_line(argv, match):
    code, out, err = run(*argv)
    assert code == 2 and "Traceback" not in err and match in err


def test_a_price_catalog_merges_with_the_snapshot():
    code, out, err = run("instances", "--catalog", "examples/prices.csv", "--format", "csv")
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    mine = t[t["cloud"] == "catalog"].set_index("instance")
    assert (
        mine.at["g4dn.xlarge", "usd_per_hour"] == 0.40
        and mine.at["g4dn.xlarge", "basis"] == "measured"
    )
    assert (t["cloud"] == "aws").any()  # the snapshot's offerings stay
    code, out, err = run(
        "predict",
        "--profile",
        PROFILE,
        "--catalog",
        "examples/prices.csv",
        "--cloud",
        "catalog",
        "--format",
        "csv",
    )
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out)).set_index("instance")
    assert t.at["p3.2xlarge", "usd_per_hour"] == 0.92 and t.at["p3.2xlarge", "basis"] == "measured"
