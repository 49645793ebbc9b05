"""The non-CNN columns of Lambda's PyTorch v1 throughput tables, one GPU each: a check of the spec
family model on recurrent, attention and embedding models (``../published_text.csv``).

``pytorch/pytorch-train-throughput-{fp32,fp16}.csv`` hold, beside ResNet-50 and SSD (in
``published.csv``), the training throughput of BERT base and large (SQuAD fine-tuning), GNMT
(an LSTM encoder-decoder with attention), NCF (embeddings and an MLP), Tacotron 2 (convolutions
and an LSTM decoder), Transformer-XL base and large and WaveGlow (a flow of convolutions):
NVIDIA DeepLearningExamples' PyTorch scripts on Lambda's machines, synthetic data, the FP16 (AMP)
batch twice the FP32 one. Each model's column is in its own unit (sequences, tokens, samples or
mel frames per second): only ratios between GPUs of one column are compared. The GPU of each
line is the one ``published.csv`` gives that line's ResNet-50 row (same line, same table); its
framework version too. No row is fitted: none of these models has a profile in the data; the
check (``bench/claims/beyond_cnn.py``) says which profile stands in for which.

Needs a mirror of the repository (the ``fetch`` tool: ``github:lambdal/deeplearning-benchmark``).

    python profet_core/data/build/lambdal_text.py --git-dir /work/.mirror/lambdal+deeplearning-benchmark/repo
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from _lambdal import COMMIT, REPO, number
from _rows import git_show

#: Table column -> (model, kind of model, throughput unit).
MODELS = {
    "bert_base_squad": ("BERT-base (SQuAD)", "attention", "sequences/s"),
    "bert_large_squad": ("BERT-large (SQuAD)", "attention", "sequences/s"),
    "gnmt": ("GNMT v2", "recurrent", "tokens/s"),
    "ncf": ("NCF", "embedding", "samples/s"),
    "tacotron2": ("Tacotron 2", "recurrent", "mel frames/s"),
    "transformerxlbase": ("Transformer-XL base", "attention", "tokens/s"),
    "transformerxllarge": ("Transformer-XL large", "attention", "tokens/s"),
    "waveglow": ("WaveGlow", "conv", "samples/s"),
}
COLUMNS = (
    "source",
    "framework",
    "framework_version",
    "precision",
    "gpu_published",
    "catalog_gpu",
    "gpu_count",
    "model",
    "kind",
    "batch_size",
    "throughput",
    "unit",
    "notes",
)
HERE = Path(__file__).resolve().parent


def _table(git_dir: str, path: str) -> dict[int, dict]:
    text = git_show(git_dir, COMMIT, path)
    return dict(enumerate(csv.DictReader(io.StringIO(text)), 2))


def _gpus(published: list[dict], path: str) -> dict[int, dict]:
    """Line -> the ResNet-50 row ``published.csv`` holds for that line of ``path``."""
    out = {}
    for r in published:
        repo_commit, _, rest = r["source"].partition(":")
        if repo_commit == f"{REPO}@{COMMIT}" and rest.rsplit(":", 1)[0] == path:
            if r["model"] == "resnet50":
                out[int(rest.rsplit(":", 1)[1])] = r
    return out


def rows(git_dir: str, published: list[dict]) -> list[dict]:
    """Every one-GPU line's non-CNN values of both tables (0: not run, no row)."""
    out = []
    for prec in ("fp32", "fp16"):
        path = f"pytorch/pytorch-train-throughput-{prec}.csv"
        bs_path = f"pytorch/pytorch-train-bs-{prec}.csv"
        values, batches = _table(git_dir, path), _table(git_dir, bs_path)
        known = _gpus(published, path)
        for no, r in values.items():
            if int(float(r["num_gpu"])) != 1 or no not in known:
                continue
            gpu = known[no]
            for column, (model, kind, unit) in MODELS.items():
                if float(r[column]) == 0:
                    continue
                out.append(
                    {
                        "source": f"{REPO}@{COMMIT}:{path}:{no}",
                        "framework": "PyTorch",
                        "framework_version": gpu["framework_version"],
                        "precision": "AMP" if prec == "fp16" else "TF32",
                        "gpu_published": gpu["gpu_published"],
                        "catalog_gpu": gpu["catalog_gpu"],
                        "gpu_count": "1",
                        "model": model,
                        "kind": kind,
                        "batch_size": number(batches[no][column]),
                        "throughput": number(r[column]),
                        "unit": unit,
                        "notes": f"column {column}; batch from {bs_path.split('/')[-1]} line {no}; "
                        "synthetic data",
                    }
                )
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", required=True, help="the mirror's git directory")
    ap.add_argument("--published", default=str(HERE.parent / "published.csv"))
    args = ap.parse_args(argv)
    with open(args.published, newline="") as f:
        published = list(csv.DictReader(f))
    w = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows(args.git_dir, published))


if __name__ == "__main__":
    main()
