"""Does `profet predict` on a refused empty Parquet profile ever abort? Prints exit-code counts.

A hardening audit saw ``terminate called without an active exception`` (exit 134) in 31 of
160 runs: Arrow's I/O thread pool (started by Parquet pre-buffering) torn down at interpreter
exit. Every run should exit 2 with one ``profet: error:`` line.

    .venv/bin/python bench/fuzz/abort.py [--runs 500] [--jobs 3] [--repo PATH]

``--repo`` runs another checkout's profet_core (e.g. the code before the fix) for comparison.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd


def _one(profile: Path, repo: str) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "profet_core", "predict", "--profile", str(profile)]
    env = {**os.environ, "PYTHONPATH": repo}
    # In the checkout itself: `python -m` puts the working folder first on sys.path.
    proc = subprocess.run(
        [*cmd, "--anchor", "x"], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    return proc.returncode, proc.stderr


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--jobs", type=int, default=3, help="runs at a time")
    p.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "empty.parquet"
        pd.DataFrame({"Device_Conv2D": pd.Series([], dtype=float)}).to_parquet(profile)
        start = time.monotonic()
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda _: _one(profile, args.repo), range(args.runs)))
    codes = collections.Counter(code for code, _ in results)
    aborts = sum("terminate called" in err for _, err in results)
    one_line = sum(err.count("\n") == 1 and err.startswith("profet: error:") for _, err in results)
    print(f"profet_core from {args.repo}: {args.runs} runs, {args.jobs} at a time, ", end="")
    print(f"{time.monotonic() - start:.0f} s")
    for code, n in sorted(codes.items()):
        print(f"exit {code}: {n} runs")
    print(f"'terminate called' on stderr: {aborts} runs; one 'profet: error:' line: {one_line}")


if __name__ == "__main__":
    main()
