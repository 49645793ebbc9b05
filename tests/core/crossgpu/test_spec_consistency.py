"""Predictions never contradict the spec sheet: a GPU with at least another's
FP32, TF32-tensor and FP16-tensor rates and 95% of its bandwidth is never predicted more than
10% slower, over the CNN profiles, the four anchors, fp32/amp and 1/all GPUs."""

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts, read_profile
from profet_core.crossgpu.order._bounds import bound_matrix, resources
from profet_core.crossgpu.order._order import (
    bound_violations,
    dominance,
    inversions,
    published_exceptions,
    spec_order,
)
from tests._utils import SHARED

ANCHORS = ("p2.xlarge", "g3s.xlarge", "g4dn.xlarge", "p3.2xlarge")


def _specs(rows):
    cols = ["instance", "gpu", "fp32_tflops", "tensor_tflops_fp32_training"]
    cols += ["fp16_tensor_tflops", "mem_bandwidth_gbs", "gpu_count", "interconnect_gbs"]
    return pd.DataFrame(rows, columns=cols)


SPECS = _specs(
    [
        ("slow", "G slow", 10, 0, 20, 300, 1, 12),
        ("fast", "G fast", 20, 40, 80, 290, 1, 12),  # 290 >= 95% of 300
        ("faster", "G faster", 40, 80, 160, 600, 1, 12),
        ("lowbw", "G lowbw", 40, 80, 160, 200, 1, 12),  # less than 95% of the others' bandwidth
    ]
)


def test_dominance_needs_every_rate_and_95pct_bandwidth():
    d = pd.DataFrame(dominance(SPECS), index=SPECS["instance"], columns=SPECS["instance"])
    assert d.loc["fast", "slow"] and d.loc["faster", "fast"] and d.loc["faster", "slow"]
    assert not d.loc["lowbw", "slow"] and not d.loc["slow", "fast"]
    assert not np.diag(d.to_numpy()).any()


def _table(steps, basis=None, gpus=1):
    names = list(steps)
    return pd.DataFrame(
        {
            "row": 0,
            "target": names,
            "basis": basis or ["specs only"] * len(names),
            "batch_latency_ms": [steps[n] for n in names],
            "low_ms": [0.9 * steps[n] for n in names],
            "high_ms": [1.1 * steps[n] for n in names],
            "gpus": gpus,
        }
    )


def test_spec_order_caps_chains_and_moves_the_interval():
    t = _table({"slow": 50.0, "fast": 80.0, "faster": 90.0, "lowbw": 200.0})
    assert len(inversions(t, SPECS)) == 3
    out, moved, kept = spec_order(t, SPECS)
    got = out.set_index("target")
    # "fast" has 290/300 of "slow"'s bandwidth and more of every rate: at most 300/290 its step
    assert got.loc["fast", "batch_latency_ms"] == pytest.approx(50.0 * 300 / 290)
    assert got.loc["faster", "batch_latency_ms"] == 50.0  # at least slow's every resource
    assert got.loc["faster", "high_ms"] == pytest.approx(55.0)
    # "lowbw" has 2/3 of slow's bandwidth (and more of every rate): at most 1.5x its step, and
    # 10% (it does not dominate slow)
    assert got.loc["lowbw", "batch_latency_ms"] == pytest.approx(75.0 * 1.1)
    assert inversions(out, SPECS).empty and bound_violations(out, SPECS, 1.1 + 1e-9).empty
    assert {m[0] for m in moved} == {"fast", "faster", "lowbw"} and not kept
    why = {m[0]: m[3] for m in moved}
    assert "memory bandwidth 0.97x slow's" in why["fast"]
    assert "at least its every resource" in why["faster"]


def test_spec_order_raises_to_a_measured_gpu_and_keeps_measured_pairs():
    basis = ["measured", "specs only", "measured", "specs only"]
    t = _table({"slow": 50.0, "fast": 30.0, "faster": 70.0, "lowbw": 10.0}, basis)
    out, moved, kept = spec_order(t, SPECS)
    got = out.set_index("target")["batch_latency_ms"]
    # measured steps never move; "fast" is dominated by the measured "faster": raised to it
    assert got["slow"] == 50.0 and got["faster"] == 70.0 and got["fast"] == 70.0
    assert kept == [("faster", "slow", pytest.approx(1.4))]
    inv = inversions(out, SPECS)
    assert inv["measured"].all() and len(inv) == 2


