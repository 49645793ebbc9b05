"""The shipped published rows carry what their sources publish (docs/published_audit.md)."""

from __future__ import annotations

import pytest

from profet_core.crossgpu._published import load_published


@pytest.mark.parametrize(
    ("gpu", "xla", "tf"),
    [
        ("A100 40GB PCIe", "on", "TF 1.15,"),
        ("RTX 3090", "on", "TF 2.4,"),
        ("V100 32GB", "off", "TF 2.2,"),
    ],
    ids=["a100-pcie", "rtx-3090", "v100-32gb"],
)
def test_rows_carry_the_conditions_their_sources_publish(gpu, xla, tf):
    # docs/published_audit.md: Lambda TF XLA and version from each row's run log (were unknown);
    # the H100 PCIe FP32 batches from pytorch-train-bs-fp32.csv:12 (were empty)
    t = load_published()
    rows = t[t["source"].str.startswith("LambdaColdStorage/") & (t["gpu_published"] == gpu)]
    assert len(rows) == 12 and set(rows["xla"]) == {xla}
    assert rows["framework_version"].str.contains(tf, regex=False).all()
    h100 = t[t["source"].str.endswith("pytorch-train-throughput-fp32.csv:12")]
    assert h100.set_index("model")["batch_size"].to_dict() == {"resnet50": 640, "ssd": 256}
    # the LambdaCloud A10's FP32 rows stood in for the A10G before the catalog rented the A10
    assert set(t.loc[t["gpu_published"] == "LambdaCloud A10", "catalog_gpu"]) == {"NVIDIA A10"}
