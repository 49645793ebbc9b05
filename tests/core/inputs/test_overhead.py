"""Steps told from the per-step overhead ops: a 10-step profile read as 2 is flagged."""

import json

import numpy as np
import pandas as pd
import pytest

from profet_core.inputs._overhead import (
    OVERHEAD_OPS,
    POOLED,
    learn_step_reference,
    overhead_ratio,
    reference_for,
    steps_assumed_note,
    steps_findings,
)
from profet_core.inputs._profile import parse_profile, read_profile
from tests._utils import ROOT, SHARED, requires_shared

REF = np.array([600.0, 30.0, 25.0, 45.0])  # us per 2 steps, in OVERHEAD_OPS order
STORED = {
    "ops": list(OVERHEAD_OPS),
    "instances": {
        "g3s.xlarge": {"reference_us": REF.tolist(), "high": 1.5, "low": 0.6},
        POOLED: {"reference_us": (REF * 1.1).tolist(), "high": 1.7, "low": 0.5},
    },
}


def _row(scale=1.0, steps=2, **override) -> pd.DataFrame:
    ops = dict(zip(OVERHEAD_OPS, REF * scale, strict=True))
    ops |= {"Device_Conv2D": 5e4 * scale} | override
    return pd.DataFrame([ops]).assign(steps=steps)


@pytest.mark.parametrize(
    ("profile", "want"),
    [
        (_row(1.0), 1.0),
        (_row(5.0), 5.0),
        (_row(5.0, steps=10), 1.0),
        (_row(1.0, Host_Dataset=6000.0, Host_IteratorGetNext=300.0), 1.0),
        (_row(1.0, Host_WriteSummary=0.0, Host_FlushSummaryWriter=0.0), 1.0),
        (_row(1.0, Host_WriteSummary=0.0, Host_FlushSummaryWriter=0.0, Host_Dataset=0.0), None),
    ],
    ids=["2-steps", "10-steps-unsaid", "10-steps-said", "slow-pipeline", "no-summaries", "one-op"],
)
def test_overhead_ratio_counts_the_steps(profile, want):
    got = overhead_ratio(profile, REF, profile["steps"].to_numpy())[0]
    assert np.isnan(got) if want is None else got == pytest.approx(want)


@pytest.mark.parametrize(
    ("scale", "steps", "anchor", "found"),
    [
        (1.0, 2, "g3s.xlarge", None),
        (5.0, 2, "g3s.xlarge", "about 10 training steps, not 2"),
        (5.0, 10, "g3s.xlarge", None),
        (1.0, 10, "g3s.xlarge", "about 2 step(s), not 10"),
        (5.0, 2, "a100.new", "on the trained instances (pooled)"),
    ],
    ids=["genuine", "10-unsaid", "10-said", "steps-overstated", "pooled-fallback"],
)
def test_steps_findings_name_the_likely_step_count(scale, steps, anchor, found):
    findings = steps_findings(_row(scale, steps), anchor, STORED)
    if found is None:
        assert findings == []
        return
    (f,) = findings
    assert (f.level, f.code) == ("warning", "steps_unstated") and found in f.message
    if "not 2" in found:
        assert "--steps 10 on the command line, 'Steps covered' in the app" in f.message


def test_no_reference_no_verdict():
    # Artifacts trained before the check (no steps_reference) say nothing.
    assert steps_findings(_row(5.0), "g3s.xlarge", None) == []
    assert reference_for({}, "g3s.xlarge") is None


@pytest.mark.parametrize(
    ("text", "steps", "rows"),
    [
        (json.dumps({"Device_Conv2D": 9.0, "Host_IDLE": 1.0}), None, (0,)),
        (json.dumps({"ops": {"Device_Conv2D": 9.0}, "steps": 2}), None, ()),
        (json.dumps({"Device_Conv2D": 9.0}), 2, ()),
        ("Device_Conv2D,steps\n9,\n9,10\n9,\n", None, (0, 2)),
    ],
    ids=["json-unsaid", "json-says", "override", "table-gaps"],
)
def test_readers_list_the_rows_whose_steps_were_assumed(text, steps, rows):
    name = "p.csv" if text.startswith("Device") else "p.json"
    profile = parse_profile(text, name, steps=steps)
    note = steps_assumed_note(profile)
    if not rows:
        assert note is None
        return
    assert note.rows == rows and "2 (PROFET's convention" in note.message
    assert "--steps N on the command line, 'Steps covered' in the app" in note.message


