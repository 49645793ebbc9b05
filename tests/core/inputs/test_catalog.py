"""Merging instance catalogs: a line per instance of either, base's first (the
merge that only adds lines skips the per-cell alignment and gives the same table)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core.inputs._catalog import merge_catalogs, validate_catalog

BASE = pd.DataFrame(
    {
        "instance": ["a.x", "b.x", "c.x"],
        "gpu": ["T4", "V100", "K80"],
        "gpu_count": [1, 1, 8],
        "vcpus": [4.0, 8.0, 32.0],
        "usd_per_hour": [0.5, 3.0, 7.2],
    }
)
OTHER = pd.DataFrame(
    {
        "instance": ["b.x", "d.x", "e.x"],
        "gpu": ["V100 (other)", "A100", "H100"],
        "gpu_count": [2.0, 1.0, 8.0],
        "usd_per_hour": [9.0, 4.1, float("nan")],
        "memory_gib": [61.0, 85.0, 2048.0],
    }
)


def _combined(base, other):
    """The general merge (pandas' combine_first) of ``other``'s new lines: the reference."""
    b = validate_catalog(base, missing_price_ok=True).set_index("instance")
    o = validate_catalog(other, missing_price_ok=True).set_index("instance")
    o = o[~o.index.isin(b.index)]
    order = [*b.index, *o.index]
    columns = [*b.columns, *(c for c in o.columns if c not in b.columns)]
    merged = o.combine_first(b).reindex(index=order, columns=columns)
    return validate_catalog(merged.rename_axis("instance").reset_index(), missing_price_ok=True)


@pytest.mark.parametrize(
    ("base", "other"),
    [
        (BASE, OTHER),
        (OTHER, BASE),
        (BASE, BASE),
        (BASE, OTHER.drop(columns=["memory_gib"])),
        (BASE.drop(columns=["gpu_count"]), OTHER),
    ],
    ids=["new-and-shared", "swapped", "nothing-new", "same-columns", "count-only-in-other"],
)
def test_merge_preferring_base_equals_combine_first(base, other):
    got = merge_catalogs(base, other, prefer="base")
    pd.testing.assert_frame_equal(got, _combined(base, other), check_exact=True)
    shared = got.set_index("instance").loc[base["instance"], "usd_per_hour"]
    np.testing.assert_array_equal(shared.to_numpy(), base["usd_per_hour"].to_numpy(float))


def test_merge_preferring_other_takes_its_values_and_keeps_the_rest():
    got = merge_catalogs(BASE, OTHER).set_index("instance")
    assert got.loc["b.x", "gpu"] == "V100 (other)" and got.loc["b.x", "usd_per_hour"] == 9.0
    assert got.loc["b.x", "vcpus"] == 8.0 and got.loc["a.x", "usd_per_hour"] == 0.5
    assert list(got.index) == ["a.x", "b.x", "c.x", "d.x", "e.x"]
