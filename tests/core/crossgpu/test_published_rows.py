"""The shipped published rows carry what their sources publish (docs/published_audit.md)."""

from __future__ import annotations

import pytest

from profet_core.crossgpu.spec._published import load_published


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


def test_xla_off_counterparts_mirror_their_xla_rows():
    # round 4 D1 (docs/amp_decision_rule.md, profet_core/data/build/lambda_xla_off.py): Lambda's XLA-off runs of
    # the systems its tables publish with XLA on, one row per run of the XLA row's twin
    t = load_published()
    d1 = t[t["notes"].str.contains("round 4 D1", regex=False)]
    assert len(d1) == 168 and set(d1["xla"]) == {"off"}
    assert d1["source"].str.contains(r"_trt_TF1_15\.logs/.*/throughput/1:\d+$").all()
    assert not d1["source"].str.contains("_XLA_").any()
    key = ["gpu_published", "gpu_count", "model", "precision"]
    lambda_xla = t[t["source"].str.startswith("LambdaColdStorage/") & (t["xla"] == "on")]
    twins = d1.merge(lambda_xla, on=key, suffixes=("", "_xla"))
    assert len(twins) == len(d1)
    assert (twins["catalog_gpu"] == twins["catalog_gpu_xla"]).all()
    # as logged: RTX 2080 Ti ResNet-50, FP16 597 images/s without XLA, 770 with
    r50 = twins[(twins["gpu_published"] == "RTX 2080Ti") & (twins["model"] == "resnet50")]
    amp = r50[r50["precision"] == "AMP"].iloc[0]
    assert (amp["images_per_s"], amp["images_per_s_xla"]) == (597, 770)


def test_the_2080_ti_has_no_peer_to_peer():
    from profet_core.crossgpu.spec._gpuref import gpu_table

    # Lambda's run logs: no PCIe peer access between any two 2080 Ti (docs/published_audit.md)
    g = gpu_table(None)
    assert g.loc["NVIDIA GeForce RTX 2080 Ti", "p2p"] == 0
    assert g.loc["NVIDIA Quadro RTX 8000", "p2p"] == 1


def test_efficientnet_rows_are_the_readme_lines_with_their_config_batches():
    # round 8 D2 (docs/amp_decision_rule.md, profet_core/data/build/dle_efficientnet.py): DeepLearningExamples'
    # PyTorch EfficientNet tables, 1 and 8 GPUs, batch per GPU from configs.yml
    from profet_core.crossgpu.configurations._amp import amp_pairs
    from profet_core.crossgpu.configurations._dataparallel import scaling_rows
    from profet_core.crossgpu.spec._gpuref import gpu_table

    t = load_published()
    d2 = t[t["model"].str.startswith("efficientnet-")]
    assert len(d2) == 36 and set(d2["profile_proxy"]) == {"MobileNetV2"}
    assert set(d2["gpu_count"]) == {1, 8} and set(d2["xla"]) == {"off"}
    b0 = d2[
        (d2["model"] == "efficientnet-b0")
        & (d2["gpu_count"] == 1)
        & d2["gpu_published"].str.contains("A100")
    ].set_index("precision")
    assert b0["images_per_s"].to_dict() == {"TF32": 1078, "AMP": 2489}
    assert b0["batch_size"].to_dict() == {"TF32": 256, "AMP": 256}
    assert b0["source"].str.endswith("efficientnet/README.md:589").all()
    # the DGX-1 32GB table's B4 and WideSE lines scale above 8x on 8 GPUs: left out
    v32 = d2[d2["catalog_gpu"] == "NVIDIA V100 SXM2 32GB"]
    assert set(v32["model"]) == {"efficientnet-b0"}
    pairs = amp_pairs(t)
    assert (pairs["model"].str.startswith("efficientnet-")).sum() == 9
    rows = scaling_rows(t, gpu_table(None))
    eff = rows[rows["model"].str.startswith("efficientnet-")]
    # WideSE has no parameter count on record: no scaling rows
    assert set(eff["model"]) == {"efficientnet-b0", "efficientnet-b4"} and len(eff) == 10
