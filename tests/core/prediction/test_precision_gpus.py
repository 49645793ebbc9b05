"""Precision (AMP) and GPU count of a prediction, on the shipped artifacts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profet_core import estimate_run, load_artifacts, read_profile
from profet_core.errors import ProfetValueError
from profet_core.inputs._prepare import prepare_profiles
from profet_core.prediction._engine import run_prediction, workload_sizes

BASE = ["target", "basis", "batch_latency_ms", "low_ms", "high_ms", "usd_per_1000_steps"]


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture(scope="module")
def profile():
    return read_profile("examples/profile_g3s.json")


def _table(predictor, profile, **kw):
    return predictor.predict("g3s.xlarge", profile, **kw).table.set_index(["target", "gpus"])


def test_default_answer_is_the_fp32_one_gpu_engine_answer(predictor, profile):
    """The defaults change no number the table had before (only new columns are added), but
    for the spec order."""
    got = predictor.predict("g3s.xlarge", profile)
    prepared = prepare_profiles(profile, None, "g3s.xlarge")
    targets = [t for t in predictor.targets("g3s.xlarge") if t != "g3s.xlarge"]
    sizes = workload_sizes(profile, None, None)
    raw = run_prediction(
        predictor,
        "g3s.xlarge",
        prepared.ops,
        prepared.latency_s,
        predictor.default_method,
        targets,
        (),
        sizes,
    )
    # ... but for the spec order: steps that contradict the spec sheet are capped
    from profet_core.crossgpu.order._order import published_exceptions, spec_order

    ordered, moved, _ = spec_order(
        raw.table, predictor.cross.specs_, "fp32", published_exceptions()
    )
    # The prices are the configurations' (each GPU at its cheapest offering), not the
    # spec lines' the engine carries; a step costs what it takes at that price.
    prices = ["usd_per_hour", "offering", "usd_per_1000_steps"]
    same_cols = [c for c in raw.table.columns if c not in prices]
    pd.testing.assert_frame_equal(got.table[same_cols], ordered[same_cols])
    np.testing.assert_allclose(
        got.table["usd_per_1000_steps"],
        got.table["batch_latency_ms"] / 3600 * got.table["usd_per_hour"],
        rtol=1e-12,
    )
    # a configuration is never dearer than the spec line's own instance type
    own = ordered["usd_per_hour"].to_numpy(float)
    both = np.isfinite(own)
    assert (got.table["usd_per_hour"].to_numpy(float)[both] <= own[both] + 1e-9).all()
    same = raw.table["batch_latency_ms"] == ordered["batch_latency_ms"]
    assert len(moved) == (~same).groupby(raw.table["target"]).any().sum()
    assert (got.table["precision"] == "fp32").all() and (got.table["gpus"] == 1).all()
    explicit = predictor.predict("g3s.xlarge", profile, precision="fp32", gpus=1)
    pd.testing.assert_frame_equal(explicit.table, got.table)


def test_amp_speeds_up_tensor_core_gpus_and_not_the_k80(predictor, profile):
    fp32 = _table(predictor, profile)
    amp_pred = predictor.predict("g3s.xlarge", profile, precision="amp")
    amp = amp_pred.table.set_index(["target", "gpus"])
    k80 = ("p2.xlarge", 1)
    # No tensor cores: the FP32 time, said in a note, never a made-up gain.
    assert amp.loc[k80, "batch_latency_ms"] == pytest.approx(fp32.loc[k80, "batch_latency_ms"])
    assert any("p2.xlarge: no FP16 tensor cores" in w for w in amp_pred.warnings())
    assert amp.loc[k80, "basis_precision"] == "fp32 time (no tensor cores)"
    for target in ("p3.2xlarge", "p4d.24xlarge", "p5.48xlarge", "g4dn.xlarge"):
        gain = fp32.loc[(target, 1), "batch_latency_ms"] / amp.loc[(target, 1), "batch_latency_ms"]
        assert 1.2 < gain < 5.0, (target, gain)
        # the interval widens by the AMP model's own uncertainty
        assert amp.loc[(target, 1), "high_ms"] / amp.loc[(target, 1), "low_ms"] > (
            fp32.loc[(target, 1), "high_ms"] / fp32.loc[(target, 1), "low_ms"]
        )
    assert (amp["precision"] == "amp").all()


def test_all_gpus_changes_multi_gpu_instances_only(predictor, profile):
    one = _table(predictor, profile, batch_size=32)
    every = _table(predictor, profile, batch_size=32, gpus="all")
    for target in ("g4dn.xlarge", "p3.2xlarge", "p2.xlarge"):  # one-GPU instances: unchanged
        assert (
            every.loc[(target, 1), "batch_latency_ms"] == one.loc[(target, 1), "batch_latency_ms"]
        )
    p4d = every.loc[("p4d.24xlarge", 8)]
    single = one.loc[("p4d.24xlarge", 1)]
    # a step on 8 GPUs at the same per-GPU batch is no faster than on one, and not 2x slower
    assert 1.0 <= p4d["batch_latency_ms"] / single["batch_latency_ms"] < 2.0
    assert p4d["images_per_s"] == pytest.approx(8 * 32 / p4d["batch_latency_ms"] * 1e3)
    assert p4d["images_per_s"] > 4 * single["images_per_s"]
    # cost at the whole instance's price
    assert p4d["usd_per_1000_steps"] == pytest.approx(
        p4d["batch_latency_ms"] * 1000 / 3.6e6 * p4d["usd_per_hour"]
    )
    run = estimate_run(every.reset_index(), 50_000, 32, 10).set_index(["target", "gpus"])
    assert run.loc[("p4d.24xlarge", 8), "steps"] == np.ceil(50_000 / (8 * 32)) * 10


def test_a_list_of_counts_gives_one_row_per_count_a_target_has(predictor, profile):
    pred = predictor.predict("g3s.xlarge", profile, gpus=[1, 8])
    t = pred.table
    assert sorted(t.loc[t["target"] == "p4d.24xlarge", "gpus"]) == [1, 8]
    # the counts the offerings rent (aws g4dn.metal: 8 T4), not the spec line's own count
    assert list(t.loc[t["target"] == "g4dn.xlarge", "gpus"]) == [1, 8]
    assert list(t.loc[t["target"] == "gpu-gh200-96gb", "gpus"]) == [1]  # one GPU only
    four = predictor.predict("g3s.xlarge", profile, gpus=4)
    most = _most_rented()
    assert {"p4d.24xlarge", "p5.48xlarge", "g4dn.xlarge"} <= set(four.table["target"])
    assert set(four.table["target"]) == {t for t, n in most.items() if n >= 4} - {"g3s.xlarge"}
    assert any("fewer GPUs than asked for" in w for w in four.warnings())


def _most_rented() -> dict:
    """``{spec line: the most GPUs an on-demand offering of its GPU has}`` of the snapshot."""
    from profet_core import load_offerings
    from profet_core.offerings._join import spec_key_of_gpu

    off = load_offerings()
    off = off[pd.to_numeric(off["usd_per_hour"], errors="coerce").notna()]
    key = spec_key_of_gpu()
    target = off["gpu"].map(lambda g: key.get(g, ""))
    return off.assign(target=target)[target != ""].groupby("target")["gpus"].max().to_dict()


def test_params_size_the_all_reduce(predictor, profile):
    small = _table(predictor, profile, gpus=8, params=1e6)
    big = _table(predictor, profile, gpus=8, params=500e6)
    key = ("p4d.24xlarge", 8)
    assert big.loc[key, "batch_latency_ms"] > small.loc[key, "batch_latency_ms"] * 1.2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"precision": "fp16"}, "precision 'fp16' is not allowed"),
        ({"gpus": 0}, "gpus 0 is not allowed"),
        ({"gpus": True}, "gpus True is not allowed"),
        ({"gpus": "some"}, "gpus 'some' is not allowed"),
        ({"params": -1.0}, "params -1 is not allowed"),
        ({"anchor_amp_latency_s": 0.01}, "only used with precision amp"),
    ],
    ids=["precision", "zero-gpus", "bool-gpus", "text-gpus", "params", "amp-latency-fp32"],
)
def test_bad_options_are_refused(predictor, profile, kwargs, match):
    with pytest.raises(ProfetValueError, match=match):
        predictor.predict("g3s.xlarge", profile, **kwargs)


def test_a_measured_anchor_amp_step_moves_tensor_core_targets(predictor):
    prof = read_profile("examples/profile_g3s.json").drop(columns="instance", errors="ignore")
    kw = {"precision": "amp", "anchor_latency_s": 0.04}
    base = predictor.predict("p3.2xlarge", prof, **kw).table.set_index("target")
    told = predictor.predict("p3.2xlarge", prof, anchor_amp_latency_s=0.02, **kw).table
    told = told.set_index("target")
    assert told.loc["p4d.24xlarge", "batch_latency_ms"] != pytest.approx(
        base.loc["p4d.24xlarge", "batch_latency_ms"]
    )
    # no tensor cores: the measured AMP step changes nothing there
    assert told.loc["p2.xlarge", "batch_latency_ms"] == pytest.approx(
        base.loc["p2.xlarge", "batch_latency_ms"]
    )


@pytest.mark.parametrize("target", ["g3s.xlarge", "p2.xlarge"], ids=["M60", "K80"])
def test_amp_on_gpus_without_tensor_cores_is_the_fp32_time(predictor, target):
    prof = read_profile("examples/profile_g3s.json").drop(columns="instance", errors="ignore")
    fp32 = predictor.predict("p3.2xlarge", prof, anchor_latency_s=0.04).table
    amp = predictor.predict("p3.2xlarge", prof, anchor_latency_s=0.04, precision="amp")
    a = amp.table.set_index("target").loc[target]
    f = fp32.set_index("target").loc[target]
    assert a["batch_latency_ms"] == f["batch_latency_ms"]
    assert (a["low_ms"], a["high_ms"]) == pytest.approx((f["low_ms"], f["high_ms"]))
    assert any(f"{target}" in w and "no FP16 tensor cores" in w for w in amp.warnings())


def test_amp_on_several_gpus_adds_the_tensorflow_amp_synchronisation(
    predictor, profile, monkeypatch
):
    """Round 7 (docs/amp_decision_rule.md): an AMP answer on N GPUs carries ``k0_amp`` per
    doubling of the GPU count; FP32 does not. With a negligible all-reduce (params=1) the two
    step factors differ by exactly that term (before the spec order, which caps the one-GPU
    p4d step at the A100 PCIe's: tested in tests/core/crossgpu/test_spec_consistency.py)."""
    from profet_core.prediction import _options

    monkeypatch.setattr(
        _options, "_spec_order", lambda pred, table, precision, reference=None: (table, [])
    )
    st = predictor.cross.dp_state_
    assert st["k0_amp"] > 0
    key = ("p4d.24xlarge", 8)

    def factor(**kw):
        many = _table(predictor, profile, gpus=[1, 8], params=1.0, **kw)
        return many.loc[key, "batch_latency_ms"] / many.loc[(key[0], 1), "batch_latency_ms"]

    assert factor(precision="amp") - factor() == pytest.approx(3 * st["k0_amp"], rel=1e-6)
    amp = predictor.predict("g3s.xlarge", profile, gpus=8, precision="amp")
    assert any("amp on several GPUs" in w for w in amp.warnings())
    fp32 = predictor.predict("g3s.xlarge", profile, gpus=8)
    assert not any("amp on several GPUs" in w for w in fp32.warnings())


def test_gpus_without_peer_to_peer_get_their_own_wider_interval(predictor, profile):
    """Rounds 9 and 10: on 2 and 8 RTX 3090 (no peer-to-peer) the step time's interval widens
    by the no-peer-to-peer class's width per doubling times log2 N, on RTX A6000 by the other
    class's (each in quadrature to the one-GPU interval); only the first carries the note."""
    from profet_core.offerings._predict import _with_counts

    st = predictor.cross.dp_state_
    widths = st["class_half_width"]
    assert st["per_log2n"] and widths["no_p2p"] > st["half_width"] > widths["p2p"]
    targets = ["gpu-rtx-3090", "gpu-rtx-a6000"]
    eight = _with_counts(predictor, pd.DataFrame({"target": targets, "gpus_used": [8, 8]}))
    got = eight.predict("g3s.xlarge", profile, gpus=[1, 2, 8], targets=targets)
    t = got.table.set_index(["target", "gpus"])
    for target, cls in zip(targets, ("no_p2p", "p2p"), strict=True):
        one = t.loc[(target, 1)]
        for n in (2, 8):
            many = t.loc[(target, n)]
            for side in ("low_ms", "high_ms"):
                d1 = np.log(one["batch_latency_ms"] / one[side]) ** 2
                dn = np.log(many["batch_latency_ms"] / many[side]) ** 2
                want = (widths[cls] * np.log2(n)) ** 2
                assert dn - d1 == pytest.approx(want, rel=1e-6), (target, n, side)
    notes = [w for w in got.warnings() if "no peer-to-peer" in w]
    assert len(notes) == 1 and notes[0].startswith("gpu-rtx-3090:")
    assert f"{np.exp(3 * widths['no_p2p']):.2f} (on 8 GPUs)" in notes[0]


def test_what_an_answer_rests_on_is_a_note_not_a_warning(predictor, profile):
    """Which format amp means, the data-parallel model, where specs-only GPUs'
    efficiency and the published-based intervals come from were printed as
    ``profet: warning:``; they are notes (CLI, JSON, page), and the warnings keep what may be
    wrong with the answer."""
    from profet_core.prediction._result import ANSWER_NOTES
    from tests._utils import run

    got = predictor.predict("g3s.xlarge", profile, precision="amp", gpus="all")
    for start in ANSWER_NOTES:  # each of them, once, among the notes
        assert sum(n.startswith(start) for n in got.price_notes) == 1, start
    assert got.to_json()["notes"] == list(got.price_notes)
    assert not any(w.startswith(ANSWER_NOTES) for w in got.warnings())
    assert any("amp on several GPUs" in w for w in got.warnings())  # still a warning
    for extra in ((), ("--offerings",)):
        argv = ("predict", "--profile", "examples/profile_g3s.json", "--precision", "amp")
        code, _, err = run(*argv, "--gpus", "all", *extra)
        assert code == 0, err
        for start in ANSWER_NOTES:
            assert f"profet: note: {start}" in err and f"profet: warning: {start}" not in err
