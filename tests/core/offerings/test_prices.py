"""One price source: a prediction is made for a GPU configuration, a price
belongs to an offering. Each configuration of the per-target table is priced by the offering
renting it cheapest (the snapshot, or a user's catalog), so an instance type has one price
wherever it appears; the spec sheet holds no price."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts, read_profile
from profet_core.offerings import (
    OfferingFilter,
    list_offerings,
    load_offerings,
    offerings_meta,
    predict_offerings,
)
from profet_core.offerings._prices import configuration_prices
from tests._utils import run

PROFILE = "examples/profile_g3s.json"
#: The columns of SkyPilot's AWS ``vms.csv``.
AWS_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone,Arch"
)


def _aws_folder(folder, *lines: str) -> None:
    """A SkyPilot catalog folder holding only ``aws/vms.csv`` with ``lines``."""
    (folder / "aws").mkdir()
    (folder / "aws" / "vms.csv").write_text("\n".join([AWS_HEADER, *lines]) + "\n")


def _csv(out: str) -> pd.DataFrame:
    """A CLI CSV as written (an empty cell is missing, a dash or a name is text)."""
    return pd.read_csv(io.StringIO(out), keep_default_na=False, na_values=[""])


def _snapshot(rows) -> pd.DataFrame:
    cols = ("cloud", "instance", "region", "gpu", "gpus", "usd_per_hour")
    out = pd.DataFrame(rows, columns=cols)
    return out.assign(
        accelerator="X", vcpus=8, memory_gib=32, spot_usd_per_hour=np.nan, zones=1, note=""
    )


SNAP = _snapshot(
    [
        ("aws", "p9.big", "us-west-2", "GPU A", 8, 40.0),
        ("aws", "p9.big", "us-east-1", "GPU A", 8, 30.0),  # its own cheapest region
        ("lambda", "gpu_8x_a", "us-south-1", "GPU A", 8, 20.0),  # cheaper, another type
        ("lambda", "gpu_1x_a", "us-south-1", "GPU A", 1, 2.5),
        ("runpod", "1x_A", "CA", "GPU A", 1, 2.5),  # a tie: cloud, then region decides
        ("runpod", "2x_B", "CA", "GPU B", 2, 3.0),
        ("runpod", "4x_B", "CA", "GPU B", 4, 5.0),
        ("runpod", "1x_C", "CA", "GPU C", 1, np.nan),  # spot only: no on-demand price
    ]
)


@pytest.mark.parametrize(
    ("instance", "gpu", "count", "price", "offering"),
    [
        ("p9.big", "GPU A", 8, 30.0, "aws p9.big (us-east-1)"),
        ("gpu-a", "GPU A", 1, 2.5, "lambda gpu_1x_a (us-south-1)"),
        ("gpu-a8", "GPU A", 8, 20.0, "lambda gpu_8x_a (us-south-1)"),
        ("gpu-b", "GPU B", 1, 3.0, "runpod 2x_B (CA)"),  # no 1-GPU B: the fewest GPUs above
        ("gpu-b3", "GPU B", 3, 5.0, "runpod 4x_B (CA)"),
        ("gpu-c", "GPU C", 1, np.nan, ""),
        ("gpu-d", "GPU D", 1, np.nan, ""),
        ("gpu-a16", "GPU A", 16, np.nan, ""),
    ],
    ids=["own-type", "by-gpu", "by-gpu-count", "fewest-above", "fewest-above-3", "spot-only",
         "no-offering", "too-many-gpus"],
)  # fmt: skip
def test_each_configuration_takes_the_offering_renting_it_cheapest(
    instance, gpu, count, price, offering
):
    catalog = pd.DataFrame({"instance": [instance], "gpu": [gpu], "gpu_count": [count]})
    got = configuration_prices(catalog, SNAP).iloc[0]
    assert got["offering"] == offering
    if np.isnan(price):
        assert np.isnan(got["usd_per_hour"])
    else:
        assert got["usd_per_hour"] == price


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


def test_an_instance_type_has_one_price_everywhere(predictor):
    """p5.48xlarge: 98.32 USD/h in the per-target table and 55.04 in the catalog before."""
    listed, _ = list_offerings(predictor, OfferingFilter(clouds=("aws",)))
    listed = listed.set_index("instance")
    targets = predictor.instance_table().set_index("instance")
    front = predict_offerings(predictor, "g3s.xlarge", read_profile(PROFILE), gpus="all").table
    aws = front[front["cloud"].eq("aws")].set_index("instance")
    for name in ("p5.48xlarge", "p4d.24xlarge", "g4dn.xlarge", "p3.2xlarge", "g5.xlarge"):
        price = listed.at[name, "usd_per_hour"]
        assert targets.at[name, "usd_per_hour"] == price
        assert aws.at[name, "usd_per_hour"] == price
    assert targets.at["p5.48xlarge", "usd_per_hour"] == pytest.approx(55.04)
    # the whole 8-GPU instance, as renting it costs
    assert targets.at["p4d.24xlarge", "gpus"] == 8 == listed.at["p4d.24xlarge", "gpus"]


@pytest.mark.parametrize("gpus", [1, 4, "all"], ids=["1", "4", "all"])
def test_each_configuration_is_priced_as_the_front_prices_it(predictor, gpus):
    """The per-target table's rows are the configurations the front's offerings rent (GPU
    predicted as, GPUs used), each at the least on-demand USD/h the front shows for an offering
    of that GPU using at least as many of it, from an offering the front lists at that price
    (the front named 16 x A100 40GB, which the table lacked; with all GPUs, 4 x V100
    cost 11.81 USD/h while an offering renting 8 V100s cost 6.32)."""
    profile = read_profile(PROFILE)
    table = predictor.predict("g3s.xlarge", profile, gpus=gpus).table
    front = predict_offerings(predictor, "g3s.xlarge", profile, gpus=gpus).table
    front = front[front["target"].ne("") & front["target"].ne("g3s.xlarge")]
    configs = front.groupby(["target", "gpus_used"]).size().index
    least = pd.Series(
        {
            (t, n): front.loc[
                front["target"].eq(t) & front["gpus_used"].ge(n), "usd_per_hour"
            ].min()
            for t, n in configs
        }
    )
    rows = table[table["offering"].astype(str) != ""].set_index(["target", "gpus"])
    assert set(rows.index) == set(least.index)
    assert rows.index.is_unique and table["configuration"].is_unique
    for key, usd in least.items():
        assert rows.at[key, "usd_per_hour"] == pytest.approx(usd, rel=1e-12), key
        cloud, instance, region = rows.at[key, "offering"].replace("(", "").rstrip(")").split()
        there = front.set_index(["cloud", "instance", "region"]).loc[(cloud, instance, region)]
        assert there["usd_per_hour"] == pytest.approx(usd, rel=1e-12), key
    # only what nothing rents is unpriced: the retired K80
    assert set(table.loc[table["offering"].astype(str) == "", "target"]) <= {"p2.xlarge"}
    if gpus == "all":  # 16 x A100 40GB (gcp a2-megagpu-16g) is a row of its own
        a16 = rows.loc[("p4d.24xlarge", 16)]
        assert a16["configuration"] == "16 x A100 SXM4 40GB"
        assert a16["offering"].startswith("gcp a2-megagpu-16g ")


def test_spec_lines_are_priced_by_the_cheapest_offering_of_their_gpu(predictor):
    snap = load_offerings()
    snap = snap[snap["usd_per_hour"].notna()]
    targets = predictor.instance_table().set_index("instance")
    spec_lines = [i for i in targets.index if i.startswith("gpu-")]
    assert len(spec_lines) >= 10
    for name in spec_lines:
        row = targets.loc[name]
        same = snap[snap["gpu"].eq(row["gpu"]) & snap["gpus"].eq(row["gpus"])]
        if same.empty:
            continue
        assert row["usd_per_hour"] == same["usd_per_hour"].min(), name
        cloud, instance = row["offering"].split()[:2]
        assert ((same["cloud"] == cloud) & (same["instance"] == instance)).any(), name


def test_a_retired_instance_has_no_price_and_says_so(predictor):
    """p2.xlarge (K80) is no longer in any cloud's catalog: no price, no cost, a note."""
    res = predictor.predict("g3s.xlarge", read_profile(PROFILE))
    row = res.table.set_index("target").loc["p2.xlarge"]
    assert np.isnan(row["usd_per_hour"]) and np.isnan(row["usd_per_1000_steps"])
    assert row["offering"] == ""
    # a note on what the price rests on, not a warning
    assert any(
        n.startswith("1 x K80 (one GK210): no offering of the price source")
        for n in res.price_notes
    )
    assert not any("no offering of the price source" in w for w in res.warnings())


