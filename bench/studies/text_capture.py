"""Op types of the text zoo captured on this CPU, and their vocabulary against the authors' rows.

    python bench/studies/text_capture.py [--batch-size 128] [--seq-len 200] [--steps 2] [--top 8]
        [--models TextRNN ...] [--optimizer sgd|adadelta] [--rows ../shared/data/seed-rnn/reuters_g4dn_g5.csv]

Captures each text-zoo model (default: all six) with ``python -m profet_core.capture._worker``
on this CPU with oneDNN off (``TF_ENABLE_ONEDNN_OPTS=0``: TensorFlow's plain kernels, the op
types it places on a GPU; a recurrent layer runs Keras' generic loop, never ``CudnnRNN*``) at
the given batch and sequence length (vocabulary 10,000, ``--steps`` steps per epoch, 2 traced),
and prints per model its busy time over the two traced steps, its top op types by time (share of
busy time; on a CPU every op is a ``Host_`` op) and the text-layer families it emitted. Where
PROFET's authors have a row of the same kind of model (``TextRNN``: ``rnn``, ``TextLSTMDropout``:
``lstm``, ``TextBiLSTM``: ``bilstm``; their rows ran Adadelta, hence ``--optimizer adadelta`` for
a like-for-like comparison) it prints the conformance of the capture with that row
(``profet_core.capture._conformance`` with ``model_kind="text"``): the row's >= 1% device op
types the capture lacks and the capture's >= 1% op types foreign to the row and to text layers.
On a loaded machine the shares move (a descheduled thread books its stall to the op it runs);
the op types do not.
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

from profet_core.capture._conformance import conformance, text_layers, type_times
from profet_core.capture._textzoo import TEXT_ZOO

AUTHORS = {"TextRNN": "rnn", "TextLSTMDropout": "lstm", "TextBiLSTM": "bilstm"}


def capture(model: str, args, root: Path) -> dict:
    """One CPU capture of ``model`` by the collect worker: ``{"profile": ..., "meta": ...}``."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "profet_core.capture._worker", "--model", model]
        cmd += ["--input-size", str(args.seq_len), "--batch-size", str(args.batch_size)]
        cmd += ["--steps-per-epoch", str(args.steps), "--latency-steps", "2"]
        cmd += ["--optimizer", args.optimizer, "--result", str(result)]
        env = {**os.environ, "PYTHONPATH": str(root), "TF_ENABLE_ONEDNN_OPTS": "0"}
        env["TF_CPP_MIN_LOG_LEVEL"] = "3"
        subprocess.run(cmd, env=env, cwd=root, check=True, capture_output=True)
        out = json.loads(result.read_text())
    if not out["ok"]:
        raise SystemExit(f"{model}: {out['message']}")
    return out


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--seq-len", type=int, default=200)
    p.add_argument("--steps", type=int, default=2, help="steps per epoch of the captures")
    p.add_argument("--top", type=int, default=8, help="op types shown per model")
    p.add_argument("--models", nargs="+", default=list(TEXT_ZOO))
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adadelta", "adam"])
    default_rows = root.parent / "shared" / "data" / "seed-rnn" / "reuters_g4dn_g5.csv"
    p.add_argument("--rows", type=Path, default=default_rows)
    args = p.parse_args()
    rows = pd.read_csv(args.rows) if args.rows.is_file() else None
    print(
        f"text zoo on this CPU (TF_ENABLE_ONEDNN_OPTS=0), batch {args.batch_size}, "
        f"{args.seq_len} tokens, vocabulary 10,000, {args.optimizer}, 2 traced steps"
    )
    for model in args.models:
        out = capture(model, args, root)
        times = type_times(pd.Series(out["profile"], dtype=float))
        busy = times.sum()
        top = times.sort_values(ascending=False).head(args.top)
        latency = out["meta"]["batch_latency_s"] * 1e3
        print(f"\n{model}: busy {busy / 1e3:.1f} ms over 2 steps; step {latency:.1f} ms unprofiled")
        print("  top: " + ", ".join(f"{t} {v / busy:.1%}" for t, v in top.items()))
        for family, types in text_layers(times.index).items():
            print(f"  {family}: {' '.join(types)}")
        if rows is not None and model in AUTHORS:
            ops = [c for c in rows.columns if c.startswith(("Host_", "Device_"))]
            theirs = rows.loc[rows["model"] == AUTHORS[model], ops]
            c = conformance(pd.Series(out["profile"], dtype=float), theirs, model_kind="text")
            print(
                f"  vs the authors' {AUTHORS[model]!r} row: missing (>=1%) "
                f"{' '.join(c['missing']) or '-'} | foreign (>=1%) {' '.join(c['foreign']) or '-'}"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
