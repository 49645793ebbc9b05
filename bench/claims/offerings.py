"""How fast one profile is priced on every offering of the shipped snapshot.

Prints the process time of ``profet predict --offerings`` against ``python -c "import pandas"``
(the floor of any pandas command; the target is within 1.5x of it: the ratio of the medians,
and the median of each round's own ratio, its commands run back to back), with Python's bytecode
cached as any installed or once-run copy has it (and, where ``PYTHONDONTWRITEBYTECODE`` is set,
also as run here, profet's modules compiled on every run), and the in-process time of
``predict_offerings`` over the whole snapshot (target: under 20 ms; warm, median and least,
each call on another profile), split into the per-GPU prediction and the join, and apart the
one-off work of loading the artifacts and of the first call. Writes nothing in the repository
(cached bytecode goes to a temporary folder, removed at the end).

    python bench/claims/offerings.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PROFILE = str(ROOT / "examples" / "profile_g3s.json")


def _processes(commands: dict, repeats: int, cached: bool) -> dict:
    """Median seconds of each command (run in turn, ``repeats`` rounds, each round in a new
    order, so that a change in the machine's load hits every command alike), and the median of
    each round's own ratio to pandas. ``cached``: Python's bytecode kept between runs (as after
    ``pip install`` or any first run), in a temporary folder, so nothing is written in the
    repository; else the environment as given (``PYTHONDONTWRITEBYTECODE=1``
    there means every profet module is compiled again on every run)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        if cached:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = tmp
            for argv in commands.values():  # the first run writes the bytecode
                _run(argv, env)
        times = {name: [] for name in commands}
        order = random.Random(0)
        for _ in range(repeats):
            # In a new order each round, so that a disturbance of this machine that recurs with
            # the period of a round cannot fall on the same command every time.
            for name in order.sample(list(commands), len(commands)):
                times[name].append(_run(commands[name], env))
    medians = {
        name: tuple(statistics.median(x) for x in zip(*t, strict=True)) for name, t in times.items()
    }
    # This machine's speed drifts between runs (a shared VM): a round's commands run back to
    # back, so each round's own ratio to pandas is also given (median over rounds).
    paired = {
        name: tuple(
            statistics.median(a[k] / b[k] for a, b in zip(t, times["pandas"], strict=True))
            for k in (0, 1)
        )
        for name, t in times.items()
    }
    return medians, paired


def _run(argv, env) -> tuple[float, float]:
    """(wall s, CPU s: user + system of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(
        argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _in_process(fn, repeats, inputs=None) -> tuple[float, float, float]:
    """(first call, median, least) ms of ``fn``: the first call does the one-off work (models
    built, the snapshot read); the others are timed warm, each on its own input of ``inputs``
    (another profile every call, so no answer can come from a cache of the last one)."""
    inputs = [()] * (repeats + 1) if inputs is None else inputs
    t = time.perf_counter()
    fn(*inputs[0])
    first = time.perf_counter() - t
    times = []
    for i in range(repeats):
        t = time.perf_counter()
        fn(*inputs[i + 1])
        times.append(time.perf_counter() - t)
    return first * 1000, statistics.median(times) * 1000, min(times) * 1000


def _profiles(profile, n: int) -> list:
    """``n`` profiles: the example's op times scaled by 1 + i/1000 (a new table each)."""
    from profet_core._schema import op_columns

    ops = op_columns(profile.columns)
    return [(profile.assign(**{c: profile[c] * (1 + i / 1000) for c in ops}),) for i in range(n)]


def _page(repeats: int) -> None:
    """The Anchor page's answer to Predict (AppTest, built-in example), with the offerings
    section and, interleaved, with it switched off: seconds, median."""
    from unittest import mock

    from streamlit.testing.v1 import AppTest

    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    from profet_app import offerings_front

    def once():
        at = AppTest.from_file(
            str(ROOT / "pages" / "anchor_prediction.py"), default_timeout=120
        ).run()
        t = time.perf_counter()
        at.button(key="predict").click().run()
        assert not at.exception, [e.value for e in at.exception]
        return time.perf_counter() - t

    once()  # warm: artifacts loaded and cached by the app
    on, off = [], []
    for _ in range(repeats):
        on.append(once())
        with mock.patch.object(offerings_front, "price", lambda *a, **k: None):
            off.append(once())
    print(
        f"Anchor page, Predict to answer (AppTest): {statistics.median(on):.2f} s with every "
        f"offering, {statistics.median(off):.2f} s without the offerings section (target < 2 s)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--page", action="store_true", help="also time the Anchor page (AppTest)")
    args = ap.parse_args()
    n = args.repeats
    from profet_core import load_artifacts, predict_offerings, read_profile
    from profet_core.offerings import OfferingFilter
    from profet_core.offerings._join import join_offerings
    from profet_core.offerings._predict import _shipped_side, _shown, extended

    t = time.perf_counter()
    predictor = load_artifacts()
    loaded = (time.perf_counter() - t) * 1000
    profile = read_profile(PROFILE)
    many = _profiles(profile, n + 1)
    first, whole, least = _in_process(
        lambda p: predict_offerings(predictor, "g3s.xlarge", p), n, many
    )
    done = predict_offerings(predictor, "g3s.xlarge", profile)
    off = _shipped_side(OfferingFilter(), 1)
    cli = [sys.executable, "-m", "profet_core", "predict", "--profile", PROFILE, "--offerings"]
    commands = {
        "pandas": [sys.executable, "-c", "import pandas"],
        "offerings": [*cli, "--format", "csv"],
        "plain": [*cli[:-1], "--format", "csv"],
    }
    modes = [("bytecode cached", True)]
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        modes.append(("PYTHONDONTWRITEBYTECODE set here: profet compiled on every run", False))
    process = [(label, _processes(commands, n, cached)) for label, cached in modes]
    wide, targets = extended(predictor), list(done.prediction.table["target"])
    pred = _in_process(lambda p: wide.predict("g3s.xlarge", p, targets=targets), n, many)[1]
    shown = _shown(done.prediction.table)  # the columns predict_offerings joins
    join = _in_process(lambda: join_offerings(shown, None, off=off), n)[1]
    print(f"load average {os.getloadavg()[0]:.1f}, median of {n}")
    print(
        f"offerings priced: {done.table['usd_per_1000_steps'].notna().sum()} of "
        f"{len(done.table)} shown ({len(done.prediction.table)} GPU predictions)"
    )
    for label, (t, paired) in process:
        for i, kind in enumerate(("wall", "CPU")):
            off, pandas, plain = t["offerings"][i], t["pandas"][i], t["plain"][i]
            print(
                f"process, {kind} ({label}): profet predict --offerings {off:.2f} s; python -c "
                f"'import pandas' {pandas:.2f} s; ratio {off / pandas:.2f} (target <= 1.5; "
                f"round by round {paired['offerings'][i]:.2f}); plain profet predict (every "
                f"spec line, no offerings) {plain:.2f} s, ratio {plain / pandas:.2f}"
            )
    print(
        f"in process: predict_offerings {whole:.1f} ms median, {least:.1f} ms least (target "
        f"< 20; warm, each call on another profile); of it the per-GPU prediction {pred:.1f} "
        f"ms, the join {join:.1f} ms (medians)"
    )
    print(
        f"in process, once: load_artifacts {loaded:.0f} ms; the first predict_offerings "
        f"{first:.0f} ms (one-off: models built, the snapshot read and chosen)"
    )
    if args.page:
        _page(max(3, n // 2))


if __name__ == "__main__":
    main()