def test_the_reserved_architectures_are_a_parameter_and_recorded():
    """Which CNNs the reference never fits on is the caller's choice, kept in what is stored."""
    cnn = _row(1.0).assign(instance="g3s.xlarge", model="ResNet50")
    vgg = _row(3.0).assign(instance="g3s.xlarge", model="VGG16")
    prof = pd.concat([cnn, cnn, vgg, vgg], ignore_index=True)
    default = learn_step_reference(prof)
    assert default["reserved"] == ["VGG16", "InceptionV3"]
    assert default["instances"]["g3s.xlarge"]["reference_us"] == REF.tolist()
    every = learn_step_reference(prof, reserved=())
    assert every["reserved"] == []
    # the VGG16 rows (three times the overhead) now enter the median
    assert every["instances"]["g3s.xlarge"]["reference_us"] == (REF * 2.0).tolist()
    only_vgg = learn_step_reference(prof, reserved=("ResNet50",))["instances"]["g3s.xlarge"]
    assert only_vgg["reference_us"] == (REF * 3.0).tolist()


@requires_shared
def test_learned_reference_never_fits_on_the_reserved_architectures():
    prof = pd.read_parquet(SHARED / "profiles.parquet")
    stored = learn_step_reference(prof)
    vgg16 = prof["model"] == "VGG16"
    wild = prof.assign(**{c: prof[c].where(~vgg16, prof[c] * 100) for c in OVERHEAD_OPS})
    assert learn_step_reference(wild) == stored
    g3s = stored["instances"]["g3s.xlarge"]
    assert g3s["reference_us"][0] == pytest.approx(621.03) and g3s["high"] == pytest.approx(
        1.539, abs=1e-3
    )


@requires_shared
@pytest.mark.parametrize(
    ("name", "steps", "alarm"),
    [("profile_g3s.json", None, False), ("profile_g3s_10steps.json", None, True)]
    + [("profile_g3s_10steps.json", 10, False)],
    ids=["2-steps", "10-steps-unsaid", "10-steps-said"],
)
def test_shipped_examples(name, steps, alarm):
    stored = learn_step_reference(pd.read_parquet(SHARED / "profiles.parquet"))
    findings = steps_findings(
        read_profile(ROOT / "examples" / name, steps=steps), "g3s.xlarge", stored
    )
    assert bool(findings) == alarm
    if alarm:
        assert "about 10 training steps" in findings[0].message


@pytest.mark.parametrize("scale", [1e4, 2.26e10], ids=["20000-steps", "45-billion-steps"])
def test_step_suggestions_stay_within_what_steps_allows(scale):
    # "--steps 45297035309" was once suggested; --steps takes 1..1000
    (f,) = steps_findings(_row(scale), "g3s.xlarge", STORED)
    assert "--steps" in f.message and "at most 1000" in f.message
    suggested = [int(m) for m in __import__("re").findall(r"--steps (\d+)", f.message)]
    assert all(1 <= k <= 1000 for k in suggested)


@pytest.mark.parametrize(
    "profile",
    [
        _row(2.0, Host_Dataset=np.nan),
        _row(3.0).drop(columns=["Host_WriteSummary"]),
        _row(1.0).astype({"Host_Dataset": object}).assign(steps=[4]),
        pd.concat([_row(1.0), _row(5.0, Host_FlushSummaryWriter=np.nan)], ignore_index=True),
    ],
    ids=["nan-op", "absent-op", "object-column", "two-rows"],
)
def test_overhead_ratio_reads_ops_as_a_filled_reindex_would(profile):
    """Each overhead op read on its own (NaN and absent as 0) gives the reindexed, filled
    copy's ratio, digit for digit."""
    times = profile.reindex(columns=list(OVERHEAD_OPS)).fillna(0.0).to_numpy(dtype=float)
    steps = profile["steps"].to_numpy(dtype=float)
    expect = overhead_ratio(pd.DataFrame(times, columns=list(OVERHEAD_OPS)), REF, steps)
    np.testing.assert_array_equal(overhead_ratio(profile, REF, steps), expect)


@pytest.mark.parametrize(
    ("scale", "measured", "said", "unsaid"),
    [
        (2.26e10, True, ["over 1000x", "scale holds"], ["22600000000", "too high"]),
        (2.26e10, False, ["over 1000x", "far too high"], ["about 22600000000x"]),
        (5.0, True, ["5.0x", "scale holds"], ["too high"]),
        (5.0, False, ["5.0x", "about 5x too high"], ["scale holds"]),
        (1e-9, False, ["under 1/1000 of"], ["0.00x"]),
    ],
    ids=["absurd-measured", "absurd-unmeasured", "5x-measured", "5x-unmeasured", "absurd-low"],
)
def test_absurd_overhead_ratios_are_stated_sensibly(scale, measured, said, unsaid):
    # "about 22648517655x too high" beside a 60 ms answer: a ratio past any step
    # count is "over 1000x", and "too high" only where no measured latency sets the scale.
    (f,) = steps_findings(_row(scale), "g3s.xlarge", STORED, measured=measured)
    assert all(s in f.message for s in said), f.message
    assert not any(s in f.message for s in unsaid), f.message
