"""How much a retrain moved a user's answers: one profile predicted with two artifact folders.

Prints, per target and GPU count, the step time of the new artifacts over the old ones (%), for
FP32 and AMP on every GPU of each instance. Used after a published-data round
(docs/amp_decision_rule.md) to say what the new rows did to the answers a user gets. Get the old
artifacts from a commit with ``git worktree add /tmp/old <commit>``.

    python bench/studies/answer_shift.py --old /tmp/old/artifacts [--new artifacts]
        [--profile examples/profile_g3s.json --anchor g3s.xlarge]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "claims"))  # bench/claims: _sections
from _sections import emit, md_table

from profet_core import load_artifacts, read_profile


def steps(artifacts: str, profile: pd.DataFrame, anchor: str, precision: str) -> pd.Series:
    """Step time (ms) per (target, gpus) of ``profile`` on every GPU of each instance."""
    pred = load_artifacts(artifacts).predict(anchor, profile, precision=precision, gpus="all")
    return pred.table.set_index(["target", "gpus"])["batch_latency_ms"]


def report(old: str, new: str, profile_path: str, anchor: str) -> str:
    profile = read_profile(profile_path)
    cols = {}
    for precision in ("fp32", "amp"):
        before = steps(old, profile, anchor, precision)
        after = steps(new, profile, anchor, precision)
        cols[f"{precision}_change_pct"] = 100 * (after / before - 1)
    table = pd.DataFrame(cols).reset_index()
    return "\n".join(
        [
            f"## Step time, new artifacts over old (%): {profile_path} from {anchor}",
            "",
            f"Old: `{old}`; new: `{new}`; every GPU of each instance.",
            "",
            md_table(table, ".1f"),
        ]
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the artifacts folder before the change")
    ap.add_argument("--new", default="artifacts", help="the artifacts folder after it")
    ap.add_argument("--profile", default="examples/profile_g3s.json")
    ap.add_argument("--anchor", default="g3s.xlarge")
    ap.add_argument("--out", help="also write the table to this Markdown file")
    args = ap.parse_args(argv)
    emit(report(args.old, args.new, args.profile, args.anchor), args.out)


if __name__ == "__main__":
    main()
