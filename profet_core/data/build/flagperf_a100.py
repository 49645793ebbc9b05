"""FlagPerf's A100 training tables (ResNet-50, MobileNetV2, EfficientNetV2-S; PyTorch), as
``published.csv`` rows.

``training/nvidia/<cnn>-pytorch/README.md`` of FlagOpen/FlagPerf (Apache-2.0): one NVIDIA DGX
A100 (40G) (``NVIDIA_A100-SXM4-40GB``, NVSwitch), real ImageNet, PyTorch as each README's
framework line gives it. Its performance table has one line per configuration (``1x1``: one GPU,
``1x8``: one node of 8, ``2x8``: two nodes), precision and ``fix_hp`` (the batch and learning rate
changed to fill the GPU; ``/``: the configuration file's own, ``config/config_A100x1x8.py``).
Read: the one-GPU lines, and the 8-GPU lines whose batch per GPU equals the one-GPU line's of the
same CNN and precision (the N-GPU model compares an N-GPU step with the one-GPU step at the same
per-GPU batch), plus the 8-GPU AMP and BF16 lines of ResNet-50 (no one-GPU AMP line: they pair
with nothing; kept for the record). Not read: the two-node lines (InfiniBand between nodes is no
catalog configuration) and the 8-GPU FP32 lines at another batch than the one-GPU line's.

``images_per_s`` is ``p_core``, the throughput without the data-loading time (the step the
profiles time; the notes give ``p_train``, which includes the loading but not the evaluation,
and ``p_whole``). FP32 is ``TF32`` (PyTorch's FP32 mode: TF32 convolutions on Ampere). BF16 rows
are ``AMP`` (the AMP model treats FP16 and BF16 alike; ``notes`` says which).
MobileNetV2 is the data's MobileNetV2; EfficientNetV2-S (torchvision's ``efficientnet_v2_s``, 224
px crops) is not in the data: the MobileNetV2 profile stands in (as for DeepLearningExamples'
EfficientNets).

Needs a mirror of the repository (the ``fetch`` tool: ``github:FlagOpen/FlagPerf``).

    python profet_core/data/build/flagperf_a100.py --git-dir /work/.mirror/FlagOpen+FlagPerf/repo
"""

from __future__ import annotations

import re

from _rows import git_show, main_for

REPO = "FlagOpen/FlagPerf"
COMMIT = "1b5a030398ab719e406f77877eb34c9599b17fd2"
#: README folder -> (model, data_model, profile_proxy).
CNNS = {
    "resnet50": ("resnet50", "ResNet50", ""),
    "mobilenetv2": ("mobilenetv2", "MobileNetV2", ""),
    "efficientnet": ("efficientnet_v2_s", "", "MobileNetV2"),
}
LINE = re.compile(
    r"^\|\s*A100\S*[（(](?P<nodes>\d)x(?P<gpus>\d)[）)]\s*\|\s*(?P<prec>fp32|amp|bf16)\s*\|"
    r"\s*(?P<hp>[^|]+?)\s*\|\s*(?P<e2e>[^|]+?)\s*\|\s*(?P<whole>[\d.]+)\s*\|\s*(?P<train>[\d.]+)"
    r"\s*\|\s*(?P<core>[\d.]+)\s*\|"
)


def _batch(hp: str, git_dir: str, cnn: str) -> int:
    """Batch per GPU of an 8-GPU line: ``bs=N`` of its ``fix_hp``, else the 8-GPU config's."""
    m = re.search(r"bs=(\d+)", hp)
    if m:
        return int(m.group(1))
    cfg = git_show(git_dir, COMMIT, f"training/nvidia/{cnn}-pytorch/config/config_A100x1x8.py")
    return int(re.search(r"^train_batch_size = (\d+)", cfg, re.M).group(1))


def lines(git_dir: str, cnn: str) -> tuple[str, list[dict]]:
    """The README's framework version and its performance lines (1-based line numbers)."""
    path = f"training/nvidia/{cnn}-pytorch/README.md"
    text = git_show(git_dir, COMMIT, path)
    fw = re.search(r"训练框架版本：\s*(\S+)", text)
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        m = LINE.match(line)
        if m and m.group("nodes") == "1":
            out.append({"line": no, **m.groupdict(), "batch": _batch(m.group("hp"), git_dir, cnn)})
    return f"{fw.group(1)} (FlagPerf README)", out


def rows(git_dir: str, _table: list[dict] | None = None) -> list[dict]:
    out = []
    for cnn, (model, data_model, proxy) in CNNS.items():
        fw, found = lines(git_dir, cnn)
        one = {(r["prec"], r["batch"]) for r in found if r["gpus"] == "1"}
        for r in found:
            paired = (r["prec"], r["batch"]) in one
            if r["gpus"] == "8" and not paired and r["prec"] == "fp32":
                continue  # another batch than the one-GPU line's
            notes = [
                f"p_core (no data loading); p_train {r['train']}, p_whole {r['whole']} images/s",
                "real ImageNet",
                f"batch per GPU {r['batch']} ({'fix_hp ' + r['hp'] if r['hp'] != '/' else 'config_A100x1x8.py'})",
            ]
            if proxy:
                notes.append(
                    "torchvision efficientnet_v2_s: no data CNN matches; the MobileNetV2 profile stands in"
                )
            if r["prec"] != "fp32":
                notes.append(
                    f"{'BF16' if r['prec'] == 'bf16' else 'FP16'} autocast; no one-GPU AMP line"
                )
            else:
                notes.append("PyTorch FP32 mode: TF32 convolutions on Ampere and newer by default")
            n = int(r["gpus"])
            out.append(
                {
                    "source": f"{REPO}@{COMMIT}:training/nvidia/{cnn}-pytorch/README.md:{r['line']}",
                    "framework": "PyTorch",
                    "framework_version": fw,
                    "precision": "TF32" if r["prec"] == "fp32" else "AMP",
                    "xla": "off",
                    "gpu_published": f"{n}x NVIDIA_A100-SXM4-40GB (NVIDIA DGX A100(40G))",
                    "catalog_gpu": "NVIDIA A100 SXM4 40GB",
                    "variant_note": "same variant",
                    "gpu_count": str(n),
                    "model": model,
                    "data_model": data_model,
                    "profile_proxy": proxy,
                    "batch_size": str(r["batch"]),
                    "image_size": "224",
                    "images_per_s": r["core"],
                    "notes": "; ".join(notes),
                }
            )
    return out


def main(argv=None) -> None:
    main_for(rows, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
