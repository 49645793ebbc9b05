"""How fast one profile is priced on every offering of the shipped snapshot (issue 26).

Prints the process time of ``profet predict --offerings`` against ``python -c "import pandas"``
(the floor of any pandas command; the target is within 1.5x of it), with Python's bytecode
cached as any installed or once-run copy has it (and, where ``PYTHONDONTWRITEBYTECODE`` is set,
also as run here, profet's modules compiled on every run), and the in-process time of
``predict_offerings`` over the whole snapshot (target: under 20 ms), split into the per-GPU
prediction and the join. Writes nothing in the repository (cached bytecode goes to a temporary
folder, removed at the end).

    python bench/offerings.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROFILE = str(ROOT / "examples" / "profile_g3s.json")


def _processes(commands: dict, repeats: int, cached: bool) -> dict:
    """Median seconds of each command (run in turn, ``repeats`` rounds, so that a change in
    the machine's load hits every command alike). ``cached``: Python's bytecode kept between
    runs (as after ``pip install`` or any first run), in a temporary folder, so nothing is
    written in the repository; else the environment as given (``PYTHONDONTWRITEBYTECODE=1``
    there means every profet module is compiled again on every run)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        if cached:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = tmp
            for argv in commands.values():  # the first run writes the bytecode
                _run(argv, env)
        times = {name: [] for name in commands}
        for _ in range(repeats):
            for name, argv in commands.items():
                times[name].append(_run(argv, env))
    return {
        name: tuple(statistics.median(x) for x in zip(*t, strict=True)) for name, t in times.items()
    }


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


def _in_process(fn, repeats):
    fn()  # warm: artifacts built, snapshot read
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def _page(repeats: int) -> None:
    """The Anchor page's answer to Predict (AppTest, built-in example), with the offerings
    section and, interleaved, with it switched off: seconds, median."""
    from unittest import mock

    from streamlit.testing.v1 import AppTest

    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    import ui_offerings

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
        with mock.patch.object(ui_offerings, "price", lambda *a, **k: None):
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

    predictor = load_artifacts()
    profile = read_profile(PROFILE)
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
    whole = _in_process(lambda: predict_offerings(predictor, "g3s.xlarge", profile), n)
    wide, targets = extended(predictor), list(done.prediction.table["target"])
    pred = _in_process(lambda: wide.predict("g3s.xlarge", profile, targets=targets), n)
    shown = _shown(done.prediction.table)  # the columns predict_offerings joins
    join = _in_process(lambda: join_offerings(shown, None, off=off), n)
    print(f"load average {os.getloadavg()[0]:.1f}, median of {n}")
    print(
        f"offerings priced: {done.table['usd_per_1000_steps'].notna().sum()} of "
        f"{len(done.table)} shown ({len(done.prediction.table)} GPU predictions)"
    )
    for label, t in process:
        for i, kind in enumerate(("wall", "CPU")):
            off, pandas, plain = t["offerings"][i], t["pandas"][i], t["plain"][i]
            print(
                f"process, {kind} ({label}): profet predict --offerings {off:.2f} s; python -c "
                f"'import pandas' {pandas:.2f} s; ratio {off / pandas:.2f} (target <= 1.5); "
                f"plain profet predict (every spec line, no offerings) {plain:.2f} s, ratio "
                f"{plain / pandas:.2f}"
            )
    print(
        f"in process: predict_offerings {whole:.1f} ms (target < 20); of it the per-GPU "
        f"prediction {pred:.1f} ms, the join {join:.1f} ms"
    )
    if args.page:
        _page(max(3, n // 2))


if __name__ == "__main__":
    main()
