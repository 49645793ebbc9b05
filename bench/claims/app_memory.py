"""The app server's memory over rounds of concurrent sessions that upload a large profile.

    .venv/bin/python bench/claims/app_memory.py [--sessions 5] [--rounds 3] [--size-mb 43] [--idle-s 60]

Serves ``streamlit run app.py`` on a free loopback port (``--root`` serves another checkout, e.g.
an older commit for a before/after comparison) and drives headless Chromium (Debian's
``/usr/bin/chromium``, through Playwright). Each round opens ``--sessions`` browser sessions at
once; each uploads its own valid ``--size-mb`` MB profile CSV (many profile rows, made from
``examples/profiles_g3s.csv`` with jitter; under the app's 50 MB upload cap), waits for the
upload, clicks Predict, waits for the result and closes. The server starts as the README's
start command starts it (with glibc's settings; ``--no-glibc-env``: without). Prints the
resident memory of the server and its child processes (``/proc/PID/status``) at start, its
peak and its value ``--settle-s`` seconds after each round, and ``--idle-s`` seconds after the
last one. Writes nothing but its generated profiles, in a temporary folder it removes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, serve_app_process  # noqa: E402

ANCHOR = "g3s.xlarge"  # the instance examples/profiles_g3s.csv was profiled on
#: glibc's settings the README's start command (and the Docker image) give the server.
GLIBC_ENV = ("MALLOC_ARENA_MAX=2", "MALLOC_MMAP_THRESHOLD_=262144")


def _own_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:  # no such file (kernel without it) or the process has gone
        return []


def rss_mb(pid: int) -> float:
    """Resident memory in MB (``VmRSS``) of process ``pid`` and its child processes (the app
    predicts a many-row file in a child)."""
    total = _own_rss_mb(pid)
    for child in _children(pid):
        try:
            total += rss_mb(child)
        except (OSError, RuntimeError):  # it ended meanwhile
            pass
    return total


class PeakSampler:
    """Samples a process' RSS every ``every_s`` seconds in a thread; ``take()`` returns the peak
    since the last call."""

    def __init__(self, pid: int, every_s: float = 0.25):
        self.pid, self.every_s, self.peak = pid, every_s, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except (OSError, RuntimeError):
                return

    def take(self) -> float:
        peak, self.peak = self.peak, 0.0
        return peak

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def profile_chunk(n_rows: int = 1000, seed: int = 0) -> tuple[bytes, bytes]:
    """The header and ``n_rows`` jittered rows of the example profile table, as CSV bytes."""
    base = pd.read_csv(ROOT / "examples" / "profiles_g3s.csv")
    rng = np.random.default_rng(seed)
    rows = base.sample(n_rows, replace=True, random_state=seed).reset_index(drop=True)
    ops = [c for c in rows.columns if c.startswith(("Host_", "Device_"))]
    rows[ops] = (rows[ops] * rng.uniform(0.9, 1.1, size=(n_rows, len(ops)))).round(3)
    return (",".join(rows.columns) + "\n").encode(), rows.to_csv(index=False, header=False).encode()


def profile_file(header: bytes, chunk: bytes, size: int, tag: int) -> bytes:
    """A profile CSV of about ``size`` bytes whose first row is unique to ``tag`` (so no two
    sessions upload the same content)."""
    first = chunk.split(b"\n", 1)[0].split(b",")
    first[0] = f"{float(first[0]) + tag * 1e-3:.3f}".encode()
    unique = b",".join(first) + b"\n"
    return header + unique + chunk * max(1, (size - len(header)) // len(chunk))


async def _settle(page, timeout_ms: float) -> None:
    """Wait until Streamlit has finished running the script (its status widget is gone)."""
    await page.wait_for_timeout(500)
    await page.locator('[data-testid="stStatusWidget"]').wait_for(
        state="detached", timeout=timeout_ms
    )


async def one_session(browser, url: str, data: Path | None, timeout_ms: float) -> tuple[str, float]:
    """Upload the file ``data`` (None: keep the built-in example), click Predict, wait for the
    result; ``(outcome, seconds)``."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        await page.goto(f"{url}/?anchor={ANCHOR}", wait_until="domcontentloaded")
        if data is not None:
            await page.get_by_text("Upload a file", exact=True).click()
            # A path, not a buffer: Chromium reads the file itself (43 MB through the
            # Playwright driver per session cost minutes of CPU on a loaded machine).
            await page.locator('input[type="file"]').set_input_files(data)
            # The chip shows a spinner until the server has the file.
            await page.locator('[data-testid="stFileChip"]').first.wait_for()
            spinner = page.locator('[data-testid="stFileChipIconSpinner"]').first
            await spinner.wait_for(state="detached")
        await _settle(page, timeout_ms)
        t0 = time.perf_counter()
        await page.get_by_role("button", name="Predict").click()
        result = page.get_by_text(f"from a profile on {ANCHOR}").first
        error = page.locator('[data-testid="stAlertContentError"]').first
        await result.or_(error).wait_for()
        await _settle(page, timeout_ms)
        elapsed = time.perf_counter() - t0
        if await error.count():
            return f"error: {(await error.inner_text())[:200]}", elapsed
        return "ok", elapsed
    except Exception as exc:  # a timeout is an outcome to report, not a crash of the bench
        return f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}", float("nan")
    finally:
        await context.close()


