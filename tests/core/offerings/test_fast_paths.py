"""Pricing a profile on every offering takes its fast paths (pricing every offering at speed: every
target's residual in one tree walk, look-ups by position, no per-row pandas work) and gives
the numbers the plain one-target-at-a-time paths give, digit for digit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts, read_profile
from profet_core.crossgpu.spec._pairs import FAM_COLS
from profet_core.inputs._profile import normalise_steps
from profet_core.offerings import OfferingFilter, predict_offerings
from profet_core.offerings._gpus import OTHER_HOST
from profet_core.offerings._predict import extended

PROFILE = "examples/profile_g3s.json"
ANCHOR = "g3s.xlarge"


@pytest.fixture(scope="module")
def wide():
    return extended(load_artifacts())


@pytest.fixture(scope="module")
def profiles():
    """Two rows: the example, and the same ops over 4 steps without a latency."""
    one = read_profile(PROFILE)
    return pd.concat([one, one.assign(batch_latency_s=np.nan, steps=4)], ignore_index=True)


def _one_target(cross, anchor, target, fam, lat):
    """The cross-instance formula for one target, written out plainly (the reference)."""
    n = len(fam)
    base = np.where(np.isnan(lat), fam.sum(axis=1) * cross.latency_per_us_, lat)
    d_spec = np.repeat(cross._spec_rows([anchor]) - cross._spec_rows([target]), n, axis=0)
    d_eta = np.repeat(cross._eta([target]) - cross._eta([anchor]), n, axis=0)
    phys = base * np.exp(cross._log_ratio(fam, d_spec[:1], d_eta[:1]))
    res = cross.residual_model_.predict(cross._res_features(fam, d_spec))
    return phys * np.exp(res), phys


@pytest.mark.parametrize("n", [1, 3, 40], ids=["one-row", "three-rows", "blocks-of-rows"])
def test_every_target_in_one_pass_equals_one_target_at_a_time(wide, n):
    cross = wide.cross
    rng = np.random.default_rng(n)
    fam = rng.gamma(2.0, 3000.0, size=(n, len(FAM_COLS)))
    lat = np.where(rng.random(n) < 0.3, np.nan, rng.uniform(0.05, 0.5, n))
    targets = [t for t in cross.spec_index_ if t != ANCHOR]
    assert len(targets) >= 25  # every spec line of the shipped sheet, new GPUs included
    many = cross.predict_targets(ANCHOR, targets, fam, lat)
    for target, (latency_s, members) in zip(targets, many, strict=True):
        cross_s, phys = _one_target(cross, ANCHOR, target, fam, lat)
        np.testing.assert_array_equal(latency_s, cross_s, err_msg=target)
        np.testing.assert_array_equal(members["physical"], phys, err_msg=target)
        single = cross.predict_families(ANCHOR, target, fam, lat)
        np.testing.assert_array_equal(single[0], latency_s, err_msg=target)


@pytest.mark.slow  # about 5 s or more
def test_offerings_prediction_equals_each_target_predicted_alone(wide, profiles):
    priced = predict_offerings(wide, ANCHOR, profiles)
    table = priced.prediction.table
    cols = ["batch_latency_ms", "low_ms", "high_ms", "p_fit", "novelty"]
    assert table["target"].nunique() >= 25
    for target in table["target"].unique():
        alone = wide.predict(ANCHOR, profiles, targets=[target], gpus=[1]).table
        got = table[table["target"] == target].reset_index(drop=True)
        np.testing.assert_array_equal(got[cols].to_numpy(), alone[cols].to_numpy(), target)
        assert list(got["basis"]) == list(alone["basis"])
    # Every offering of a spec line carries that line's prediction and its own price.
    offers = priced.table.dropna(subset=["batch_latency_ms"])
    offers = offers[offers["target"] != ANCHOR]
    merged = offers.merge(table, on=["row", "target"], suffixes=("", "_pred"))
    assert len(merged) == len(offers) >= 20
    np.testing.assert_array_equal(merged["batch_latency_ms"], merged["batch_latency_ms_pred"])
    np.testing.assert_allclose(
        merged["usd_per_1000_steps"],
        merged["batch_latency_ms"] / 3600 * merged["usd_per_hour"],
        rtol=1e-12,
    )


def test_row_summary_is_the_largest_novelty_of_each_row(wide, profiles):
    pred = wide.predict(ANCHOR, profiles)
    expect = pred.table.groupby("row", sort=True)["novelty"].max()
    assert list(pred.rows["row"]) == list(expect.index)
    np.testing.assert_array_equal(pred.rows["novelty"].to_numpy(), expect.to_numpy())


@pytest.mark.parametrize(
    ("steps", "dtype"),
    [(2, float), (2, int), (4, float), (1, int)],
    ids=["2-steps-float", "2-steps-int", "4-steps", "1-step-int"],
)
def test_steps_normalised_as_by_the_factor(steps, dtype):
    ops = pd.DataFrame({"Host_A": [10, 20], "Device_B": [3, 7]}).astype(dtype)
    profiles = ops.assign(steps=steps, batch_latency_s=0.1)
    out = normalise_steps(profiles)
    expect = ops.to_numpy(dtype=float) * (2 / steps)
    assert list(out.columns) == ["Host_A", "Device_B", "batch_latency_s"]
    assert (out[["Host_A", "Device_B"]].dtypes == np.float64).all()
    np.testing.assert_array_equal(out[["Host_A", "Device_B"]].to_numpy(), expect)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"gpus": "all"}, {"precision": "amp"}, {"filter": OfferingFilter(spot=True)}],
    ids=["default", "all-gpus", "amp", "spot"],
)
def test_offerings_table_is_the_same_on_every_call(wide, profiles, kwargs):
    """Nothing cached between calls leaks into the next answer (a second profile in between)."""
    first = predict_offerings(wide, ANCHOR, profiles, **kwargs).table
    predict_offerings(wide, ANCHOR, profiles.iloc[[1]].reset_index(drop=True), **kwargs)
    again = predict_offerings(wide, ANCHOR, profiles, **kwargs).table
    pd.testing.assert_frame_equal(first, again, check_exact=True)


def test_wider_predictor_is_cached_per_catalog():
    """Predictors of other catalogs share one cache: each gets the wider predictor of its own
    catalog (a user's prices), and the same one again on the next call."""
    base = load_artifacts()
    first = extended(base)
    assert extended(base) is first
    user = base.catalog.dropna(subset=["usd_per_hour"])[["instance", "gpu", "usd_per_hour"]].head(1)
    user = user.assign(usd_per_hour=user["usd_per_hour"] * 2 + 1)
    other = base.with_catalog(user)
    assert other._cache is base._cache
    mine = extended(other)
    price = mine.catalog.set_index("instance")["usd_per_hour"]
    assert price[user["instance"].iloc[0]] == user["usd_per_hour"].iloc[0]
    assert extended(other) is mine
    again = extended(base).catalog.set_index("instance")["usd_per_hour"]
    assert again[user["instance"].iloc[0]] != user["usd_per_hour"].iloc[0]


#: Options of the fast path's full-output check (every number stays the same).
_OPTIONS = {
    "default": {},
    "amp": {"precision": "amp"},
    "amp-measured": {"precision": "amp", "anchor_amp_latency_s": 0.05},
    "all-gpus": {"gpus": "all"},
    "two-gpus": {"gpus": 2},
    "amp-all-gpus": {"precision": "amp", "gpus": "all"},
    "spot": {"filter": OfferingFilter(spot=True)},
    "gcp": {"filter": OfferingFilter(clouds=("gcp",))},
    "all-regions": {"filter": OfferingFilter(all_regions=True)},
    "catalog": {"catalog": "examples/prices.csv"},
    "run": {"dataset_images": 50_000, "batch_size": 32, "epochs": 3},
    "latency-given": {"anchor_latency_s": 0.2},
    # The T4 is rented by many clouds: its offerings take the anchor's own latency.
    "t4-anchor": {"anchor": "g4dn.xlarge", "gpus": "all", "precision": "amp"},
}
T4 = "g4dn.xlarge"


@pytest.mark.parametrize("rows", [1, 2], ids=["one-row", "two-rows"])
@pytest.mark.parametrize("name", list(_OPTIONS), ids=list(_OPTIONS))
def test_offerings_table_by_positions_equals_pandas_merge(wide, profiles, name, rows):
    """The join by positions (sorted and taken once) gives pandas' merge, add_front and
    sort_values' table, every column, type, order and digit, the notes and the front too;
    and predict_offerings takes it."""
    from unittest import mock

    from profet_core import load_catalog
    from profet_core.offerings import _join

    kwargs = dict(_OPTIONS[name])
    if "catalog" in kwargs:
        kwargs["catalog"] = load_catalog(kwargs["catalog"])
    anchor = kwargs.pop("anchor", ANCHOR)
    prof = profiles.iloc[:rows].drop(columns=["instance"] * (anchor != ANCHOR))
    with mock.patch.object(_join, "JoinPlan", wraps=_join.JoinPlan) as fast:
        got = predict_offerings(wide, anchor, prof, **kwargs)
    assert fast.called
    with mock.patch.object(_join, "_plain", return_value=False):
        ref = predict_offerings(wide, anchor, prof, **kwargs)
    pd.testing.assert_frame_equal(got.table, ref.table, check_exact=True)
    assert list(got.table.dtypes) == list(ref.table.dtypes)
    assert got.table["usd_per_1000_steps"].notna().sum() >= 1
    assert (got.notes, got.cost_column, got.time_column) == (
        ref.notes,
        ref.cost_column,
        ref.time_column,
    )
    assert got.to_csv() == ref.to_csv()
    assert got.front_text() == ref.front_text() and got.warnings() == ref.warnings()


def test_anchor_offerings_equal_the_public_configure(wide, profiles):
    """The anchor's own GPU, configured from the profile prepared once, gets what the public
    ``configure`` gives from the profile itself."""
    from profet_core.offerings._predict import _anchor_rows, _shipped_side, _with_counts

    prof = profiles.drop(columns=["instance"])
    counted = _with_counts(wide, _shipped_side(OfferingFilter(), "all"))
    got = predict_offerings(wide, T4, prof, precision="amp", gpus="all")
    mine = got.table[got.table["basis"] == "anchor (your measured latency)"]
    own = _anchor_rows(got.prediction, prof, None, T4, [T4])
    counts = sorted({int(g) for g in mine["gpus_used"]})
    ref = counted.configure(T4, prof, own, precision="amp", gpus=counts)
    assert len(mine) >= 2 and set(mine["row"]) == {0, 1}
    for _, r in mine.iterrows():
        want = ref[(ref["row"] == r["row"]) & (ref["gpus"] == r["gpus_used"])]
        assert len(want) == 1
        for c in ("batch_latency_ms", "low_ms", "high_ms", "images_per_s"):
            np.testing.assert_array_equal(r[c], want[c].iloc[0], err_msg=c)


@pytest.mark.parametrize("gpus", [1, "all"], ids=["one-gpu", "all-gpus"])
def test_join_offerings_by_positions_equals_pandas_merge(wide, profiles, gpus):
    from unittest import mock

    from profet_core.offerings import _join
    from profet_core.offerings._predict import _shipped_side, _shown

    pred = _shown(predict_offerings(wide, ANCHOR, profiles, gpus=gpus).prediction.table)
    off = _shipped_side(OfferingFilter(), gpus)
    got = _join.join_offerings(pred, None, gpus, off=off)
    with mock.patch.object(_join, "_plain", return_value=False):
        ref = _join.join_offerings(pred, None, gpus, off=off)
    assert len(got) > len(off)  # two input rows: every priced offering twice
    pd.testing.assert_frame_equal(got, ref, check_exact=True)


def test_notes_of_a_t4_anchor_without_latency(wide, profiles):
    """The offerings' notes, read from plain arrays: the anchor's own GPU unpriced without
    its latency, GPUs without a spec model named, several GPU counts compared per batch."""
    prof = profiles.drop(columns=["instance", "batch_latency_s"]).iloc[:1]
    got = predict_offerings(wide, T4, prof, gpus="all")
    t = got.table
    own = t["basis"] == "anchor (your measured latency)"
    assert own.any() and t.loc[own, "batch_latency_ms"].isna().all()
    text = " | ".join(got.notes)
    assert "offerings of the anchor's own GPU need the anchor latency to be priced" in text
    assert "offerings use different GPU counts" in text
    unpredicted = set(map(str, t.loc[t["basis"] == "no spec model", "accelerator"].unique()))
    none = sorted(unpredicted - set(OTHER_HOST))
    assert f"{len(none)} GPU(s) have no spec model" in text and ", ".join(none) in text
    # the T4G of AWS g5g: a modelled GPU on an Arm host, named with its own reason
    assert "T4g" in unpredicted and f"T4g: {OTHER_HOST['T4g']}" in got.notes


def _front_by_groupby(out: pd.DataFrame, cost: str, time: str) -> tuple:
    """The front and picks computed plainly: pandas' group-by per input row and precision."""
    from profet_core.offerings._front import pareto_mask

    pareto, pick = np.zeros(len(out), dtype=bool), [""] * len(out)
    keys = ["row", *(["precision"] if "precision" in out else [])]
    for _, g in out.groupby(keys, sort=False):
        idx = g.index.to_numpy()
        t, c = g[time].to_numpy(float), g[cost].to_numpy(float)
        front = pareto_mask(t, c)
        pareto[idx] = front
        if not front.any():
            continue
        f, tf, cf = idx[front], t[front], c[front]
        for what, i in (
            ("fastest", f[np.lexsort((cf, tf))[0]]),
            ("cheapest", f[np.lexsort((tf, cf))[0]]),
            ("best value", f[int(np.argmin(tf * cf))]),
        ):
            pick[i] = f"{pick[i]}, {what}" if pick[i] else what
    return pareto, pick


@pytest.mark.parametrize("seed", range(6), ids=[f"seed-{s}" for s in range(6)])
@pytest.mark.parametrize("with_precision", [False, True], ids=["rows", "rows-and-precision"])
def test_front_by_arrays_equals_the_groupby_front(seed, with_precision):
    """The front from arrays (no frame, no group-by) marks the offerings and picks pandas'
    group-by per row (and precision) does, NaN times and a missing precision included."""
    from profet_core.offerings._front import front_columns

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    out = pd.DataFrame(
        {
            "row": rng.integers(0, 3, n),
            "t": np.where(rng.random(n) < 0.1, np.nan, rng.choice([1.0, 2.0, 3.5, 7.0], n)),
            "c": rng.choice([0.5, 1.0, 2.0, np.nan], n),
        }
    )
    if with_precision:
        out["precision"] = pd.array(rng.choice(["fp32", "amp", None], n), dtype="str")
    pareto, pick = front_columns(out, "c", "t")
    want_pareto, want_pick = _front_by_groupby(out, "c", "t")
    np.testing.assert_array_equal(pareto, want_pareto)
    assert pick == want_pick
