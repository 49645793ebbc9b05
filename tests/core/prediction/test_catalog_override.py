"""Prices and GPU names are user data: a catalog file overrides them without
touching the checksummed models; a bad one is refused by name."""

from __future__ import annotations

import hashlib
import re

import pandas as pd
import pytest

from profet_core import ProfetValueError, load_artifacts, load_catalog, read_profile
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
    assert b.at["gpu-b", "offering"] == "catalog gpu-b (your catalog)"
    # others kept: no offering rents gpu-c, so it has no price either way
    assert pd.isna(b.at["gpu-c", "usd_per_hour"]) and pd.isna(a.at["gpu-c", "usd_per_hour"])
    assert a.at["gpu-b", "offering"] == b.at["gpu-c", "offering"] == ""
    pd.testing.assert_series_equal(a["batch_latency_ms"], b["batch_latency_ms"])
    assert _digests(trained) == before


def test_instances_command_lists_the_override(trained, prices):
    code, out, err = run("instances", "--targets", "--artifacts", trained, "--catalog", prices)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.split()[0] == "gpu-b")
    assert "GB-2" in line and "7.25" in line.split()
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


# ----------------------------------------- a catalog override keeps spec-only targets' names
SHIPPED_PROFILE = "examples/profile_g3s.json"


def test_spec_only_targets_keep_gpu_and_price_under_an_override():
    """examples/prices.csv names two measured instances: the spec catalog's keep theirs."""
    base = load_artifacts().predict("g3s.xlarge", read_profile(SHIPPED_PROFILE)).table
    code, out, err = run(
        "predict", "--profile", SHIPPED_PROFILE, "--catalog", "examples/prices.csv"
    )
    assert code == 0, err
    custom = load_artifacts(catalog=pd.read_csv("examples/prices.csv"))
    table = custom.predict("g3s.xlarge", read_profile(SHIPPED_PROFILE)).table.set_index("target")
    spec_only = base.loc[~base["basis"].eq("measured"), ["target", "gpu", "usd_per_hour"]]
    assert len(spec_only) >= 3
    for row in spec_only.itertuples():
        assert table.at[row.target, "gpu"] == row.gpu and row.gpu
        assert table.at[row.target, "usd_per_hour"] == row.usd_per_hour > 0
        line = next(x for x in out.splitlines() if row.target in x.split())
        assert f"1 x {row.gpu.removeprefix('NVIDIA ')}" in line  # the configuration's name
    assert table.at["p3.2xlarge", "usd_per_hour"] == 0.92  # the override itself


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ("foo.big,X,1.0\n", ["do not predict, so their lines are unused: 'foo.big'"]),
        (
            "g4dn.xlarge,NVIDIA T4,\n",
            [
                "no usd_per_hour for 'g4dn.xlarge'",
                "keeps the offerings' price ('g4dn.xlarge' 0.526 USD/h)",
                "add no offering (cloud 'catalog')",
            ],
        ),
        (
            "foo.big,X,\np3.2xlarge,,0.5\n",
            ["unused: 'foo.big'"],
        ),
        ("p3.2xlarge,NVIDIA V100,0.5\n", []),
    ],
    ids=["unknown-instance", "no-price", "unknown-without-price", "all-used"],
)
def test_catalog_lines_that_change_nothing_are_named(tmp_path, lines, expected):
    path = tmp_path / "prices.csv"
    path.write_text("instance,gpu,usd_per_hour\n" + lines)
    code, out, err = run("predict", "--profile", SHIPPED_PROFILE, "--catalog", path)
    assert code == 0, err
    assert ("the catalog" in err) == bool(expected)
    for text in expected:
        assert text in err
    # the same words in the core's warnings (the app shows these), and from `profet instances`
    predictor = load_artifacts(catalog=load_catalog(path, missing_price_ok=True))
    warnings = predictor.predict("g3s.xlarge", read_profile(SHIPPED_PROFILE)).warnings()
    assert [w for w in warnings if "the catalog" in w] == list(predictor.catalog_notes)
    assert all(f"profet: warning: {n}" in err for n in predictor.catalog_notes)
    code, _, err2 = run("instances", "--catalog", path)
    assert code == 0 and all(n in err2 for n in predictor.catalog_notes)
    if any("no usd_per_hour" in e for e in expected):
        assert predictor.catalog.set_index("instance").at["g4dn.xlarge", "usd_per_hour"] == 0.526


def test_an_empty_price_is_refused_where_a_catalog_must_be_complete(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("instance,gpu,usd_per_hour\ngpu-b,GB,\n")
    with pytest.raises(ProfetValueError, match=r"usd_per_hour nan for 'gpu-b' is not allowed"):
        load_catalog(path)
