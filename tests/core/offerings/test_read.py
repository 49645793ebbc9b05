"""Reading SkyPilot catalog folders: every cloud's column order, GCP's composed
prices, odd rows reported rather than ranked, and the shipped snapshot rebuilt from the real
catalog copy."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from profet_core.errors import ProfetFileNotFoundError, ProfetValueError
from profet_core.offerings import derive_offerings, load_offerings, read_catalog, refresh
from tests._utils import ROOT

REAL = Path(ROOT.parent / "shared" / "data" / "skypilot-catalog")

#: Each cloud's header as the catalog writes it (column orders differ).
FILES = {
    "aws": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone,Arch\n"
    "g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.2,us-east-1,use1-az1,x86_64\n"
    "g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.15,us-east-1,use1-az2,x86_64\n"
    "g6f.large,L4,0.125,2.0,8.0,,0.202,0.1,us-east-1,use1-az1,x86_64\n"
    "p5e.48xlarge,H200,8.0,192.0,2048.0,,,20.0,us-east-2,use2-az1,x86_64\n"
    "inf1.xlarge,Inferentia,1.0,4.0,8.0,,0.228,0.1,us-east-1,use1-az1,x86_64\n",
    "lambda": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
    "SpotPrice\n"
    "gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-east-1,,\n"
    "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,3.29,us-east-1,,\n",
    "runpod": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,"
    "SpotPrice,Price,AvailabilityZone\n"
    "1x_L40S_SECURE,L40S,1.0,12.0,62.0,,CA,0.86,0.43,CA-MTL-1\n"
    "2x_B200_SECURE,B200,2.0,56.0,566.0,,US,,11.98,US-CA-1\n"
    "2x_B200_SECURE,B200,2.0,56.0,566.0,,US,,11.98,US-CA-1\n",
    "azure": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
    "SpotPrice,Region,Generation\n"
    "Standard_ND96isr_H100_v5,H100,12,96.0,1900,,98.32,98.32,eastus,V2\n"
    "Standard_NC6,K80,1,6.0,56,,0.9,0.09,eastus,V1\n"
    "Standard_NC4as_T4_v3,T4,1,4.0,28,,0.526,0.0526,eastus,V2\n",
    "gcp": "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
    "AvailabilityZone,Price,SpotPrice\n"
    "a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-a,0.73948,0.36975\n"
    "n1-highmem-4,4.0,26.0,,,,us-central1,us-central1-a,0.23661,0.05\n"
    "n1-highmem-8,8.0,52.0,,,,us-central1,us-central1-a,0.47321,0.12932\n"
    "n1-standard-4,4.0,15.0,,,,us-central1,us-central1-a,0.19,0.04\n"
    ",,,A100,1.0,,us-central1,us-central1-a,2.93391,1.4341\n"
    ",,,T4,1.0,,us-central1,us-central1-a,0.35,0.175\n"
    ",,,T4,1.0,,us-central1,us-central1-b,0.35,0.1\n"
    ",,,tpu-v2-8,1,,us-central1,us-central1-b,4.5,1.35\n",
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    for cloud, text in FILES.items():
        (root / cloud).mkdir()
        (root / cloud / "vms.csv").write_text(text)
    return root


@pytest.fixture(scope="module")
def read(catalog):
    return read_catalog(catalog)


def _row(rows, cloud, instance):
    return rows[(rows["cloud"] == cloud) & (rows["instance"] == instance)]


@pytest.mark.parametrize(
    ("cloud", "instance", "price", "spot"),
    [
        ("aws", "g4dn.xlarge", 0.526, 0.15),  # the cheaper zone's spot
        ("lambda", "gpu_1x_a100", 1.99, math.nan),  # Lambda: no spot
        ("runpod", "2x_B200_SECURE", 11.98, math.nan),  # SpotPrice before Price
        ("azure", "Standard_NC4as_T4_v3", 0.526, 0.0526),  # no zones, Generation last
        ("gcp", "a2-highgpu-1g", 0.73948 + 2.93391, 0.36975 + 1.4341),  # host + GPU
    ],
    ids=["aws", "lambda", "runpod", "azure", "gcp-built-in"],
)
def test_every_cloud_is_read_by_column_name(read, cloud, instance, price, spot):
    table = derive_offerings(read[0])
    line = _row(table, cloud, instance)
    assert len(line) == 1
    assert line["usd_per_hour"].iloc[0] == pytest.approx(price)
    got = line["spot_usd_per_hour"].iloc[0]
    assert (math.isnan(got) and math.isnan(spot)) or got == pytest.approx(spot)


def test_gcp_attachable_gpu_takes_the_cheapest_n1_host_with_enough_memory(read):
    rows = read[0]
    t4 = rows[(rows["cloud"] == "gcp") & (rows["accelerator"] == "T4")]
    # 4 vCPUs and >= 16 GiB: n1-standard-4 (15 GiB) is too small, n1-highmem-4 fits
    assert set(t4["instance"]) == {"n1-highmem-4+T4x1"}
    a = t4[t4["zone"] == "us-central1-a"].iloc[0]
    assert a["price"] == pytest.approx(0.23661 + 0.35) and a["spot"] == pytest.approx(0.225)
    # zone b has the GPU but no host: reported, not priced with zone a's host
    report = read[1]
    assert ((report["kind"] == "no host") & (report["zone"] == "us-central1-b")).any()
    assert not (rows["accelerator"].str.startswith("tpu")).any()


@pytest.mark.parametrize(
    ("kind", "instance"),
    [
        ("fractional GPUs", "g6f.large"),
        ("impossible GPU count", "Standard_ND96isr_H100_v5"),
        ("retired series", "Standard_NC6"),
        ("duplicate", "2x_B200_SECURE"),
        ("swapped prices", "1x_L40S_SECURE"),
    ],
    ids=["fractional", "impossible-count", "retired", "duplicate", "swapped"],
)
def test_odd_rows_are_reported_not_ranked(read, kind, instance):
    rows, report = read
    assert ((report["kind"] == kind) & (report["instance"] == instance)).any(), report
    table = derive_offerings(rows)
    if kind == "swapped prices":  # Price 0.43 < SpotPrice 0.86: taken swapped, both noted
        line = _row(table, "runpod", instance).iloc[0]
        assert line["usd_per_hour"] == 0.86 and line["spot_usd_per_hour"] == 0.43
        assert "swapped prices" in line["price_note"] and "swapped prices" in line["spot_note"]
    elif kind == "duplicate":
        assert len(_row(table, "runpod", instance)) == 1
    else:
        assert _row(table, rows["cloud"].iloc[0], instance).empty
        assert instance not in set(table["instance"])


def test_spot_only_and_no_spec_lines_say_so(read):
    table = derive_offerings(read[0])
    p5e = _row(table, "aws", "p5e.48xlarge").iloc[0]
    assert math.isnan(p5e["usd_per_hour"]) and p5e["spot_usd_per_hour"] == 20.0
    assert "no on-demand price" in p5e["note"]
    assert _row(table, "lambda", "gpu_1x_h100_pcie")["gpu"].iloc[0] == "NVIDIA H100 PCIe 80GB"


def test_a_full_sky_folder_with_schema_subfolders_is_read(catalog, tmp_path):
    (tmp_path / "v8").symlink_to(catalog)
    assert len(read_catalog(tmp_path)[0]) == len(read_catalog(catalog)[0])


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda p: p, ProfetFileNotFoundError, "no <cloud>/vms.csv"),
        (lambda p: p / "nowhere", ProfetFileNotFoundError, "does not exist"),
        (
            lambda p: (p / "x").mkdir() or (p / "x" / "vms.csv").write_text("A,B\n1,2\n") and p,
            ProfetValueError,
            r"lacks column\(s\)",
        ),
    ],
    ids=["empty", "missing", "bad-columns"],
)
def test_bad_catalog_folders_are_refused_by_name(tmp_path, make, error, match):
    with pytest.raises(error, match=match):
        read_catalog(make(tmp_path))


@pytest.mark.skipif(not REAL.is_dir(), reason=f"SkyPilot catalog copy not found at {REAL}")
def test_the_shipped_snapshot_is_what_the_derivation_gives():
    done = refresh(REAL)
    shipped = load_offerings()
    derived = done["table"]
    pd.testing.assert_frame_equal(
        shipped.reset_index(drop=True),
        pd.read_csv(
            _roundtrip(derived),
            dtype=dict.fromkeys(["gpu", "note", "region", "price_note", "spot_note"], str),
        ).fillna({"gpu": "", "note": "", "price_note": "", "spot_note": ""}),
        check_dtype=False,
    )
    assert done["changes"]["added"] == done["changes"]["removed"] == 0
    assert {"aws", "gcp", "azure", "lambda", "runpod", "nebius"} == set(shipped["cloud"])


def _roundtrip(table):
    import io

    from profet_core.offerings._snapshot import write_snapshot

    buf = io.StringIO()
    write_snapshot(table, buf)
    buf.seek(0)
    return buf
