"""A 200,000-row profile table through `profet predict` (under 10 s), and where the
time goes in process.

Every row is the shipped example profile with each op time scaled by its own random factor
(0.5-2x, whole microseconds as the profiler writes them), so no two rows are alike and no cache
of repeated rows can help.

    .venv/bin/python bench/claims/large_table.py [--rows 200000] [--artifacts DIR] [--repeats 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import profet_core
from profet_core import load_artifacts, read_profile

#: The checkout whose profet_core is imported (this one, or PYTHONPATH's).
ROOT = Path(profet_core.__file__).resolve().parents[1]


def table(example: dict, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` distinct profile rows around ``example`` (op times in whole us, a latency each)."""
    rng = np.random.default_rng(seed)
    base = pd.Series(example["profile"], dtype=float)
    times = (base.to_numpy() * rng.uniform(0.5, 2.0, size=(n, len(base)))).round()
    out = pd.DataFrame(np.maximum(times, 1.0).astype(np.int64), columns=base.index)
    lat = example["batch_latency_s"] * rng.uniform(0.5, 2.0, n)
    return out.assign(batch_latency_s=lat.round(6))


def _stdout_like() -> io.TextIOWrapper:
    """A UTF-8 text stream over bytes in memory, as stdout is over its buffer (the CSV writer
    sends bytes straight to such a buffer)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8")


def _stages(path: Path, anchor: str, artifacts) -> list[tuple[str, float]]:
    """Seconds per stage in process: read, predict, write CSV."""
    from profet_core.cli._main import main

    out = []
    t0 = time.perf_counter()
    profiles = read_profile(path)
    out.append(("read + check the table", time.perf_counter() - t0))
    pred = load_artifacts(artifacts)
    pred.predict(anchor, profiles.head(10))  # load the models outside the timing
    t0 = time.perf_counter()
    result = pred.predict(anchor, profiles)
    out.append(("predict every target", time.perf_counter() - t0))
    t0 = time.perf_counter()
    result.write_csv(_stdout_like())
    out.append(("write CSV", time.perf_counter() - t0))
    argv = ["predict", "--anchor", anchor, "--profile", str(path), "--format", "csv"]
    argv += ["--artifacts", artifacts] if artifacts else []
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(_stdout_like()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
    out.append(("the whole command, in process", time.perf_counter() - t0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--artifacts", default=None)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    pred = load_artifacts(args.artifacts)
    anchor = pred.instances[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.csv"
        table(pred.examples[anchor], args.rows).to_csv(path, index=False)
        size_mb = path.stat().st_size / 1e6
        for fmt in ("csv", "json"):
            cmd = [sys.executable, "-m", "profet_core", "predict", "--anchor", anchor]
            cmd += ["--profile", str(path), "--format", fmt]
            cmd += ["--artifacts", args.artifacts] if args.artifacts else []
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                # cwd: `python -m` puts the working folder before PYTHONPATH on sys.path
                run = subprocess.run(cmd, capture_output=True, check=False, cwd=ROOT)
                times.append(time.perf_counter() - t0)
                if run.returncode != 0:
                    raise SystemExit(run.stderr.decode()[-500:])
            label = f"profet predict, {args.rows:,}-row CSV ({size_mb:.0f} MB), --format {fmt}"
            rows.append((label, f"{min(times):.1f} s (goal < 10 s)"))
        rows += [(f"  {name}", f"{t:.2f} s") for name, t in _stages(path, anchor, args.artifacts)]
    print(pd.DataFrame(rows, columns=["what", "time"]).to_string(index=False))


if __name__ == "__main__":
    main()
