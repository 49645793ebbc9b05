"""The offerings API (and its neighbours) raises only ProfetError subclasses, naming
the bad value; write_offerings never leaves a half-written folder."""

from __future__ import annotations

import math
import re

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


def _catalog(**cells):
    row = {"instance": "g4dn.xlarge", "gpu": "T4", "usd_per_hour": 0.5, **cells}
    return pd.DataFrame([row])


#: Catalog frames ``profet predict --catalog`` refuses, refused by the library too (they were
#: priced as given: -1 USD/h the cheapest, or a TypeError on text).
CATALOGS = {
    "price-negative": (_catalog(usd_per_hour=-1.0), "usd_per_hour -1 for 'g4dn.xlarge'"),
    "price-1e9": (_catalog(usd_per_hour=1e9), "usd_per_hour 1000000000 for"),
    "price-text": (_catalog(usd_per_hour="cheap"), "usd_per_hour"),
    "markup-instance": (_catalog(instance="<b>x</b>"), "name '<b>x</b>' is not allowed"),
    "formula-instance": (_catalog(instance="=1+2"), "name '=1+2' is not allowed"),
    "gpu-count-text": (_catalog(gpu_count="eight"), "gpu_count 'eight' for 'g4dn.xlarge'"),
    "gpu-count-negative": (_catalog(gpu_count=-8), "gpu_count -8 for 'g4dn.xlarge'"),
    "gpu-nul": (_catalog(gpu="T4\x00\x1b[31m"), "holds control characters"),
}


@pytest.mark.parametrize("case", list(CATALOGS), ids=list(CATALOGS))
def test_predict_offerings_refuses_the_catalogs_the_command_refuses(predictor, profiles, case):
    catalog, match = CATALOGS[case]
    with pytest.raises(ProfetError, match=re.escape(match)):
        predict_offerings(predictor, ANCHOR, profiles, catalog=catalog)


def test_all_regions_must_be_a_flag():
    for value in ("no", 1, None):  # 'no' is truthy: every region was shown
        with pytest.raises(ProfetError, match="all_regions .* is not allowed; give True or False"):
            OfferingFilter(all_regions=value)
    assert OfferingFilter(all_regions=np.bool_(True)).all_regions


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