# Near-dominance and the other side of the bound, on lines shaped like the issue's GPUs.
PAIRS = _specs(
    [
        ("t4", "T4", 8.1, 0, 65, 320, 1, 12),
        ("l4", "L4", 30.3, 60, 121, 300, 1, 24),  # 94% of the T4's bandwidth, 3.7x its FP32
        ("h100", "H100", 67, 494.5, 989.5, 3350, 1, 450),
        ("h200", "H200", 67, 494.5, 989.5, 4800, 1, 450),  # the H100's rates, 1.43x bandwidth
        ("k80", "K80", 4.37, 0, 0, 240, 1, 12),
    ]
)


def test_bounds_cover_near_dominance_and_the_largest_lead():
    h = pd.DataFrame(bound_matrix(PAIRS), index=PAIRS["instance"], columns=PAIRS["instance"])
    assert h.loc["l4", "t4"] == pytest.approx(320 / 300)  # its bandwidth shortfall
    assert h.loc["t4", "l4"] == pytest.approx(60 / 8.1)  # the L4's TF32 rate over the T4's FP32
    assert h.loc["h200", "h100"] == 1.0 and h.loc["h100", "h200"] == pytest.approx(4800 / 3350)
    # AMP: convolutions run on the FP16 tensor rates (1.9x), so the FP32 rate (3.7x) is the
    # largest lead; the K80 (no tensor cores) keeps its FP32 rate for them
    amp = pd.DataFrame(bound_matrix(PAIRS, "amp"), index=h.index, columns=h.columns)
    assert amp.loc["t4", "l4"] == pytest.approx(30.3 / 8.1)
    assert amp.loc["k80", "t4"] == pytest.approx(65 / 4.37)
    # several GPUs: the link is a resource, and only equal GPU counts are compared
    multi = PAIRS.assign(gpu_count=[1, 1, 8, 8, 1])
    hm = pd.DataFrame(bound_matrix(multi, multi_gpu=True), index=h.index, columns=h.columns)
    assert hm.loc["l4", "t4"] == pytest.approx(320 / 300) and np.isinf(hm.loc["l4", "h100"])
    assert hm.loc["t4", "l4"] == pytest.approx(60 / 8.1)  # the link (24/12) is not the most


def test_the_l4_is_capped_by_the_measured_t4_and_the_h200_raised_to_the_h100():
    t = _table(
        {"t4": 60.78, "l4": 95.13, "h100": 22.1, "h200": 10.0, "k80": 154.8},
        ["measured", "specs only", "published (12)", "specs only", "measured"],
    )
    out, moved, _ = spec_order(t, PAIRS)
    got = out.set_index("target")["batch_latency_ms"]
    assert got["l4"] == pytest.approx(60.78 * 320 / 300 * 1.1)
    # raised, the published H100 kept
    assert got["h200"] == pytest.approx(22.1 / (4800 / 3350 * 1.1))
    assert got["h100"] == 22.1 and got["t4"] == 60.78 and got["k80"] == 154.8
    why = {m[0]: m[3] for m in moved}
    assert "memory bandwidth 0.94x t4's" in why["l4"]
    assert "raised to h100's step / 1.58 (its memory bandwidth 1.43x" in why["h200"]


def test_a_published_answer_is_not_moved_by_a_spec_only_one():
    # a spec-only H200 predicted far slower than the published H100: the H200 is capped
    t = _table({"h100": 22.1, "h200": 40.0}, ["published (12)", "specs only"])
    got = spec_order(t, PAIRS)[0].set_index("target")["batch_latency_ms"]
    assert got["h100"] == 22.1 and got["h200"] == 22.1


