"""Prices and GPU names are user data (issue 12, item 5): a catalog file overrides them without
touching the checksummed models; a bad one is refused by name."""

from __future__ import annotations

import hashlib
import re

import pandas as pd
import pytest

from profet_core import ProfetValueError, load_artifacts
from tests._utils import run


def _digests(folder):
    return {
        p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def prices(tmp_path):
    path = tmp_path / "prices.csv"
    pd.DataFrame({"instance": ["gpu-b"], "gpu": ["GB-2"], "usd_per_hour": [7.25]}).to_csv(
        path, index=False
    )
    return path


def test_catalog_file_changes_prices_not_models(trained, prices, synthetic_dataset):
    before = _digests(trained)
    base = load_artifacts(trained)
    custom = load_artifacts(trained, catalog=pd.read_csv(prices))
    profile = synthetic_dataset.profiles.iloc[[0]][synthetic_dataset.ops]
    a = base.predict("gpu-a", profile).table.set_index("target")
    b = custom.predict("gpu-a", profile).table.set_index("target")
    assert b.at["gpu-b", "usd_per_hour"] == 7.25 and b.at["gpu-b", "gpu"] == "GB-2"
    assert b.at["gpu-c", "usd_per_hour"] == a.at["gpu-c", "usd_per_hour"]  # others kept
    pd.testing.assert_series_equal(a["batch_latency_ms"], b["batch_latency_ms"])
    assert _digests(trained) == before


def test_instances_command_lists_the_override(trained, prices):
    code, out, err = run("instances", "--artifacts", trained, "--catalog", prices)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.split()[0] == "gpu-b")
    assert "GB-2" in line and "7.250" in line
    assert "usd_per_hour" in out.splitlines()[0]  # the unit is in the header


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ({"instance": ["gpu-b"], "gpu": ["x"], "usd_per_hour": [-1.0]}, "prices are 0 or"),
        ({"instance": ["gpu-b"], "usd_per_hour": [1.0]}, r"lacks column\(s\) \['gpu'\]"),
        (
            {"instance": ["gpu-b", "gpu-b"], "gpu": ["x", "y"], "usd_per_hour": [1.0, 2.0]},
            "more than once",
        ),
    ],
    ids=["negative-price", "no-gpu-column", "duplicate"],
)
def test_bad_catalog_is_refused_by_name(trained, tmp_path, table, match):
    with pytest.raises(ProfetValueError, match=match):
        load_artifacts(trained, catalog=pd.DataFrame(table))
    path = tmp_path / "bad.csv"
    pd.DataFrame(table).to_csv(path, index=False)
    code, out, err = run("instances", "--artifacts", trained, "--catalog", path)
    assert code == 2 and not out and "Traceback" not in err
    assert "profet: error:" in err and re.search(match, err), err
