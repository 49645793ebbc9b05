import numpy as np
import pandas as pd
import pytest

from profet_core import (
    ProfetFileNotFoundError,
    ProfetValueError,
    load_dataset,
    make_dataset,
    make_pairs,
)


def test_load_dataset_reads_parquet_and_csv(synthetic_dir, synthetic_tables):
    ds = load_dataset(synthetic_dir)
    assert len(ds.profiles) == len(synthetic_tables[0])
    assert ds.instances == ["gpu-a", "gpu-b", "gpu-c"]
    assert ds.architectures == [f"Net{i}" for i in range(5)]
    assert len(ds.fingerprint) == 64


def test_fingerprint_changes_with_the_data(synthetic_tables):
    prof, lat = synthetic_tables
    lat2 = lat.copy()
    lat2.loc[0, "batch_latency_s"] *= 1.01
    assert make_dataset(prof, lat).fingerprint != make_dataset(prof, lat2).fingerprint


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ProfetFileNotFoundError, match="does not exist"):
        load_dataset(tmp_path / "nope")
    with pytest.raises(ProfetFileNotFoundError, match=r"no profiles\.parquet or profiles\.csv"):
        load_dataset(tmp_path)


def _break(kind):
    def f(prof, lat):
        prof, lat = prof.copy(), lat.copy()
        if kind == "no-key":
            prof = prof.drop(columns="batch_size")
        elif kind == "negative":
            prof.loc[3, "Device_Relu"] = -1.0
        elif kind == "inf":
            prof.loc[3, "Device_Relu"] = np.inf
        elif kind == "text":
            prof["Device_Relu"] = prof["Device_Relu"].astype(object)
            prof.loc[3, "Device_Relu"] = "fast"
        elif kind == "zero-latency":
            lat.loc[0, "batch_latency_s"] = 0.0
        elif kind == "no-ops":
            prof = prof[["exp", "instance", "model", "input_size", "batch_size"]]
        elif kind == "bad-size":
            prof.loc[0, "batch_size"] = -16
        return prof, lat

    return f


@pytest.mark.parametrize(
    ("kind", "match"),
    [
        ("no-key", r"lacks required column.*batch_size"),
        ("negative", "Device_Relu.*negative"),
        ("inf", "Device_Relu.*infinite"),
        ("text", "Device_Relu.*non-numeric"),
        ("zero-latency", "batch_latency_s must be"),
        ("no-ops", "no Host_<Op>/Device_<Op>"),
        ("bad-size", "batch_size.*whole numbers"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v and "*" not in v else None,
)
def test_validation_names_the_problem(synthetic_tables, kind, match):
    with pytest.raises(ProfetValueError, match=match):
        make_dataset(*_break(kind)(*synthetic_tables))


def test_missing_op_values_count_as_zero(synthetic_tables):
    prof, lat = synthetic_tables
    prof = prof.copy()
    prof.loc[0, "Device_Relu"] = np.nan
    ds = make_dataset(prof, lat)
    assert ds.profiles.loc[0, "Device_Relu"] == 0.0


def test_make_pairs_joins_anchor_profile_to_both_latencies(synthetic_dataset):
    pairs = make_pairs(synthetic_dataset, "gpu-a", "gpu-b")
    lat = synthetic_dataset.latencies.set_index(
        ["exp", "instance", "model", "input_size", "batch_size"]
    )
    row = pairs.iloc[7]
    key = (row["exp"], row["model"], row["input_size"], row["batch_size"])
    assert row["anchor_latency_s"] == lat.loc[(key[0], "gpu-a", *key[1:]), "batch_latency_s"]
    assert row["target_latency_s"] == lat.loc[(key[0], "gpu-b", *key[1:]), "batch_latency_s"]
    assert len(pairs) == (synthetic_dataset.profiles["instance"] == "gpu-a").sum()


def test_make_pairs_rejects_unknown_instance(synthetic_dataset):
    with pytest.raises(ProfetValueError, match=r"instance 'p9\.huge' not in dataset"):
        make_pairs(synthetic_dataset, "p9.huge", "gpu-a")


def test_new_instance_is_just_more_rows(synthetic_tables):
    prof, lat = synthetic_tables
    extra_p = prof[prof["instance"] == "gpu-a"].assign(instance="gpu-new")
    extra_l = lat[lat["instance"] == "gpu-a"].assign(instance="gpu-new")
    ds = make_dataset(pd.concat([prof, extra_p]), pd.concat([lat, extra_l]))
    assert "gpu-new" in ds.instances
    assert len(make_pairs(ds, "gpu-new", "gpu-b")) == len(extra_p)