async def rounds(url: str, pid: int, args) -> tuple[float, float]:
    from playwright.async_api import async_playwright

    header, chunk = profile_chunk()
    size = int(args.size_mb * 1e6)
    sampler = PeakSampler(pid)
    print(f"server RSS at start: {rss_mb(pid):.0f} MB", flush=True)
    with tempfile.TemporaryDirectory(prefix="profet-app-memory-") as scratch:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, timeout=TIMEOUT_MS
            )
            # One session on the built-in example loads the models: the warm server's footprint.
            outcome, _ = await one_session(browser, url, None, args.timeout_s * 1000)
            await asyncio.sleep(args.settle_s)
            warm = rss_mb(pid)
            print(f"server RSS after one built-in example ({outcome}): {warm:.0f} MB", flush=True)
            sampler.take()
            for r in range(1, args.rounds + 1):
                files = []
                for s in range(args.sessions):
                    files.append(Path(scratch) / f"profiles_{r}_{s}.csv")
                    files[-1].write_bytes(profile_file(header, chunk, size, r * 100 + s))
                t0 = time.perf_counter()
                done = await asyncio.gather(
                    *(one_session(browser, url, f, args.timeout_s * 1000) for f in files)
                )
                wall = time.perf_counter() - t0
                for f in files:
                    f.unlink()
                await asyncio.sleep(args.settle_s)
                outcomes = {o for o, _ in done}
                times = ", ".join(f"{t:.1f}" for _, t in done)
                print(
                    f"round {r}: {args.sessions} sessions x {size / 1e6:g} MB in "
                    f"{wall:.0f} s ({'; '.join(sorted(outcomes))}; Predict -> result {times} s); "
                    f"RSS peak {sampler.take():.0f} MB, {args.settle_s:g} s after closing "
                    f"{rss_mb(pid):.0f} MB",
                    flush=True,
                )
            await browser.close()
    await asyncio.sleep(args.idle_s)
    sampler.stop()
    return warm, rss_mb(pid)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sessions", type=int, default=5, help="concurrent sessions per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size-mb", type=float, default=43.0, help="size of each uploaded profile")
    ap.add_argument("--settle-s", type=float, default=10.0, help="wait after each round")
    ap.add_argument("--idle-s", type=float, default=60.0, help="wait after the last round")
    ap.add_argument("--timeout-s", type=float, default=900.0, help="per browser step")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve")
    ap.add_argument("--goal-mb", type=float, default=300.0, help="allowed growth after idle")
    ap.add_argument(
        "--no-glibc-env",
        action="store_true",
        help=f"start the server without the README's glibc settings ({' '.join(GLIBC_ENV)})",
    )
    args = ap.parse_args()
    env = {} if args.no_glibc_env else dict(v.split("=") for v in GLIBC_ENV)
    print(f"server environment: {' '.join(f'{k}={v}' for k, v in env.items()) or '(as is)'}")
    with serve_app_process(root=args.root.resolve(), env=env) as (url, proc):
        start = rss_mb(proc.pid)
        warm, end = asyncio.run(rounds(url, proc.pid, args))
    print(f"server RSS {args.idle_s:g} s after the last session closed: {end:.0f} MB")
    for what, base in (("start", start), ("the warm server", warm)):
        verdict = "within" if end - base <= args.goal_mb else "NOT within"
        print(f"growth over {what}: {end - base:+.0f} MB ({verdict} the {args.goal_mb:g} MB goal)")


if __name__ == "__main__":
    main()
