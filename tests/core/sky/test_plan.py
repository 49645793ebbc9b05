"""SkyPilot's optimizer, offline, on a task with T4, A10G, L4, A100 and H100 candidates on 1 and 8
GPUs: its pick with its one-hour default and with PROFET's run times, checked against
the offerings view of the same catalog. The catalog is a small folder the tests write."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core import (
    OfferingFilter,
    ProfetValueError,
    load_artifacts,
    predict_offerings,
    refresh_offerings,
)
from profet_core.sky import sky_plan
from tests.core.sky._utils import heavy_profile, needs_sky, task_yaml, write_catalog

pytestmark = [needs_sky, pytest.mark.slow]  # SkyPilot's optimizer in a child process: seconds each
RUN = {"dataset_images": 50_000, "epochs": 10, "batch_size": 32}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return write_catalog(tmp_path_factory.mktemp("catalogs") / "v8")


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return task_yaml(tmp_path_factory.mktemp("task") / "task.yaml")


@pytest.fixture(scope="module")
def plan(catalog, task):
    before = {p: p.read_bytes() for p in catalog.rglob("*.csv")}
    done = sky_plan(task, heavy_profile(), anchor="g3s.xlarge", catalog=catalog, **RUN)
    assert {p: p.read_bytes() for p in catalog.rglob("*.csv")} == before  # copied, never changed
    return done


def test_the_pick_moves_from_cheapest_per_hour_to_cheapest_per_run(plan):
    t = plan.table
    print("\n" + "\n".join(plan.summary()))
    print(t[["candidate", "cloud", "instance", "usd_per_hour", "run_hours", "run_usd", "pick"]])
    assert len(t) == 10 and set(t["reason"]) == {""}
    assert plan.default_pick["candidate"] == t.loc[t["usd_per_hour"].idxmin(), "candidate"]
    assert plan.profet_pick["candidate"] == t.loc[t["run_usd"].idxmin(), "candidate"]
    assert plan.default_pick["candidate"] != plan.profet_pick["candidate"]
    assert plan.default_pick["usd_per_hour"] < plan.profet_pick["usd_per_hour"]
    assert plan.profet_pick["run_usd"] < plan.default_pick["run_usd"]
    assert plan.network == ()  # SkyPilot never reached for the network


def test_each_candidate_is_priced_at_its_cheapest_offering(plan):
    t = plan.table.set_index("candidate")
    assert t.loc["T4:1", ["cloud", "instance", "usd_per_hour"]].tolist() == [
        "aws",
        "g4dn.xlarge",
        0.526,
    ]
    assert t.loc["A100:8", "instance"] == "gpu_8x_a100"  # Lambda's, cheaper than p4d.24xlarge
    assert (t["usd_1h_default"] == t["usd_per_hour"]).all()
    assert t["run_usd"].to_numpy() == pytest.approx((t["usd_per_hour"] * t["run_hours"]).to_numpy())


def test_the_plan_agrees_with_the_offerings_view(plan, catalog):
    # The same profile and run on the offerings derived from the same catalog, each offering
    # on all its GPUs: the same run times, and the same cheapest run among the candidates.
    offerings = refresh_offerings(catalog)["table"]
    off = predict_offerings(
        load_artifacts(),
        "g3s.xlarge",
        heavy_profile(),
        offerings=offerings,
        filter=OfferingFilter(),
        gpus="all",
        dataset_images=RUN["dataset_images"],
        epochs=RUN["epochs"],
        batch_size=32,
    ).table
    wanted = set(zip(plan.table["accelerator"], plan.table["gpus"], strict=True))
    off = off[[(a, g) in wanted for a, g in zip(off["accelerator"], off["gpus"], strict=True)]]
    cheapest = off.loc[off["run_usd"].idxmin()]
    assert (cheapest["cloud"], cheapest["instance"]) == (
        plan.profet_pick["cloud"],
        plan.profet_pick["instance"],
    )
    both = plan.table.merge(off, on=["cloud", "instance"], suffixes=("", "_offerings"))
    assert len(both) == 10
    assert both["run_hours"].to_numpy() == pytest.approx(both["run_hours_offerings"].to_numpy())


def test_minimizing_time_picks_the_fastest(catalog, task):
    done = sky_plan(
        task, heavy_profile(), anchor="g3s.xlarge", catalog=catalog, minimize="time", **RUN
    )
    t = done.table
    assert done.profet_pick["candidate"] == t.loc[t["run_hours"].idxmin(), "candidate"] == "H100:8"
    assert t["run_hours"].is_monotonic_increasing
    assert any("tie broken by order" in n for n in done.notes)
    pick = done.profet_pick  # at the offering SkyPilot launches, its price
    assert pick["run_usd"] == pytest.approx(pick["usd_per_hour"] * pick["run_hours"])
    cheapest = t.loc[t["candidate"] == pick["candidate"]].iloc[0]
    if pick["instance"] != cheapest["instance"]:  # every cloud's H100:8 takes the same time
        assert any("SkyPilot breaks the tie by order" in n for n in done.notes)


def test_a_candidate_without_a_prediction_is_never_preferred(catalog, tmp_path):
    # The Radeon Pro V520 is the cheapest per hour, and PROFET has no spec model for it.
    path = task_yaml(tmp_path / "t.yaml", ["T4:1", "'Radeon Pro V520:1'"])
    done = sky_plan(path, heavy_profile(), anchor="g3s.xlarge", catalog=catalog, **RUN)
    assert done.default_pick["candidate"] == "Radeon Pro V520:1"
    assert done.profet_pick["candidate"] == "T4:1"
    v520 = done.table.set_index("candidate").loc["Radeon Pro V520:1"]
    assert "no spec model" in v520["reason"] and pd.isna(v520["run_hours"])
    assert any(n.startswith("Radeon Pro V520:1: no PROFET run time") for n in done.notes)


def test_the_configs_come_in_profets_order(plan):
    # ordered_resources() builds SkyPilot's ordered list from these (run by the recipe's test)
    assert len(plan.configs) == 10
    assert plan.configs[0]["accelerators"] in (
        plan.profet_pick["candidate"],
        {plan.profet_pick["accelerator"]: plan.profet_pick["gpus"]},
    )


def test_clouds_limit_the_candidates(catalog, task):
    done = sky_plan(
        task, heavy_profile(), anchor="g3s.xlarge", catalog=catalog, clouds=["lambda"], **RUN
    )
    offered = done.table[done.table["reason"] == ""]
    assert set(offered["candidate"]) == {"A100:1", "A100:8"} and set(offered["cloud"]) == {"lambda"}
    assert (done.table["reason"] != "").sum() == 8


def test_a_multi_node_task_is_refused(catalog, tmp_path):
    path = task_yaml(tmp_path / "t.yaml", ["T4:1"], extra="num_nodes: 2\n")
    with pytest.raises(ProfetValueError, match="runs on 2 nodes"):
        sky_plan(path, heavy_profile(), anchor="g3s.xlarge", catalog=catalog, **RUN)
