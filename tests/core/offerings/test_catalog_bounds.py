"""The one reader of catalog folders (``offerings refresh``, ``--catalog FOLDER``, ``sky-plan``):
what it still let through, now refused or reported; its row bound; and the copy SkyPilot is
handed (:func:`~profet_core.offerings._vms.skypilot_copy`), rows left out as the reader reports."""

from __future__ import annotations

import csv
import io

import pytest

from profet_core import ProfetValueError, refresh_offerings
from profet_core._messages import CONTROL
from profet_core.offerings import read_catalog
from profet_core.offerings._vms import (
    MAX_VMS_ROWS,
    checked_accelerators,
    read_vms,
    skypilot_copy,
)
from tests._utils import ROOT, run

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
GOOD = "gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-east-1,\n"


def _folder(root, text: str, cloud: str = "lambda"):
    (root / cloud).mkdir(parents=True, exist_ok=True)
    (root / cloud / "vms.csv").write_text(text)
    return root


def test_a_header_with_price_twice_is_refused(tmp_path):
    folder = _folder(tmp_path, HEADER.replace("\n", ",Price\n") + GOOD.replace("\n", ",2\n"))
    with pytest.raises(ProfetValueError, match=r"the column\(s\) \['Price'\] twice"):
        refresh_offerings(folder)
    code, _, err = run("offerings", "refresh", "--catalog", folder)
    assert code == 2 and err.count("\n") == 1 and "twice" in err


@pytest.mark.parametrize(
    ("row", "kind", "detail"),
    [
        ("gpu_1x_a10,A10,1.0,30.0,200.0,1e-300,us-east-1,\n", "absurd price", "'1e-300'"),
        ("gpu_1x_h100,H100,1.0,30.0,200.0,2.49,,\n", "no region", "Region is empty"),
    ],
    ids=["price-1e-300", "empty-region"],
)
def test_rows_kept_oddly_before_are_reported(tmp_path, row, kind, detail):
    done = refresh_offerings(_folder(tmp_path, HEADER + GOOD + row))
    report = done["report"]
    name = row.split(",")[0]
    hit = report[(report["instance"] == name) & (report["kind"] == kind)]
    assert len(hit) == 1 and detail in hit["detail"].iloc[0]
    assert name not in set(done["table"]["instance"])
    counts = done["meta"]["rows"]["lambda"]
    assert (counts["priced"], counts["reported"], counts["unaccounted"]) == (1, 1, 0)


def test_more_gpus_than_the_spec_sheets_type_has_are_reported(tmp_path):
    text = HEADER + "p4d.24xlarge,A100,8.0,96,1152,21.9,us-east-1,\n"
    text += "p4d.24xlarge,A100,16.0,96,1152,21.9,us-west-2,\n"
    report = refresh_offerings(_folder(tmp_path, text, "aws"))["report"]
    (detail,) = report.loc[report["kind"] == "impossible GPU count", "detail"]
    assert detail == "16 GPUs where the spec sheet's p4d.24xlarge has 8"


def test_a_cloud_folder_named_with_an_escape_is_refused(tmp_path):
    folder = _folder(tmp_path, HEADER + GOOD, cloud="\x1b[31mred")
    with pytest.raises(ProfetValueError, match=r"cloud folder named '\\x1b\[31mred'"):
        refresh_offerings(folder)
    code, out, err = run("offerings", "refresh", "--catalog", folder, "--out", tmp_path / "o")
    assert code == 2 and not CONTROL.search(out + err) and not (tmp_path / "o").exists()


def test_a_link_out_of_the_catalog_folder_is_refused(tmp_path):
    _folder(tmp_path / "elsewhere", HEADER + GOOD)
    (tmp_path / "c" / "lambda").mkdir(parents=True)
    (tmp_path / "c" / "lambda" / "vms.csv").symlink_to(tmp_path / "elsewhere/lambda/vms.csv")
    with pytest.raises(ProfetValueError, match="outside the catalog folder"):
        read_catalog(tmp_path / "c")
    (tmp_path / "d" / "lambda").mkdir(parents=True)  # a link inside it is read
    (tmp_path / "d" / "x.csv").write_text(HEADER + GOOD)
    (tmp_path / "d" / "lambda" / "vms.csv").symlink_to(tmp_path / "d" / "x.csv")
    assert len(read_catalog(tmp_path / "d")[0]) == 1


def test_a_file_past_the_row_bound_is_refused_up_front(tmp_path):
    # a 1,000,000-row file took 243 s and 2.97 GB; past the bound, nothing is parsed
    folder = _folder(tmp_path, HEADER + "x\n" * MAX_VMS_ROWS)
    with pytest.raises(ProfetValueError, match=f"the limit is {MAX_VMS_ROWS:,}"):
        read_catalog(folder)


def test_predict_catalog_folder_goes_through_the_same_reader(tmp_path):
    folder = _folder(tmp_path, HEADER.replace("\n", ",Price\n") + GOOD.replace("\n", ",2\n"))
    profile = ROOT / "examples" / "profile_g3s.json"
    code, _, err = run("predict", "--profile", profile, "--catalog", folder)
    assert code == 2 and "twice" in err and err.count("\n") == 1


def test_skypilots_copy_leaves_out_what_it_would_plan_on(tmp_path):
    rows = [
        "g_ok,A100,1.0,30,200,1.99,us-east-1,0.9",
        "g_neg,A100,1.0,30,200,-1,us-east-1,",
        "g_zero,A100,1.0,30,200,0,us-east-1,",
        "g_big,A100,1.0,30,200,1e308,us-east-1,",
        "g_text,A100,1.0,30,200,cheap,us-east-1,",
        "g_count,A100,9223372036854775808,30,200,1.5,us-east-1,",
        "g_spot,A100,1.0,30,200,1.5,us-east-1,-3",
        "g_\x1b[31mred,A100,1.0,30,200,1.2,us-east-1,",
        "cpu_only,,,4,16,0.1,us-east-1,",
    ]
    path = _folder(tmp_path, HEADER + "\n".join(rows) + "\n") / "lambda" / "vms.csv"
    text, report, counts = skypilot_copy(path, "lambda")
    kept = list(csv.DictReader(io.StringIO(text)))
    assert [r["InstanceType"] for r in kept] == ["g_ok", "g_spot", "g_[31mred", "cpu_only"]
    assert kept[1]["SpotPrice"] == "" and not CONTROL.search(text)  # -3: no spot price
    assert counts == (9, 4)
    left = set(report.loc[report["kind"] != "control characters", "instance"])
    assert {"g_neg", "g_zero", "g_big", "g_text", "g_count", "g_spot"} <= left
    # the snapshot's reader reads the same file the same way
    assert set(read_vms(path, "lambda")[0]["instance"]) >= {"g_ok", "g_spot"}


def test_the_accelerators_file_is_checked_too(tmp_path):
    (tmp_path / "a.csv").write_text("Name,Clouds\nT4,['AWS']\n")
    with pytest.raises(ProfetValueError, match="AcceleratorName and Clouds"):
        checked_accelerators(tmp_path / "a.csv")
    (tmp_path / "b.csv").write_text("AcceleratorName,Clouds\nT4\x1b[2J,['AWS']\nbad,row,extra\n")
    assert checked_accelerators(tmp_path / "b.csv") == "AcceleratorName,Clouds\nT4[2J,['AWS']\n"
