"""Accuracy benchmark: leave-one-architecture-out comparison of every estimator, printed as one
Markdown report (noise floor, baselines, PROFET reference and members, the default method;
with and without the anchor latency; interval coverage; scaler errors) and written to docs/.

    .venv/bin/python bench/accuracy.py [--data ../shared/data/profet] [--out docs/accuracy]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from profet_core._cli import main as profet


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default="../shared/data/profet")
    ap.add_argument(
        "--out",
        default="docs/accuracy",
        help="folder for the CSVs (report copied to docs/accuracy.md)",
    )
    ap.add_argument("--dnn-epochs", type=int, help="cap the reference DNN's epochs")
    args, rest = ap.parse_known_args()
    argv = ["validate", "--data", args.data, "--out", args.out, *rest]
    if args.dnn_epochs:
        argv += ["--dnn-epochs", str(args.dnn_epochs)]
    code = profet(argv)
    if code == 0:
        shutil.copy(Path(args.out) / "report.md", Path(args.out).parent / "accuracy.md")
    return code


if __name__ == "__main__":
    sys.exit(main())
