"""Shared fixtures: a small synthetic PROFET dataset made by the tests themselves (its builders
and the other shared helpers are in ``tests/_utils.py``)."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# One BLAS/OpenMP thread per test process (and the processes tests start): pytest-xdist already
# runs a worker per core, and a second thread per worker only spins against the other worker
# (the spec model's least-squares SVDs took a third longer with two). Set before numpy loads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# The test processes write the bytecode caches of what they import: the README's test command
# installs without compiling every module up front (`pip install --no-compile`), and where
# PYTHONDONTWRITEBYTECODE is set each process would otherwise compile TensorFlow and the rest
# again. Popped here, before pytest-xdist starts its workers, so they and the processes tests
# start inherit it; the first process to import a module compiles it once (44% of the venv's
# modules in a whole run).
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    sys.dont_write_bytecode = False

import pytest  # noqa: E402

from tests._utils import make_synthetic, synthetic_catalog  # noqa: E402


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than half again the cores (3 on 2 cores). Many tests wait on
    a process they started (TensorFlow captures, SkyPilot, the served app and Chromium, the
    trained artifacts' background build): with a worker per core a core sat idle meanwhile (the
    quick loop: 276 s with 2 workers, 171 s with 3, the same CPU time, on this 2-core machine)."""
    return max(2, (os.cpu_count() or 1) * 3 // 2)


#: Kinds of test the quick loop (``-m "not slow"``) leaves to the full run, marked ``slow``
#: here rather than one by one: they read the real data, run TensorFlow, fuzz (hypothesis:
#: hundreds of examples each) or drive a browser. A test that starts SkyPilot or takes about
#: five seconds or more for another reason is marked in its module.
_SLOW_KINDS = ("realdata", "browser")
#: Skip reasons of ``tests._utils.requires_shared`` and ``tests.core.capture._utils.requires_tf``.
_SLOW_NEEDS = ("real PROFET data not found", "tensorflow, tensorboard, xprof")


def pytest_collection_modifyitems(config, items):
    """Mark the kinds of :data:`_SLOW_KINDS`, the tests that need the shared data or
    TensorFlow (:data:`_SLOW_NEEDS`, or the ``trained_all`` artifacts) and the fuzz modules
    (``test_fuzz*.py``) ``slow``."""
    for item in items:
        needs_shared = any(
            str(m.kwargs.get("reason", "")).startswith(_SLOW_NEEDS)
            for m in item.iter_markers("skipif")
        )
        kinds = any(item.get_closest_marker(k) for k in _SLOW_KINDS)
        # the artifacts with the reference's DNN: TensorFlow trains it
        kinds = kinds or "trained_all" in getattr(item, "fixturenames", ())
        if kinds or needs_shared or item.path.name.startswith("test_fuzz"):
            item.add_marker(pytest.mark.slow)
    # Files with slow tests first (pytest-xdist hands out whole files in this order): a long
    # file started last kept one worker busy while the other sat idle at the end of a run.
    heavy = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in heavy)


@pytest.fixture(scope="session")
def synthetic_tables():
    return make_synthetic()


@pytest.fixture(scope="session")
def synthetic_dataset(synthetic_tables):
    from profet_core import make_dataset

    return make_dataset(*synthetic_tables)


@pytest.fixture(scope="session")
def synthetic_dir(tmp_path_factory, synthetic_tables):
    d = tmp_path_factory.mktemp("data")
    synthetic_tables[0].to_parquet(d / "profiles.parquet")
    synthetic_tables[1].to_csv(d / "latencies.csv", index=False)
    synthetic_catalog().to_csv(d / "instances.csv", index=False)
    return d


def _run_root(tmp_path_factory) -> Path:
    """The folder every pytest-xdist worker of this run shares (the workers' basetemps' parent)."""
    return tmp_path_factory.getbasetemp().parent