def test_a_measured_gpu_raises_only_what_it_dominates():
    # the data's K80 runs slower than its rated resources allow: its measured step does not
    # raise a GPU with more of some resource (the L4 at 20 ms would be "too fast" by 3.9x)
    t = _table({"k80": 154.8, "l4": 20.0}, ["measured", "specs only"])
    got = spec_order(t, PAIRS)[0].set_index("target")["batch_latency_ms"]
    assert got["l4"] == 20.0


def _roofline_steps(rng, specs, precision, n_rows):
    """Steps of a pure roofline (work per resource over its rate, summed): always in bounds."""
    rates, _ = resources(specs, precision)
    work = rng.lognormal(0.0, 1.0, size=(n_rows, rates.shape[1]))
    return (work[:, None, :] / rates[None, :, :]).sum(axis=2) * 1e3


def _sheet_lines():
    from profet_core.inputs._gpu_specs import load_specs

    return load_specs().drop_duplicates("instance").reset_index(drop=True)


@pytest.mark.parametrize("precision", ["fp32", "amp"])
@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_every_spec_pair_stays_in_bounds_for_random_answers(precision, seed):
    """Property over every pair of the shipped sheet's lines: answers of every tier (measured
    ones from a pure roofline, the rest that off by up to ~3x either way) are moved into
    bounds; the only pairs left out of them have a measured slower answer whose GPU does not
    dominate the other (the data's K80 and T4 run below their rated resources)."""
    rng = np.random.default_rng(seed)
    lines = _sheet_lines()
    names = lines["instance"].tolist()
    true = _roofline_steps(rng, lines, precision, 6)
    basis = rng.choice(["measured", "published (3)", "specs only"], size=len(names))
    noisy = true * np.exp(rng.normal(0, 0.6, size=true.shape))
    steps = np.where(basis == "measured", true, noisy)
    t = pd.DataFrame(
        {
            "row": np.repeat(np.arange(len(true)), len(names)),
            "target": np.tile(names, len(true)),
            "basis": np.tile(basis, len(true)),
            "batch_latency_ms": steps.ravel(),
            "precision": precision,
            "gpus": 1,
        }
    )
    out, _, kept = spec_order(t, lines, precision)
    fixed = t["basis"] == "measured"
    assert (out["batch_latency_ms"][fixed] == t["batch_latency_ms"][fixed]).all()
    bad = bound_violations(out, lines, 1.1 + 1e-9)
    dom = pd.DataFrame(dominance(lines), index=names, columns=names)
    meas = dict(zip(names, basis == "measured", strict=True))
    for r in bad.itertuples():
        assert meas[r.slower_spec] and not dom.loc[r.slower_spec, r.faster_spec], r
    assert inversions(out, lines).empty


def test_spec_order_leaves_published_exceptions():
    t = _table({"slow": 50.0, "fast": 80.0})
    out, moved, _ = spec_order(t, SPECS, exceptions={("G fast", "G slow", "fp32"): "cited"})
    assert out["batch_latency_ms"].tolist() == [50.0, 80.0] and not moved
    out, moved, _ = spec_order(t, SPECS, "amp", {("G fast", "G slow", "fp32"): "cited"})
    assert out["batch_latency_ms"].tolist() == [50.0, pytest.approx(50.0 * 300 / 290)]


def test_published_exceptions_find_an_inversion_and_cite_it():
    from profet_core.crossgpu.spec._published import load_published

    pub = load_published()
    assert published_exceptions(pub) == {}  # no published table shows one today
    one = pub[(pub["gpu_count"] == 1) & (pub["catalog_gpu"] == "NVIDIA A100 SXM4 80GB")]
    one = one[one["model"].str.contains("ResNet")].head(1)
    other = one.assign(catalog_gpu="NVIDIA V100 SXM2 16GB", images_per_s=one["images_per_s"] * 2)
    got = published_exceptions(pd.concat([one, other]))
    (key, cite), *_ = got.items()
    assert key[:2] == ("NVIDIA A100 SXM4 80GB", "NVIDIA V100 SXM2 16GB")
    assert one["source"].iloc[0] in cite


