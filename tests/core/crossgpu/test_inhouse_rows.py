"""The in-house PyTorch rows (profet_core/data/inhouse_torch.csv) are well formed and sane.

The rows come from ``profet_core/data/build/torch_steps.py`` (README.md beside it); no fit reads
them yet. ``check_inhouse`` is the check; the malformed-table tests show it refuses what it must.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu.spec._published import COLUMNS, held_out
from tests._utils import ROOT, SHARED, requires_shared

CSV = ROOT / "profet_core" / "data" / "inhouse_torch.csv"
SCRIPT = "profet_core/data/build/torch_steps.py"
#: The ``model`` values of the shared data (its README; checked against it below where present).
DATA_CNNS = {
    "AlexNet",
    "CIFAR10_CNN",
    "InceptionResNetV2",
    "LeNet5",
    "MNIST_CNN",
    "MobileNetV2",
    "ResNet18",
    "ResNet50",
    "ResNetSmall",
    "VGG11",
    "VGG16",
    "VGG19",
}
#: precision -> (tf32, autocast_dtype, grad_scaler) as the script sets them.
PRECISIONS = {
    "FP32": ("off", "none", "off"),
    "TF32": ("on", "none", "off"),
    "AMP": ("on", "float16", "on"),
    "AMP BF16": ("on", "bfloat16", "off"),
}
EXTRA = (
    "ms_per_step",
    "ms_per_step_wall",
    "n_steps",
    "tf32",
    "autocast_dtype",
    "grad_scaler",
    "torch_version",
    "torchvision_version",
    "cuda_version",
    "cudnn_version",
    "device_name",
    "timestamp_utc",
)
KEY = ["gpu_published", "model", "image_size", "batch_size", "precision"]


def _catalog_gpus() -> set[str]:
    data = ROOT / "profet_core" / "data"
    return set(pd.read_csv(data / "gpu_specs.csv")["gpu"]) | set(
        pd.read_csv(data / "gpu_reference.csv")["gpu"]
    )


def _refuse(bad, what: str) -> None:
    bad = np.asarray(bad, dtype=bool)
    if bad.any():
        lines = [int(i) + 2 for i in np.flatnonzero(bad)[:5]]  # CSV lines, header = 1
        raise ValueError(f"in-house rows: {what} on line(s) {lines}")


def check_inhouse(t: pd.DataFrame) -> None:
    """Raise ValueError naming the first problem of an in-house table."""
    missing = sorted((set(COLUMNS) | set(EXTRA)) - set(t.columns))
    if missing or t.empty:
        raise ValueError(f"in-house rows: missing columns {missing} or no rows")
    text = t.fillna("").astype(str)
    pattern = rf"in-house@[0-9a-f]{{40}}:{re.escape(SCRIPT)}"
    _refuse(~text["source"].str.fullmatch(pattern), "source is not in-house@<commit>:script")
    _refuse(text["framework"] != "PyTorch", "framework is not PyTorch")
    _refuse(text["xla"] != "off", "xla is not off (no torch.compile)")
    _refuse(t["gpu_count"] != 1, "gpu_count is not 1")
    _refuse(~text["precision"].isin(list(PRECISIONS)), f"precision not in {list(PRECISIONS)}")
    settings = list(zip(text["tf32"], text["autocast_dtype"], text["grad_scaler"], strict=True))
    expected = [PRECISIONS.get(p) for p in text["precision"]]
    _refuse([s != e for s, e in zip(settings, expected, strict=True)], "settings != precision")
    ips, ms = t["images_per_s"].astype(float), t["ms_per_step"].astype(float)
    _refuse(~np.isfinite(ips) | (ips <= 0) | (ips > 1e6), "images_per_s not in (0, 1e6]")
    _refuse(~np.isfinite(ms) | (ms <= 0), "ms_per_step not positive")
    # images/s is the batch over the median step: the two columns must tell the same time
    _refuse(~np.isclose(t["batch_size"] / ips * 1e3, ms, rtol=1e-3), "ms_per_step != batch/ips")
    wall = t["ms_per_step_wall"].astype(float)
    _refuse(~((wall > 0.5 * ms) & (wall < 2 * ms)), "event and wall step times disagree > 2x")
    _refuse(t["n_steps"] < 5, "fewer than 5 timed steps")
    _refuse(~t["batch_size"].isin([16, 32, 64, 128]), "batch_size not 16/32/64/128")
    _refuse(~t["image_size"].isin([128, 224, 299]), "image_size not 128/224/299")
    known = DATA_CNNS | {""}
    _refuse(~text["data_model"].isin(known), "data_model is not one of the data's CNNs")
    _refuse(~text["profile_proxy"].isin(known), "profile_proxy is not one of the data's CNNs")
    _refuse((text["data_model"] == "") == (text["profile_proxy"] == ""), "not one of data/proxy")
    flagged = text["notes"].str.contains("held out", regex=False)
    _refuse(held_out(text["model"]) != flagged, "held-out (VGG16, Inception-v3) note mismatch")
    _refuse(~text["catalog_gpu"].isin(_catalog_gpus() | {""}), "catalog_gpu not a spec line")
    _refuse(text["device_name"] != text["gpu_published"], "device_name != gpu_published")
    stamps = pd.to_datetime(text["timestamp_utc"], format="%Y-%m-%dT%H:%M:%SZ", errors="coerce")
    _refuse(stamps.isna(), "timestamp_utc is not YYYY-MM-DDTHH:MM:SSZ")
    _refuse(t.duplicated(KEY), f"duplicate {KEY}")


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return pd.read_csv(CSV, keep_default_na=False, na_values=[""])


def test_shipped_rows_pass_the_checks(rows):
    check_inhouse(rows)
    assert set(rows["precision"]) == set(PRECISIONS)
    assert (ROOT / SCRIPT).is_file()


def test_held_out_cnns_are_measured_and_marked(rows):
    # VGG16 and Inception-v3 rows exist (an independent check) and say they are held out
    ho = rows[held_out(rows["model"])]
    assert set(ho["model"]) == {"vgg16", "inception_v3"}
    assert ho["notes"].str.startswith("held out: independent check").all()


def test_tensor_cores_speed_up_the_large_batches(rows):
    # at batch 128 a step is GPU-bound: TF32 beats FP32 on every CNN measured there
    big = rows[rows["batch_size"] == 128].pivot_table(
        index="model", columns="precision", values="images_per_s"
    )
    assert (big["TF32"] > 1.1 * big["FP32"]).all(), big


def _corrupt(t: pd.DataFrame, how: str) -> pd.DataFrame:
    t = t.copy()
    if how == "column":
        return t.drop(columns="images_per_s")
    if how == "negative":
        t.loc[0, "images_per_s"] = -t.loc[0, "images_per_s"]
    elif how == "inconsistent":
        t.loc[0, "ms_per_step"] = t.loc[0, "ms_per_step"] * 1.5
    elif how == "precision":
        t.loc[0, "precision"] = "FP8"
    elif how == "settings":
        t.loc[t["precision"] == "FP32", "tf32"] = "on"
    elif how == "data_model":
        t.loc[0, "data_model"] = "ResNet51"
    elif how == "held_out":
        t["notes"] = ""
    elif how == "source":
        t["source"] = "in-house:" + SCRIPT
    elif how == "duplicate":
        t = pd.concat([t, t.iloc[[0]]], ignore_index=True)
    return t


@pytest.mark.parametrize(
    ("how", "match"),
    [
        ("column", "missing columns"),
        ("negative", "images_per_s"),
        ("inconsistent", "ms_per_step != batch"),
        ("precision", "precision not in"),
        ("settings", "settings != precision"),
        ("data_model", "data_model is not"),
        ("held_out", "held-out"),
        ("source", "source is not"),
        ("duplicate", "duplicate"),
    ],
    ids=lambda v: v if " " not in v else None,
)
def test_checks_refuse_a_malformed_table(rows, how, match):
    with pytest.raises(ValueError, match=match):
        check_inhouse(_corrupt(rows, how))


@requires_shared
@pytest.mark.realdata
def test_data_cnn_names_are_the_shared_datas():
    models = set(pd.read_parquet(SHARED / "latencies.parquet", columns=["model"])["model"])
    assert models == DATA_CNNS