def test_a_users_catalog_prices_what_it_names_and_says_so(tmp_path, predictor):
    path = tmp_path / "prices.csv"
    path.write_text("instance,gpu,usd_per_hour\np5.48xlarge,NVIDIA H100 SXM5 80GB,12.5\n")
    mine = load_artifacts(catalog=pd.read_csv(path))
    got = mine.instance_table().set_index("instance")
    base = predictor.instance_table().set_index("instance")
    assert got.at["p5.48xlarge", "usd_per_hour"] == 12.5
    assert got.at["p5.48xlarge", "offering"] == "catalog p5.48xlarge (your catalog)"
    assert got.at["p4d.24xlarge", "usd_per_hour"] == base.at["p4d.24xlarge", "usd_per_hour"]
    args = ("predict", "--profile", PROFILE, "--catalog", path, "--format", "csv", "--gpus")
    code, out, err = run(*args, "all")
    assert code == 0, err
    csv = _csv(out)
    csv = csv.set_index("configuration")
    # your 8 x H100 at 12.5 is the cheapest offering renting 8 of them (nebius: 23.6)
    assert csv.at["8 x H100 SXM5 80GB", "usd_per_hour"] == 12.5
    assert csv.at["8 x H100 SXM5 80GB", "offering"] == "catalog p5.48xlarge (your catalog)"
    assert f"and {str(path)!r} for the instances it prices" in err
    # one GPU: your line joins the offerings, and a cheaper one-GPU H100 still wins
    code, out, err = run(*args, "1")
    assert code == 0, err
    one = _csv(out)
    one = one.set_index("configuration").loc["1 x H100 SXM5 80GB"]
    assert one["usd_per_hour"] < 12.5 and "your catalog" not in one["offering"]


