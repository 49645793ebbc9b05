"""``sky-plan`` says what a candidate's price needs said, as every other view of that offering
does: the check, the regions that share it, the note, and the catalog's one count of instance
types with a price to check (the plan dropped the flag the offerings view gave the same pick)."""

from __future__ import annotations

import json
import re

import pytest

from profet_core.sky import sky_plan
from tests._utils import run
from tests.core.sky._utils import AWS, ROOT, needs_sky, task_yaml, write_catalog

pytestmark = [needs_sky, pytest.mark.slow]  # SkyPilot's optimizer in a child process: seconds each
RUN = {"dataset_images": 50_000, "epochs": 10, "batch_size": 32}
#: g4dn.xlarge, the T4 candidate's cheapest offering, far below its two other regions.
FAR = (
    "g4dn.xlarge,T4,1.0,4.0,16.0,,1.40,0.5,us-west-2,usw2-az1,x86_64\n"
    "g4dn.xlarge,T4,1.0,4.0,16.0,,1.50,0.6,eu-west-1,euw1-az1,x86_64\n"
)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    folder = write_catalog(tmp_path_factory.mktemp("catalogs") / "v8")
    (folder / "aws" / "vms.csv").write_text(AWS + FAR)
    return folder


def test_a_flagged_candidate_price_is_said_in_the_table_and_notes(catalog, tmp_path):
    task = task_yaml(tmp_path / "task.yaml", ["T4:1", "L4:1"])
    code, out, err = run(
        "sky-plan",
        task,
        "--profile",
        ROOT / "examples" / "profile_g3s.json",
        "--dataset-images",
        "50000",
        "--epochs",
        "10",
        "--catalog",
        catalog,
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    t4 = next(r for r in doc["candidates"] if r["candidate"] == "T4:1")
    assert (t4["region"], t4["price_check"]) == ("us-east-1", "far below other regions")
    assert "far below other regions" in t4["note"]
    said = [n for n in doc["notes"] if "have a catalog price to check" in n]
    assert len(said) == 1 and "g4dn.xlarge us-east-1 on-demand" in said[0]
    assert re.search(r"\b1 instance type\(s\) of the price source", said[0])


def test_the_library_plan_carries_the_columns(catalog, tmp_path):
    from profet_core import read_profile

    task = task_yaml(tmp_path / "task.yaml", ["T4:1"])
    plan = sky_plan(
        task, read_profile(ROOT / "examples" / "profile_g3s.json"), catalog=catalog, **RUN
    )
    row = plan.table.iloc[0]
    assert row["price_check"] == "far below other regions"
    assert {"regions_at_price", "price_check", "note"} <= set(plan.table.columns)
    csv = plan.to_csv().decode()
    assert "far below other regions" in csv
