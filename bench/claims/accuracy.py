"""Accuracy benchmark: leave-one-architecture-out comparison of every estimator, printed as one
Markdown report (noise floor, baselines, PROFET reference and members, the default method;
with and without the anchor latency; interval coverage; scaler errors) and written to docs/.

    .venv/bin/python bench/claims/accuracy.py [--data ../shared/data/profet] [--out docs/accuracy]

With ``--onepoint-only`` only the one-point scaler is validated again (about 25 s) and the
report is re-rendered from the folder's saved tables plus that run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from profet_core.cli._main import main as profet


def _onepoint_only(data: Path, out: Path) -> None:
    import pandas as pd

    from profet_core import load_dataset
    from profet_core.onepoint import POWER, cross_validate_one_point, summarize_one_point
    from profet_core.training._report import accuracy_markdown

    dataset = load_dataset(data)
    oof = [cross_validate_one_point(dataset, by) for by in POWER]
    onepoint = summarize_one_point(pd.concat(oof, ignore_index=True))
    onepoint.to_csv(out / "onepoint.csv", index=False)
    tables = {n: pd.read_csv(out / f"{n}.csv") for n in ("metrics", "noise", "scalers")}
    extra = {n: pd.read_csv(out / f"{n}.csv") for n in ("breakdown", "novelty")}
    report = accuracy_markdown(**tables, **extra, onepoint=onepoint)
    (out / "report.md").write_text(report)
    print(report[report.index("## Scaler from one latency") :])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default="../shared/data/profet")
    ap.add_argument(
        "--out",
        help="folder for the CSVs, the report copied beside it as accuracy.md (docs/accuracy, "
        "tracked: only to regenerate the docs); default: a new scratch folder",
    )
    ap.add_argument("--dnn-epochs", type=int, help="cap the reference DNN's epochs")
    ap.add_argument("--onepoint-only", action="store_true", help="see the module docstring")
    args, rest = ap.parse_known_args()
    if args.out is None:  # a README command never rewrites tracked docs
        args.out = str(Path(tempfile.mkdtemp(prefix="profet-accuracy-")) / "accuracy")
        print(f"writing to {args.out} (give --out docs/accuracy to regenerate the docs)")
    if args.onepoint_only:
        _onepoint_only(Path(args.data), Path(args.out))
        shutil.copy(Path(args.out) / "report.md", Path(args.out).parent / "accuracy.md")
        return 0
    argv = ["validate", "--data", args.data, "--out", args.out, *rest]
    if args.dnn_epochs:
        argv += ["--dnn-epochs", str(args.dnn_epochs)]
    code = profet(argv)
    if code == 0:
        shutil.copy(Path(args.out) / "report.md", Path(args.out).parent / "accuracy.md")
    return code


if __name__ == "__main__":
    sys.exit(main())