def _profiles():
    """Per anchor: the example profiles, and one workload per CNN of the shared data (each
    with its measured latency) where it is present."""
    ex = read_profile("examples/profile_g3s.json")
    many = pd.read_csv("examples/profiles_g3s.csv")
    ops = [c for c in ex if c.startswith(("Host_", "Device_"))]
    # the README's examples are batch 32 at 128 px (profet predict ... --batch-size 32)
    base = pd.concat([ex, many], ignore_index=True).assign(batch_size=32, input_size=128)
    cols = [*ops, "batch_size", "input_size"]
    out = {a: base.reindex(columns=cols).assign(batch_latency_s=np.nan) for a in ANCHORS}
    if (SHARED / "profiles.parquet").exists():
        from profet_core import load_dataset

        ds = load_dataset(SHARED)
        keys = ["instance", "model", "input_size", "batch_size"]
        prof = ds.profiles.groupby(keys).first()
        prof = prof.join(ds.latencies.groupby(keys)["batch_latency_s"].median()).reset_index()
        for a in ANCHORS:
            grp = prof[prof["instance"] == a].sort_values("batch_size")
            pick = grp.groupby("model").nth(len(grp) // 100)  # one mid-small batch per CNN
            keep = [c for c in pick if c.startswith(("Host_", "Device_"))]
            rows = pick[[*keep, "batch_size", "input_size", "batch_latency_s"]]
            out[a] = pd.concat([out[a], rows], ignore_index=True)
    return {
        a: p.fillna({c: 0.0 for c in p if c.startswith(("Host_", "Device_"))})
        for a, p in out.items()
    }


@pytest.fixture(scope="module")
def predicted():
    pred = load_artifacts()
    parts = []
    for anchor, prof in _profiles().items():
        ops = prof.drop(columns=["batch_size", "input_size", "batch_latency_s"])
        for precision in ("fp32", "amp"):
            for gpus in (1, "all"):
                res = pred.predict(
                    anchor,
                    ops,
                    anchor_latency_s=prof["batch_latency_s"].to_numpy(),
                    batch_size=prof["batch_size"].to_numpy(),
                    input_size=prof["input_size"].to_numpy(),
                    precision=precision,
                    gpus=gpus,
                )
                t = res.table.assign(key=f"{anchor} {gpus}")
                parts.append((t, res.warnings()))
    return pred, parts


@pytest.mark.slow  # about 5 s or more
def test_no_spec_inversion_over_profiles_anchors_precisions_and_gpu_counts(predicted):
    pred, parts = predicted
    tables = pd.concat([t for t, _ in parts], ignore_index=True)
    assert tables["key"].nunique() == 8 and set(tables["precision"]) == {"fp32", "amp"}
    assert (tables["gpus"] > 1).any()
    inv = inversions(tables, pred.cross.specs_)
    spec = inv[~inv["measured"]]
    assert spec.empty, spec.head(10).to_string()
    # what is left is between answers of trained pairs (the data's own V100/T4 inversion),
    # and each such table says so
    for t, warn in parts:
        if not inversions(t, pred.cross.specs_).empty:
            assert any("both answers come from pairs trained on measurements" in w for w in warn)


@pytest.mark.slow  # about 5 s or more
def test_roofline_bounds_hold_over_profiles_anchors_precisions_and_gpu_counts(predicted):
    """Every answer is within the roofline bounds of every other (no step longer than another
    GPU's over the least ratio of its resources), but where a measured answer is the slower
    one (the data's K80 and T4 run below their rated resources) or the row's measured answers
    are themselves out of bounds (the data's V100 slower than its T4 on small host-bound CNNs),
    which moves what they bound."""
    pred, parts = predicted
    tables = pd.concat([t for t, _ in parts], ignore_index=True)
    bad = bound_violations(tables, pred.cross.specs_, 1.1 + 1e-9)
    basis = tables.drop_duplicates("target").set_index("target")["basis"].astype(str)
    slow_measured = bad["slower_spec"].map(basis) == "measured"
    both = bad[slow_measured & (bad["faster_spec"].map(basis) == "measured")]
    keys = ["key", "row", "precision", "gpus"]
    conflict = set(map(tuple, both[keys].to_numpy()))
    rest = bad[~slow_measured]
    assert all(tuple(k) in conflict for k in rest[keys].to_numpy()), rest.head().to_string()


def test_the_issues_repro_is_in_spec_order(predicted):
    pred, parts = predicted
    t = next(
        t
        for t, _ in parts
        if (t["key"] == "g3s.xlarge 1").all() and (t["precision"] == "fp32").all()
    )
    ms = t[t["row"] == 0].set_index("target")["batch_latency_ms"]
    assert ms["g6e.xlarge"] <= 1.10 * ms["gpu-l40"]
    assert ms["gpu-h100-pcie-80gb"] <= 1.10 * min(
        ms["gpu-a100-pcie-40gb"], ms["gpu-a100-pcie-80gb"]
    )


@pytest.mark.parametrize("precision", ["fp32", "amp"])
def test_an_answer_does_not_depend_on_the_other_targets_asked(predicted, precision):
    pred, _ = predicted
    prof = read_profile("examples/profile_g3s.json")
    full = pred.predict("g3s.xlarge", prof, precision=precision).table.set_index("target")
    alone = pred.predict("g3s.xlarge", prof, precision=precision, targets=["g6e.xlarge"])
    row = alone.table.set_index("target").loc["g6e.xlarge"]
    assert row["batch_latency_ms"] == full.loc["g6e.xlarge", "batch_latency_ms"]
    assert row["batch_latency_ms"] <= 1.10 * full.loc["gpu-l40", "batch_latency_ms"]
    assert row["high_ms"] == full.loc["g6e.xlarge", "high_ms"]
    assert any("spec order" in n for n in alone.warnings())


@pytest.mark.parametrize("precision", ["fp32", "amp"])
def test_another_methods_outlier_moves_no_other_target(predicted, precision):
    """With a non-default method (the reference DNN), its own answers (trained
    pairs) are kept and move nothing; every other target gets the default method's answer."""
    pred, _ = predicted
    other = next(m for m in pred.methods if m != pred.default_method)
    prof = read_profile("examples/profile_g3s.json")
    got = pred.predict("g3s.xlarge", prof, precision=precision, method=other)
    dflt = pred.predict("g3s.xlarge", prof, precision=precision)
    t, d = got.table.set_index("target"), dflt.table.set_index("target")
    own = t["basis"].astype(str) == "measured"
    assert own.any() and (~own).sum() > 20
    for col in ("batch_latency_ms", "low_ms", "high_ms", "usd_per_1000_steps"):
        np.testing.assert_allclose(t.loc[~own, col], d.loc[t.index[~own], col], rtol=1e-12)
    if precision == "fp32":  # measured answers never move: the method's own, as it gives them
        raw = pred.predict("g3s.xlarge", prof, method=other, targets=list(t.index[own]))
        np.testing.assert_allclose(
            t.loc[own, "batch_latency_ms"],
            raw.table.set_index("target").loc[t.index[own], "batch_latency_ms"],
        )
    # the issue's repro: the L40S is not pulled to the DNN's V100 answer
    assert t.loc["g6e.xlarge", "batch_latency_ms"] == d.loc["g6e.xlarge", "batch_latency_ms"]
    ms = t.loc[own, "batch_latency_ms"]
    if (ms < 0.5 * d.loc[ms.index, "batch_latency_ms"]).any():
        assert any(f"The {other} method's own answers" in w for w in got.warnings())


def test_the_spec_order_note_names_the_largest_moves_and_counts_the_rest():
    """A note the CLI and the app show alike stays short: the five largest moves by name, the
    others counted with their range (the app cuts messages past 2,000 characters)."""
    from profet_core.crossgpu.order._notes import NAMED_MOVES, order_notes

    moved = [(f"gpu-{i}", "gpu-x", 1.0 + (i - 6) / 20, f"capped at gpu-x ({i})") for i in range(13)]
    (note,) = order_notes(moved, "fp32")
    named = [m[0] for m in moved if f"{m[0]} capped" in note]
    assert named == ["gpu-0", "gpu-1", "gpu-2", "gpu-11", "gpu-12"][:NAMED_MOVES]
    assert "and 8 more by x0.85 to x1.20" in note
    assert len(note) < 1000
