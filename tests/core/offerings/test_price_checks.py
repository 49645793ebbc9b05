"""Catalog rows: nothing dropped or passed on without a word. Every input row
is priced or reported by name; swapped pairs, spot not below on-demand and a region far below
the type's others carry a note to every answer; the listing says where each price is from."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from profet_core import load_artifacts, read_profile
from profet_core.offerings import (
    OfferingFilter,
    choose,
    list_offerings,
    predict_offerings,
    refresh,
)
from tests._utils import ROOT, run

REAL = Path(ROOT.parent / "shared" / "data" / "skypilot-catalog")
PROFILE = "examples/profile_g3s.json"

AWS = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
AWS += "Region,AvailabilityZone,Arch\n"
#: p5.4xlarge as in the shared copy: on-demand 6.88 without spot in us-east-1 and us-west-2,
#: spot = on-demand 8.256 in ap-south-1; g6.4xlarge: its cheapest spot is in another region
#: than its cheapest on-demand; g5.xlarge ties in two regions; an m5 row has no accelerator.
AWS += (
    "p5.4xlarge,H100,1.0,16.0,256.0,,6.88,,us-east-1,use1-az1,x86_64\n"
    "p5.4xlarge,H100,1.0,16.0,256.0,,6.88,,us-west-2,usw2-az1,x86_64\n"
    "p5.4xlarge,H100,1.0,16.0,256.0,,8.256,8.256,ap-south-1,aps1-az1,x86_64\n"
    "g6.4xlarge,L4,1.0,16.0,64.0,,1.3232,0.6637,us-east-1,use1-az1,x86_64\n"
    "g6.4xlarge,L4,1.0,16.0,64.0,,1.6,0.1489,eu-south-2,eus2-az1,x86_64\n"
    "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.4,us-west-2,usw2-az1,x86_64\n"
    "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.5,us-east-1,use1-az1,x86_64\n"
    "g5.xlarge,A10G,1.0,4.0,16.0,,1.2,0.45,eu-west-1,euw1-az1,x86_64\n"
    "m5.large,,,2.0,8.0,,0.096,0.04,us-east-1,use1-az1,x86_64\n"
    "inf2.xlarge,Inferentia2,1.0,4.0,16.0,,0.76,0.2,us-east-1,use1-az1,x86_64\n"
)
RUNPOD = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,"
    "Price,AvailabilityZone\n"
    "1x_L40S_SECURE,L40S,1.0,12.0,62.0,,CA,0.86,0.43,CA-MTL-1\n"
    "1x_L40S_SECURE,L40S,1.0,12.0,62.0,,US,0.86,0.43,US-GA-1\n"
)
GCP = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
GCP += "AvailabilityZone,Price,SpotPrice\n"
_REGIONS = {"us-central1": 33.6, "us-east4": 78.37, "europe-west4": 101.88, "asia-east1": 90.75}
GCP += "".join(
    f"a3-highgpu-8g,208.0,1872.0,,,,{r},{r}-a,9.46,2.8\n,,,H100,8,,{r},{r}-a,{p},20.0\n"
    for r, p in _REGIONS.items()
)
GCP += (
    "a3-edgegpu-8g,208.0,1872.0,,,,us-central1,us-central1-a,9.46,2.8\n"
    "a3-ultragpu-8g-nolssd,224.0,2952.0,,,,us-central1,us-central1-a,10.0,3.0\n"
    ",,,H200,8,,us-east4,us-east4-a,80.0,30.0\n"  # no a3-ultragpu-8g row in that zone
    ",,,tpu-v5p-8,1,,us-central1,us-central1-a,4.2,1.5\n"
    "n1-highmem-8,8.0,52.0,,,,us-central1,us-central1-a,0.47,0.1\n"
    "e2-standard-4,4.0,16.0,,,,us-central1,us-central1-a,0.13,0.04\n"
)
FILES = {"aws": AWS, "runpod": RUNPOD, "gcp": GCP}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checks")
    for cloud, text in FILES.items():
        (root / cloud).mkdir()
        (root / cloud / "vms.csv").write_text(text)
    return root


@pytest.fixture(scope="module")
def done(catalog):
    return refresh(
        catalog,
        previous=pd.DataFrame(columns=["cloud", "instance", "region"]).assign(
            usd_per_hour=[], spot_usd_per_hour=[]
        ),
    )


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


def _line(table, instance, region):
    got = table[(table["instance"] == instance) & (table["region"] == region)]
    assert len(got) == 1, (instance, region, table[["instance", "region"]])
    return got.iloc[0]


def test_every_input_row_is_priced_or_reported_by_name(done):
    rows = done["meta"]["rows"]
    assert {c: r["unaccounted"] for c, r in rows.items()} == dict.fromkeys(FILES, 0)
    assert rows["aws"] == {
        "rows": 10,
        "priced": 8,
        "reported": 1,
        "gcp_hosts": 0,
        "no_accelerator": 1,
        "unaccounted": 0,
    }
    report = done["report"]
    for instance, kind in [
        ("a3-edgegpu-8g", "unmapped GPU machine type"),
        ("a3-ultragpu-8g-nolssd", "unmapped GPU machine type"),
        ("inf2.xlarge", "not a GPU"),
        ("", "not a GPU"),  # the TPU's GPU-style row has no instance name
        ("", "no machine type"),  # the H200 row with no a3-ultragpu-8g in its zone
        ("1x_L40S_SECURE", "swapped prices"),
    ]:
        assert ((report["instance"] == instance) & (report["kind"] == kind)).any(), kind
    named = {g["instance"] for g in done["meta"]["reported_rows"]}
    assert {"a3-edgegpu-8g", "a3-ultragpu-8g-nolssd", "inf2.xlarge"} <= named
    edge = next(g for g in done["meta"]["reported_rows"] if g["instance"] == "a3-edgegpu-8g")
    assert "us-central1/us-central1-a" in edge["where"] and "line" in edge["where"]


def test_a_swapped_pair_is_exchanged_and_said_in_both_markets(done, predictor):
    line = _line(done["table"], "1x_L40S_SECURE", "CA")
    assert (line["usd_per_hour"], line["spot_usd_per_hour"]) == (0.86, 0.43)
    rows = choose(done["table"], OfferingFilter(spot=None, clouds=("runpod",)))
    assert sorted(rows["price_usd_per_hour"]) == [0.43, 0.86]
    assert (rows["price_check"] == "swapped prices").all()
    assert rows["note"].str.contains("catalog lists on-demand 0.43 and spot 0.86").all()


def test_spot_not_below_on_demand_is_noted_on_the_spot_offer_only(done):
    rows = choose(done["table"], OfferingFilter(spot=True, clouds=("aws",), gpus=("H100",)))
    p5 = rows.iloc[0]
    assert (p5["region"], p5["price_usd_per_hour"]) == ("ap-south-1", 8.256)
    assert p5["price_check"] == "spot not below on-demand"
    assert "8.256 here" in p5["note"] and "6.88 in us-east-1" in p5["note"]
    od = choose(done["table"], OfferingFilter(clouds=("aws",), gpus=("H100",)))
    assert od["price_check"].tolist() == [""]


def test_a_region_far_below_the_types_others_is_noted(done):
    table = done["table"]
    low = _line(table, "a3-highgpu-8g", "us-central1")
    assert low["usd_per_hour"] == pytest.approx(43.06)
    assert "far below other regions" in low["price_note"]
    assert "far below" not in _line(table, "a3-highgpu-8g", "us-east4")["price_note"]
    # the cheapest-region pick carries it
    pick = choose(table, OfferingFilter(clouds=("gcp",)))
    assert pick["price_check"].tolist() == ["far below other regions"]


def test_the_listing_says_where_each_price_is_from_and_ties(done, predictor):
    table, notes = list_offerings(predictor, offerings=done["table"])
    g6 = table[table["instance"] == "g6.4xlarge"].iloc[0]
    assert (g6["region"], g6["usd_per_hour"]) == ("us-east-1", 1.3232)
    assert (g6["spot_region"], g6["spot_usd_per_hour"]) == ("eu-south-2", 0.1489)
    g5 = table[table["instance"] == "g5.xlarge"].iloc[0]
    assert (g5["region"], g5["regions_at_price"]) == ("us-east-1", 2)
    assert any("spot_region" in n and "regions_at_price" in n for n in notes)
    assert any("have a catalog price to check" in n and "1x_L40S_SECURE" in n for n in notes)
    ties = choose(done["table"], OfferingFilter(clouds=("aws",), gpus=("A10G",)))
    assert "the same price in 1 other region(s) (us-west-2); us-east-1 shown" in ties["note"][0]


def test_predict_offerings_carries_the_notes_to_its_answer(done, predictor):
    got = predict_offerings(
        predictor,
        "g3s.xlarge",
        read_profile(PROFILE),
        offerings=done["table"],
        filter=OfferingFilter(spot=None),
    )
    t = got.table
    l40s = t[t["instance"] == "1x_L40S_SECURE"]
    assert (l40s["price_check"] == "swapped prices").all() and len(l40s) == 2
    said = [n for n in got.notes if "have a catalog price to check" in n]
    assert said and "a3-highgpu-8g us-central1" in said[0] and "p5.4xlarge ap-south-1" in said[0]
    assert "price_check" in pd.read_csv(__import__("io").BytesIO(got.to_csv())).columns


def test_refresh_prints_every_odd_row_by_name_and_the_accounting(catalog):
    code, out, err = run("offerings", "refresh", "--catalog", str(catalog))
    assert code == 0, err
    assert "gcp a3-edgegpu-8g: unmapped GPU machine type" in out
    assert "aws: 10 row(s) read: 8 priced, 1 reported below" in out
    assert "UNACCOUNTED" not in out


def test_predict_offerings_table_shows_the_check_and_says_it():
    code, out, err = run("predict", "--profile", PROFILE, "--gpu", "L40S", "--cloud", "runpod")
    assert code == 0, err
    header, *lines = out.splitlines()[-5:]
    assert "price_check" in out and all("swapped prices" in x for x in lines if "L40S" in x)
    assert "have a catalog price to check" in err and "1x_L40S_SECURE" in err


def test_instances_json_and_predict_notes_name_the_checks():
    code, out, err = run("instances", "--gpu", "L40S", "--cloud", "runpod", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert all(r["price_check"] == "swapped prices" for r in doc["offerings"])
    assert any("have a catalog price to check" in n for n in doc["notes"])


@pytest.mark.skipif(not REAL.is_dir(), reason=f"SkyPilot catalog copy not found at {REAL}")
def test_the_shared_catalog_is_accounted_for_and_its_odd_prices_noted(predictor):
    done = refresh(REAL)
    assert all(r["unaccounted"] == 0 for r in done["meta"]["rows"].values())
    named = {g["instance"] for g in done["meta"]["reported_rows"]}
    assert {"a3-edgegpu-8g", "a3-edgegpu-8g-nolssd", "a3-ultragpu-8g-nolssd"} <= named
    t = done["table"]
    assert "far below" in _line(t, "a3-highgpu-8g", "us-central1")["price_note"]
    assert "far below" in _line(t, "a2-highgpu-1g", "europe-west4")["price_note"]
    for inst, region in [
        ("p5.4xlarge", "ap-south-1"),
        ("Standard_NC40ads_H100_v5", "eastus"),
        ("Standard_NC80adis_H100_v5", "eastus"),
    ]:
        got = _line(t, inst, region)
        assert "spot not below on-demand" in got["spot_note"], inst
    l40s = _line(t, "1x_L40S_SECURE", "CA")
    assert (l40s["usd_per_hour"], l40s["spot_usd_per_hour"]) == (0.86, 0.43)
    assert not math.isnan(l40s["spot_usd_per_hour"])
