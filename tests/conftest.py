"""Shared fixtures: a small synthetic PROFET dataset made by the tests themselves (its builders
and the other shared helpers are in ``tests/_utils.py``)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

# One BLAS/OpenMP thread per test process (and the processes tests start): pytest-xdist already
# runs a worker per core, and a second thread per worker only spins against the other worker
# (the spec model's least-squares SVDs took a third longer with two). Set before numpy loads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

from tests._utils import make_synthetic, synthetic_catalog  # noqa: E402


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


def once_per_run(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` once per test run, its folder shared by every pytest-xdist worker (the
    first to get the lock builds it, the others wait and reuse it); without xdist, once per
    session. The folder is ``name`` under the run's temporary root; ``build`` creates it."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        out = tmp_path_factory.mktemp(name) / name
        build(out)
        return out
    root = tmp_path_factory.getbasetemp().parent  # shared by the workers of this run
    out, done = root / name, root / f"{name}.done"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            build(out)
            done.touch()
    return out


@pytest.fixture(scope="session")
def trained(tmp_path_factory, synthetic_dataset):
    """Artifacts trained on the synthetic data: every method (a short DNN), intervals calibrated
    for the default method only (calibrating the reference's DNN over every fold takes minutes).
    Trained once per run, also under pytest-xdist (:func:`once_per_run`)."""
    return once_per_run(tmp_path_factory, "artifacts", lambda out: _train(out, synthetic_dataset))


def _train(out: Path, synthetic_dataset) -> None:
    from profet_core import train

    train(
        synthetic_dataset,
        synthetic_catalog(),
        out,
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
