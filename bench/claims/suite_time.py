"""Wall time of the test suite (the README's pytest step), for a checkout or several.

Issue 42 asks for the README's test command within 6 minutes on the project's 2-core machine:
run this on the old and the new checkout on the same machine, one after the other, with nothing
else running (the load average is printed before and after each run). pytest's options come
from pyproject.toml (pytest-xdist, 1.5 workers per core: tests/conftest.py); add ``-- -n 0`` for one process.

    .venv/bin/python bench/claims/suite_time.py [--repo DIR ...] [--repeats 1] [-- PYTEST ARGS]

Each checkout runs with its own folder first on ``PYTHONPATH`` (so the package under test is
that checkout's, whatever the environment installed) and this interpreter. Lint is not timed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_suite(repo: Path, pytest_args: list[str]) -> tuple[float, str]:
    """Seconds the suite took in ``repo`` and pytest's closing line."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    lines = [ln for ln in done.stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    return seconds, (lines[-1] if lines else f"exit {done.returncode}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", type=Path, help="checkout (default: this one)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for repo in args.repo or [ROOT]:
        for _ in range(args.repeats):
            seconds, summary = run_suite(repo.resolve(), args.pytest_args)
            load = os.getloadavg()[0]
            print(
                f"{repo}: {seconds:.0f} s ({summary}); load average after: {load:.2f}", flush=True
            )


if __name__ == "__main__":
    main()
