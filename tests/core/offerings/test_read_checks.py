"""``offerings refresh`` reads a catalog as the profile readers read a user's file:
regular files only, bounded before reading, one line for a malformed file, linear time in the
rows, and every row dropped or changed reported by name with its reason."""

from __future__ import annotations

import os
import time

import pytest

from profet_core.errors import ProfetValueError
from profet_core.offerings import read_catalog
from tests._utils import run

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
GOOD = "gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-east-1,\n"
GCP = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,Price,SpotPrice\n"
HOST = "n1-highmem-8,8.0,52.0,,,us-central1,us-central1-a,0.47,0.12\n"


def _folder(root, cloud="lambda", text=None, raw=None):
    (root / cloud).mkdir(parents=True, exist_ok=True)
    path = root / cloud / "vms.csv"
    if raw is not None:
        path.write_bytes(raw)
    elif text is not None:
        path.write_text(text)
    return root


def _fifo(root):
    (root / "lambda").mkdir(parents=True)
    os.mkfifo(root / "lambda" / "vms.csv")


def _zero(root):
    (root / "lambda").mkdir(parents=True)
    os.symlink("/dev/zero", root / "lambda" / "vms.csv")


MALFORMED = {
    "zero-bytes": (lambda r: _folder(r, raw=b""), "is empty"),
    "blank": (lambda r: _folder(r, raw=b"\n  \n\n"), "is empty"),
    "latin-1": (
        lambda r: _folder(r, raw=(HEADER + "gpu_1x_\xe9,A100,1,1,1,1,x,\n").encode("latin-1")),
        "not UTF-8",
    ),
    "utf-16": (lambda r: _folder(r, raw=(HEADER + GOOD).encode("utf-16")), "UTF-16"),
    "folder": (lambda r: (r / "lambda" / "vms.csv").mkdir(parents=True), "is a folder"),
    "fifo": (_fifo, "named pipe"),
    "dev-zero": (_zero, "character device"),
}


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_a_malformed_file_is_refused_in_one_line(tmp_path, case):
    make, match = MALFORMED[case]
    make(tmp_path / "c")
    t = time.perf_counter()
    with pytest.raises(ProfetValueError, match=match):
        read_catalog(tmp_path / "c")
    assert time.perf_counter() - t < 5
    code, out, err = run("offerings", "refresh", "--catalog", tmp_path / "c")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_file_given_as_the_catalog_folder_is_not_a_folder(tmp_path):
    (tmp_path / "hostname").write_text("x\n")
    with pytest.raises(ProfetValueError, match="is not a folder"):
        read_catalog(tmp_path / "hostname")


ROWS = {
    # instance: (row, kind)
    "gpu_1x_inf": ("gpu_1x_inf,A100,1.0,30.0,200.0,inf,us-east-1,\n", "absurd price"),
    "gpu_1x_big": ("gpu_1x_big,A100,1.0,30.0,200.0,1e308,us-east-1,\n", "absurd price"),
    "gpu_1x_mil": ("gpu_1x_mil,A100,1.0,30.0,200.0,1000000,us-east-1,\n", "absurd price"),
    "gpu_1x_neg": ("gpu_1x_neg,A100,1.0,30.0,200.0,-2,us-east-1,1.0\n", "absurd price"),
    "gpu_1x_txt": ("gpu_1x_txt,A100,1.0,30.0,200.0,cheap,us-east-1,1.0\n", "text in a number"),
    "gpu_1x_cpu": ("gpu_1x_cpu,A100,1.0,-4,200.0,1.99,us-east-1,\n", "impossible vcpus"),
    "gpu_1x_gtx": ("gpu_1x_gtx,A100,one,30.0,200.0,1.99,us-east-1,\n", "text in a number"),
    "gpu_1x_rag": ("gpu_1x_rag,A100,1.0,30.0,200.0,1.99,us-east-1,,extra\n", "ragged row"),
    "gpu_1x_nul": ("gpu_1x_nul\x00,A100,1.0,30.0,200.0,1.99,us-east-1,\n", "control characters"),
    "gpu_0x_zero": ("gpu_0x_zero,A100,0,30.0,200.0,1.99,us-east-1,\n", "impossible GPU count"),
    "gpu_1x_minus": ("gpu_1x_minus,A100,-1,30.0,200.0,1.99,us-east-1,\n", "impossible GPU count"),
    "gpu_1x_infgpu": (
        "gpu_1x_infgpu,A100,inf,30.0,200.0,1.99,us-east-1,\n",
        "impossible GPU count",
    ),
}


@pytest.fixture(scope="module")
def odd(tmp_path_factory):
    root = tmp_path_factory.mktemp("odd")
    text = HEADER + GOOD + "".join(r for r, _ in ROWS.values()) + ",A100,1,30,200,1.9,us-east-1,\n"
    _folder(root, text=text)
    return read_catalog(root)


@pytest.mark.parametrize("instance", list(ROWS), ids=list(ROWS))
def test_every_row_dropped_or_changed_is_reported_by_name(odd, instance):
    kept, report = odd
    kind = ROWS[instance][1]
    lines = report[report["instance"].str.startswith(instance)]
    assert len(lines) and lines["kind"].str.startswith(kind).any(), report
    assert not report["kind"].isin(["spot above on-demand", "swapped prices"]).any()  # -2: no price
    assert not kept["instance"].str.contains("\x00").any()
    assert kept["price"].fillna(0).le(1000).all() and kept["instance"].str.len().gt(0).all()


def test_an_empty_instance_type_is_reported(odd):
    assert odd[1]["kind"].eq("no instance name").sum() == 1


def test_gcp_duplicate_and_fractional_gpu_rows_are_reported(tmp_path):
    rows = ",,,T4,1.0,us-central1,us-central1-a,0.35,0.1\n" * 2
    rows += ",,,T4,1.5,us-central1,us-central1-a,0.5,0.2\n"
    kept, report = read_catalog(_folder(tmp_path, "gcp", GCP + HOST + rows))
    assert report["kind"].tolist().count("duplicate") == 1
    assert "fractional GPUs" in report["kind"].tolist()
    assert kept["instance"].tolist() == ["n1-highmem-8+T4x1"]


@pytest.mark.slow  # about 5 s or more
def test_a_large_gcp_file_is_read_in_linear_time(tmp_path):
    # 20,000 zones with a host and a T4 each, and 20,000 rows more listed twice (the audit's
    # 200,000-row file took over 300 s: one host filter per GPU row)
    zones = [f"z{i}" for i in range(20_000)]
    hosts = "".join(HOST.replace("us-central1-a", z) for z in zones)
    gpus = "".join(f",,,T4,1.0,us-central1,{z},0.35,0.1\n" for z in zones) * 2
    t = time.perf_counter()
    kept, report = read_catalog(_folder(tmp_path, "gcp", GCP + hosts + gpus))
    assert time.perf_counter() - t < 20
    assert len(kept) == 20_000 and report["kind"].eq("duplicate").sum() == 20_000


def test_refresh_names_the_rows_it_drops(tmp_path):
    folder = _folder(tmp_path / "c", text=HEADER + GOOD + ROWS["gpu_1x_inf"][0])
    code, out, err = run("offerings", "refresh", "--catalog", folder)
    assert code == 0, err
    assert "gpu_1x_inf" in out and "absurd price" in out