def once_per_run(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` once per test run, its folder shared by every pytest-xdist worker (the
    first to get the lock builds it, the others wait and reuse it; one started in the background
    by :func:`pytest_collection_finish` is waited for); without xdist, once per session. The
    folder is ``name`` under the run's temporary root; ``build`` creates it."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        out = tmp_path_factory.mktemp(name) / name
        build(out)
        return out
    root = _run_root(tmp_path_factory)
    out, done = root / name, root / f"{name}.done"
    _wait_for_background(root, name)
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            build(out)
            done.touch()
    return out


#: The trained-artifacts fixtures: {fixture: (folder name, methods trained)}. ``trained`` has
#: the default method only (the hybrid: no TensorFlow, so the quick loop runs without it);
#: ``trained_all`` every method, the reference's short DNN included (TensorFlow).
ARTIFACTS = {"trained": ("artifacts", ("hybrid",)), "trained_all": ("artifacts_all", None)}
#: Whether the reference's DNN can be trained here (``profet train`` imports TensorFlow for it).
HAS_TENSORFLOW = importlib.util.find_spec("tensorflow") is not None

#: The background build of a trained-artifacts fixture (a script run by ``python -c``).
_BACKGROUND = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from profet_core import make_dataset
from tests._utils import make_synthetic
from tests.conftest import ARTIFACTS, _train
out = Path(sys.argv[2])
name, methods = ARTIFACTS[sys.argv[3]]
_train(out / name, make_dataset(*make_synthetic()), methods)
(out / f"{name}.done").touch()
"""


def pytest_collection_finish(session):
    """Under pytest-xdist, start training each shared trained-artifacts fixture (:data:`ARTIFACTS`)
    in a background process as soon as a worker sees a test that needs it: the other tests run
    meanwhile, and no worker sits idle waiting for a build that takes a minute (the first to
    claim it starts it; a test needing it waits for it, or builds it itself if the background
    build failed)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return
    root = _run_root(session.config._tmp_path_factory)
    for fixture, (name, _) in ARTIFACTS.items():
        if fixture == "trained_all" and not HAS_TENSORFLOW:
            continue  # its tests skip
        if any(fixture in getattr(item, "fixturenames", ()) for item in session.items):
            _start_build(root, fixture, name)


def _start_build(root: Path, fixture: str, name: str) -> None:
    try:
        claim = os.open(root / f"{name}.started", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # another worker started it
    repo = str(Path(__file__).resolve().parents[1])
    with (root / f"{name}.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", _BACKGROUND, repo, root, fixture],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    os.write(claim, str(proc.pid).encode())
    os.close(claim)
    _BUILDS.append(proc)


#: Background builds this worker started (stopped when its session ends).
_BUILDS: list = []


def pytest_sessionfinish(session):
    """A background build still running when this worker ends (a run cut short) is stopped: a
    worker still waiting for it then builds the artifacts itself."""
    for proc in _BUILDS:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_for_background(root: Path, name: str) -> None:
    """Wait for a background build of ``name`` (if one was started) to end, either way."""
    started = root / f"{name}.started"
    if not started.exists() or (root / f"{name}.done").exists():
        return
    try:
        pid = int(started.read_text() or 0)
    except ValueError:
        return
    while pid and not (root / f"{name}.done").exists():
        try:
            os.kill(pid, 0)  # still running? (a zombie counts until its parent reaps it)
        except ProcessLookupError:
            return  # it ended without finishing: the caller builds under the lock
        if _is_zombie(pid):
            return
        time.sleep(0.5)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return False


@pytest.fixture(scope="session")
def trained(tmp_path_factory, synthetic_dataset):
    """Artifacts trained on the synthetic data with the default method (the hybrid) and its
    intervals: everything but the reference's DNN, so no TensorFlow. Trained once per run, also
    under pytest-xdist (:func:`once_per_run`)."""
    return _artifacts(tmp_path_factory, synthetic_dataset, "trained")


@pytest.fixture(scope="session")
def trained_all(tmp_path_factory, synthetic_dataset):
    """Artifacts trained on the synthetic data with every method (the reference's DNN short),
    intervals calibrated for the default method only (calibrating the DNN over every fold takes
    minutes). Skips where TensorFlow is absent: training the DNN needs it."""
    if not HAS_TENSORFLOW:
        pytest.skip(
            "tensorflow is needed to train the reference's DNN (pip install 'profet[capture]')"
        )
    return _artifacts(tmp_path_factory, synthetic_dataset, "trained_all")


def _artifacts(tmp_path_factory, synthetic_dataset, fixture: str) -> Path:
    name, methods = ARTIFACTS[fixture]
    return once_per_run(tmp_path_factory, name, lambda out: _train(out, synthetic_dataset, methods))


def _train(out: Path, synthetic_dataset, methods=None) -> None:
    from profet_core import train

    train(
        synthetic_dataset,
        synthetic_catalog(),
        out,
        methods=None if methods is None else list(methods),
        # Small ensembles keep this shared fixture to seconds; accuracy tests allow for it.
        method_params={
            "profet": {"dnn_params": {"epochs": 20}},
            "hybrid": {"n_trees_et": 30, "n_trees_gb": 60},
        },
    )


@pytest.fixture
def unreadable_data(tmp_path) -> Path:
    """A dataset folder whose tables cannot be read: a refusal that names something else (a
    flag, --out) shows that it was checked before the data were read."""
    d = tmp_path / "unreadable-data"
    d.mkdir()
    (d / "profiles.parquet").write_bytes(b"not parquet")
    (d / "latencies.csv").write_text("x\n1\n")
    synthetic_catalog().to_csv(d / "instances.csv", index=False)
    return d