def test_another_snapshot_prices_everything_from_it():
    """``load_artifacts(offerings=...)``: a newer catalog's snapshot is the one price source."""
    snap = load_offerings()
    h100 = snap["gpu"].eq("NVIDIA H100 SXM5 80GB")
    snap.loc[h100, "usd_per_hour"] = 5.0 * snap.loc[h100, "gpus"]  # 40 USD/h for 8
    mine = load_artifacts(offerings=snap)
    table = mine.predict("g3s.xlarge", read_profile(PROFILE), gpus="all").table
    table = table.set_index("configuration")
    assert table.at["8 x H100 SXM5 80GB", "usd_per_hour"] == 40.0
    assert table.at["1 x H100 SXM5 80GB", "usd_per_hour"] == 5.0
    front = predict_offerings(mine, "g3s.xlarge", read_profile(PROFILE), offerings=snap).table
    assert front.set_index("instance").at["p5.48xlarge", "usd_per_hour"] == 40.0


def test_a_catalog_folder_is_the_one_price_source(tmp_path):
    """``--catalog ~/.sky/catalogs/v8``: every price of every view comes from that folder."""
    _aws_folder(
        tmp_path,
        "p5.48xlarge,H100,8.0,192.0,2048.0,,44.5,,us-west-2,usw2-az1,x86_64",
        "g4dn.xlarge,T4,1.0,4.0,16.0,,0.5,0.2,us-east-1,use1-az1,x86_64",
    )
    code, out, err = run("predict", "--profile", PROFILE, "--catalog", tmp_path, "--format", "csv")
    assert code == 0, err
    table = _csv(out)
    table = table.set_index("target")
    assert table.at["p5.48xlarge", "usd_per_hour"] == 44.5
    assert table.at["p5.48xlarge", "offering"] == "aws p5.48xlarge (us-west-2)"
    assert table["usd_per_hour"].notna().sum() == 2  # nothing else is in that folder
    assert f"(from {str(tmp_path)!r})" in err
    args = ("--profile", PROFILE, "--catalog", tmp_path, "--offerings", "--format", "csv")
    code, out, err = run("predict", *args)
    assert code == 0, err
    front = _csv(out)
    assert set(front["instance"]) == {"p5.48xlarge", "g4dn.xlarge"}
    assert front.set_index("instance").at["p5.48xlarge", "usd_per_hour"] == 44.5
    code, out, err = run("instances", "--catalog", tmp_path, "--format", "csv")
    assert code == 0, err
    listed = pd.read_csv(io.StringIO(out)).set_index("instance")
    assert listed.at["p5.48xlarge", "usd_per_hour"] == 44.5
    # The JSON documents' source is that folder's snapshot, not the shipped one
    shipped = offerings_meta()
    for argv in (("predict", *args[:-1], "json"), ("instances", "--catalog", tmp_path, "--format", "json")):  # fmt: skip
        code, out, err = run(*argv)
        assert code == 0, err
        source = json.loads(out)["source"]
        assert source["catalog_folder"] == str(tmp_path), argv[0]
        assert source["rows"] != shipped["rows"] and set(source["rows"]) == {"aws"}, argv[0]


