"""How fast one profile is priced on every offering of the shipped snapshot (issue 26).

Prints the process time of ``profet predict --offerings`` against ``python -c "import pandas"``
(the floor of any pandas command; the target is within 1.5x of it), and the in-process time of
``predict_offerings`` over the whole snapshot (target: under 20 ms), split into the per-GPU
prediction and the join. Writes nothing.

    python bench/offerings.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROFILE = str(ROOT / "examples" / "profile_g3s.json")


def _process(argv, repeats):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(
            argv,
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        times.append(time.perf_counter() - t)
    return statistics.median(times)


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
    from profet_core.offerings._predict import _shipped_side, extended

    predictor = load_artifacts()
    profile = read_profile(PROFILE)
    done = predict_offerings(predictor, "g3s.xlarge", profile)
    off = _shipped_side(OfferingFilter(), 1)
    pandas = _process([sys.executable, "-c", "import pandas"], n)
    cli = [sys.executable, "-m", "profet_core", "predict", "--profile", PROFILE, "--offerings"]
    proc = _process([*cli, "--format", "csv"], n)
    plain = _process([*cli[:-1], "--format", "csv"], n)
    whole = _in_process(lambda: predict_offerings(predictor, "g3s.xlarge", profile), n)
    wide, targets = extended(predictor), list(done.prediction.table["target"])
    pred = _in_process(lambda: wide.predict("g3s.xlarge", profile, targets=targets), n)
    join = _in_process(lambda: join_offerings(done.prediction.table, None, off=off), n)
    print(f"load average {os.getloadavg()[0]:.1f}, median of {n}")
    print(
        f"offerings priced: {done.table['usd_per_1000_steps'].notna().sum()} of "
        f"{len(done.table)} shown ({len(done.prediction.table)} GPU predictions)"
    )
    print(
        f"process: profet predict --offerings {proc:.2f} s; python -c 'import pandas' "
        f"{pandas:.2f} s; ratio {proc / pandas:.2f} (target <= 1.5); plain profet predict "
        f"(every spec line, no offerings) {plain:.2f} s, ratio {plain / pandas:.2f}"
    )
    print(
        f"in process: predict_offerings {whole:.1f} ms (target < 20); of it the per-GPU "
        f"prediction {pred:.1f} ms, the join {join:.1f} ms"
    )
    if args.page:
        _page(max(3, n // 2))


if __name__ == "__main__":
    main()
