"""What the scripts that add ``published.csv`` rows share: reading a mirror's file at a commit, the
command line, the refusal of rows the table already has, and printing the rows as CSV or
appending them to a file."""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
from collections.abc import Callable
from pathlib import Path


def git_show(git_dir: str, commit: str, path: str) -> str:
    """The text of ``path`` at ``commit`` in the mirror ``git_dir``."""
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def main_for(make_rows: Callable[[str, list[dict]], list[dict]], description: str, argv=None):
    """Run a row-adding script: ``make_rows(git_dir, table_rows)`` gives the new rows (dicts with
    the table's columns); they are printed as CSV, or appended to ``--append FILE``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--git-dir", required=True, help="the mirror's git directory")
    ap.add_argument("--table", default="profet_core/data/published.csv")
    ap.add_argument("--append", metavar="FILE", help="append the rows to FILE")
    args = ap.parse_args(argv)
    with open(args.table, newline="") as f:
        reader = csv.DictReader(f)
        fields, table = reader.fieldnames, list(reader)
    new = make_rows(args.git_dir, table)
    have = {r["source"] for r in table}
    if any(r["source"] in have for r in new):
        raise SystemExit(f"{args.table} already has these rows")
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    if not args.append:
        w.writeheader()
    w.writerows(new)
    if args.append:
        with Path(args.append).open("a", newline="") as f:
            f.write(buf.getvalue())
        print(f"appended {len(new)} rows to {args.append}")
    else:
        print(buf.getvalue(), end="")