def test_a_t4g_on_an_arm_host_is_listed_not_priced_as_a_t4(tmp_path):
    """AWS g5g rents a T4G on an Arm (Graviton2) host: the T4's silicon, but a profile's x86
    TensorFlow pipeline and its host-side time do not carry there. It is listed with its reason,
    never predicted as a T4 and never the price of "1 x T4" (it was, at 0.42 USD/h)."""
    _aws_folder(
        tmp_path,
        "g5g.xlarge,T4g,1.0,4.0,8.0,,0.42,0.076,us-east-1,use1-az1,arm64",
        "g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.2,us-east-1,use1-az1,x86_64",
    )
    code, out, err = run("predict", "--profile", PROFILE, "--catalog", tmp_path, "--format", "csv")
    assert code == 0, err
    table = _csv(out)
    t4 = table.set_index("configuration").loc["1 x T4"]
    assert (t4["offering"], t4["usd_per_hour"]) == ("aws g4dn.xlarge (us-east-1)", 0.526)
    assert "g5g" not in out
    args = ("--profile", PROFILE, "--catalog", tmp_path, "--offerings", "--format", "csv")
    code, out, err = run("predict", *args)
    assert code == 0, err
    front = _csv(out)
    g5g = front.set_index("instance").loc["g5g.xlarge"]
    assert g5g["basis"] == "no spec model" and pd.isna(g5g["batch_latency_ms"])
    assert "Arm (Graviton2) host" in g5g["note"]
    assert "T4g: T4G on an Arm (Graviton2) host: not predicted as a T4" in err
    assert "have no spec model" not in err  # its reason, not "no spec model"
    code, out, err = run("instances", "--catalog", tmp_path, "--format", "csv")
    assert code == 0, err
    listed = pd.read_csv(io.StringIO(out), keep_default_na=False).set_index("instance")
    assert listed.at["g5g.xlarge", "gpu"] == "" and listed.at["g4dn.xlarge", "gpu"] == "NVIDIA T4"
    assert "T4g: T4G on an Arm (Graviton2) host" in err
