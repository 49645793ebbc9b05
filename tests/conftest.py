"""Shared fixtures: a small synthetic PROFET dataset made by the tests themselves (its builders
and the other shared helpers are in ``tests/_utils.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._utils import make_synthetic, synthetic_catalog


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


@pytest.fixture(scope="session")
def trained(tmp_path_factory, synthetic_dataset):
    """Artifacts trained on the synthetic data: every method (a short DNN), intervals calibrated
    for the default method only (calibrating the reference's DNN over every fold takes minutes)."""
    from profet_core import train

    out = tmp_path_factory.mktemp("art") / "artifacts"
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
    return out


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
