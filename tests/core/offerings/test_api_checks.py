"""The offerings API (and its neighbours) raises only ProfetError subclasses, naming
the bad value; write_offerings never leaves a half-written folder."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from profet_core import (
    OfferingFilter,
    ProfetError,
    estimate_run,
    load_artifacts,
    load_offerings,
    predict_offerings,
    price_source,
    read_profile,
    write_offerings,
)
from profet_core.offerings import offerings_meta
from profet_core.offerings._snapshot import compare
from tests._utils import ROOT

ANCHOR = "g3s.xlarge"


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture(scope="module")
def profiles():
    return read_profile(ROOT / "examples" / "profile_g3s.json")


def _snapshot(col, value):
    table = load_offerings()
    table[col] = table[col].astype(object)
    table.loc[table.index[table["cloud"].eq("lambda")][0], col] = value
    return table


OFFERINGS = {
    "gpus-list": ({"gpus": [1, 2]}, r"gpus \(1, 2\) is not allowed"),
    "gpus-huge": ({"gpus": 10**400}, "gpus .* is not allowed"),
    "run-missing-epochs": ({"dataset_images": 1000}, "dataset_images and epochs go together"),
    "run-text": ({"dataset_images": "5"}, "dataset_images '5' is not allowed"),
    "run-a-dict": ({"run": {"dataset_images": 1000}}, "unknown request field.*'run'"),
    "amp-latency-400-digits": (
        {"precision": "amp", "anchor_amp_latency_s": 10**400},
        r"anchor_amp_latency_s 1e\+400 .* is not allowed",
    ),
    "params-400-digits": ({"params": 10**400}, r"params 1e\+400 .* is not allowed"),
    "negative-price": (
        {"offerings": _snapshot("usd_per_hour", -1.0)},
        "usd_per_hour -1.0 .* must be a finite price",
    ),
    "inf-price": (
        {"offerings": _snapshot("spot_usd_per_hour", math.inf)},
        "spot_usd_per_hour inf",
    ),
    "nan-name": ({"offerings": _snapshot("instance", np.nan)}, "instance nan is not a name"),
    "fractional-gpus": ({"offerings": _snapshot("gpus", 1.5)}, "gpus 1.5 .* whole number"),
}


@pytest.mark.parametrize("case", list(OFFERINGS), ids=list(OFFERINGS))
def test_predict_offerings_refuses_by_name(predictor, profiles, case):
    kwargs, match = OFFERINGS[case]
    with pytest.raises(ProfetError, match=match):
        predict_offerings(predictor, ANCHOR, profiles, **kwargs)


def test_filter_and_where_refuse_what_is_not_a_filter(predictor, profiles):
    with pytest.raises(ProfetError, match="clouds must be a sequence of names"):
        OfferingFilter(clouds=None)
    done = predict_offerings(predictor, ANCHOR, profiles, filter=OfferingFilter(clouds=("aws",)))
    with pytest.raises(ProfetError, match="where takes an OfferingFilter"):
        done.where(None)


@pytest.mark.parametrize(
    "old, new, match",
    [
        (None, "table", "old snapshot must be a pandas DataFrame"),
        ("table", "empty", "lacks"),
    ],
    ids=["none", "no-columns"],
)
def test_compare_refuses_what_is_not_a_snapshot(old, new, match):
    given = {"table": load_offerings(), "empty": pd.DataFrame(), None: None}
    with pytest.raises(ProfetError, match=match):
        compare(given[old], given[new])


def test_price_source_takes_any_commit_value():
    meta = {"clouds": {"aws": {"commit": 12345, "file_date": None}}}
    assert "@12345" in price_source(meta)


def test_estimate_run_refuses_a_negative_latency():
    table = pd.DataFrame({"batch_latency_ms": [-5.0], "usd_per_hour": [1.0]})
    with pytest.raises(ProfetError, match="batch_latency_ms holds -5"):
        estimate_run(table, 1000, 32, 1)


def test_write_offerings_leaves_no_half_written_folder(tmp_path):
    done = {"table": load_offerings().head(3), "meta": {**offerings_meta(), "x": math.nan}}
    with pytest.raises(ProfetError, match="cannot be written"):
        write_offerings(done, tmp_path / "out")
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == []
    done["meta"] = offerings_meta()
    write_offerings(done, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "offerings.csv",
        "offerings_meta.json",
    ]
