"""Op vocabulary of CPU captures vs the shared data's rows of the same CNN.

    python bench/studies/conformance.py [--data ../shared/data/profet] [--code-root DIR] [--steps 4]

Captures ResNet18, MobileNetV2, VGG11 and LeNet5 at 32 px, batch 32, on this CPU with oneDNN off
(``TF_ENABLE_ONEDNN_OPTS=0``: TensorFlow's plain kernels, the op types it places on a GPU), each
with ``python -m profet_core.capture._worker`` of the code under ``--code-root`` (default this
checkout; give another checkout to measure its capture), and prints per CNN the Jaccard overlap
of op types with the data's 32 px / batch 32 rows of that CNN, raw and normalised
(``profet_core.capture._conformance``), the data's >= 1% device op types the capture lacks and
the capture's >= 1% op types outside the data's vocabulary, then the (normalised) op types
only the data has and only the capture has.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from profet_core.capture._conformance import GPU_ONLY, conformance, normalise, type_times

MODELS = ("ResNet18", "MobileNetV2", "VGG11", "LeNet5")
KEY = ["exp", "instance", "model", "input_size", "batch_size"]


def capture(model: str, code_root: Path, steps: int) -> pd.Series:
    """One CPU capture (op -> us) by the worker of the code under ``code_root``."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "profet_core.capture._worker", "--model", model]
        cmd += ["--input-size", "32", "--batch-size", "32", "--steps-per-epoch", str(steps)]
        cmd += ["--latency-steps", "2", "--result", str(result)]
        env = {**os.environ, "PYTHONPATH": str(code_root), "TF_ENABLE_ONEDNN_OPTS": "0"}
        env["TF_CPP_MIN_LOG_LEVEL"] = "3"
        subprocess.run(cmd, env=env, cwd=code_root, check=True, capture_output=True)
        out = json.loads(result.read_text())
    if not out["ok"]:
        raise SystemExit(f"{model}: {out['message']}")
    return pd.Series(out["profile"], dtype=float)


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, default=root.parent / "shared" / "data" / "profet")
    p.add_argument("--code-root", type=Path, default=root)
    p.add_argument("--steps", type=int, default=4, help="steps per epoch of the captures")
    args = p.parse_args()
    data = pd.read_parquet(args.data / "profiles.parquet")
    print(f"captures by {args.code_root.resolve()}, 32 px, batch 32, TF_ENABLE_ONEDNN_OPTS=0")
    print(f"{'CNN':12s} {'jaccard':>8s} {'normalised':>10s}  missing (>=1%) | foreign (>=1%)")
    for model in MODELS:
        rows = data[(data["model"] == model) & (data["input_size"] == 32)]
        rows = rows[rows["batch_size"] == 32]
        captured = capture(model, args.code_root.resolve(), args.steps)
        c = conformance(captured, rows)
        print(
            f"{model:12s} {c['jaccard']:8.2f} {c['jaccard_normalised']:10.2f}  "
            f"{' '.join(c['missing']) or '-'} | {' '.join(c['foreign']) or '-'}",
            flush=True,
        )
        mine = normalise(type_times(captured).index) - GPU_ONLY
        theirs = normalise(type_times(rows.drop(columns=KEY).max()).index) - GPU_ONLY
        print(f"{'':12s} data only: {' '.join(sorted(theirs - mine)) or '-'}")
        print(f"{'':12s} capture only: {' '.join(sorted(mine - theirs)) or '-'}", flush=True)


if __name__ == "__main__":
    main()
