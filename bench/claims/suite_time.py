"""Wall time of the test suite (the README's pytest step), for a checkout or several.

The goal is the README's test command within 6 minutes on the project's 2-core machine:
run this on the old and the new checkout on the same machine, one after the other, with nothing
else running (the load average is printed before and after each run). The suite's CPU time
and a probe of the host's speed (CPU seconds of a fixed pure-Python loop) are printed with each
run: on the project's shared machine the same tests' CPU time moved by 1.55x within hours, so a
wall time says little without them. pytest's options come from pyproject.toml (pytest-xdist,
1.5 workers per core: tests/conftest.py); add ``-- -n 0`` for one process.

    .venv/bin/python bench/claims/suite_time.py [--repo DIR ...] [--repeats 1] [-- PYTEST ARGS]

Each checkout runs with its own folder first on ``PYTHONPATH`` (so the package under test is
that checkout's, whatever the environment installed) and this interpreter. Lint is not timed.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_suite(repo: Path, pytest_args: list[str]) -> tuple[float, float, str]:
    """Seconds the suite took in ``repo``, its CPU seconds and pytest's closing line."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
    t0, cpu0 = time.perf_counter(), _children_cpu()
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False)
    seconds, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    lines = [ln for ln in done.stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    return seconds, cpu, (lines[-1] if lines else f"exit {done.returncode}")


def _children_cpu() -> float:
    """User + system CPU seconds of the ended child processes (pytest and what it waited for)."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def host_probe(n: int = 10_000_000) -> float:
    """CPU seconds this process takes to add up ``range(n)`` in pure Python: the host's speed
    at the moment (lower is faster; 0.26 s on the project's machine on 2026-11-28). It sees the
    core's speed, not a neighbour's use of the shared caches or memory."""
    t0, total = time.process_time(), 0
    for i in range(n):
        total += i
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", type=Path, help="checkout (default: this one)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for repo in args.repo or [ROOT]:
        for _ in range(args.repeats):
            probe = host_probe()
            seconds, cpu, summary = run_suite(repo.resolve(), args.pytest_args)
            load = os.getloadavg()[0]
            print(
                f"{repo}: {seconds:.0f} s, {cpu:.0f} CPU-s ({summary}); load average after: "
                f"{load:.2f}; host probe before / after: {probe:.2f} / {host_probe():.2f} CPU-s",
                flush=True,
            )


if __name__ == "__main__":
    main()
