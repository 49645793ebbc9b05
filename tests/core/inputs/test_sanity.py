"""Sense checks: CPU profiles, out-of-range device time, a latency at odds with the steps."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from profet_core.inputs._profile import normalise_steps, parse_profile
from profet_core.inputs._sanity import RATIO_TYPICAL, Finding, profile_checks
from tests._utils import SHARED, requires_shared

LAT = 0.1  # s per step


def _profile(busy_us: float, **extra) -> pd.DataFrame:
    """A 2-step profile with ``busy_us`` of device busy time (two ops) plus idle and host."""
    row = {"Device_Conv2D": busy_us * 0.75, "Device_Relu": busy_us * 0.25}
    row |= {"Device_IDLE": 500.0, "Host_IDLE": 9000.0}
    return pd.DataFrame([row]).assign(**extra)


def _codes(findings):
    return [(f.level, f.code) for f in findings]


def test_plausible_profile_is_clean():
    assert profile_checks(_profile(RATIO_TYPICAL * LAT * 1e6), LAT) == []


@pytest.mark.parametrize(
    "profile",
    [
        pd.DataFrame([{"Host_Conv2D": 100.0, "Host_IDLE": 50.0}]),
        pd.DataFrame([{"Device_IDLE": 900.0, "Host_IDLE": 50.0, "Device_Relu": 0.0}]),
        pd.DataFrame([{"Device_Conv2D": 0.0, "Host_IDLE": 0.0}]),
    ],
    ids=["host-only", "idle-only", "all-zero"],
)
def test_no_device_time_is_an_error(profile):
    (f,) = profile_checks(profile)
    assert f == Finding("error", "no_device_time", f.message, (0,))
    assert "taken without a GPU" in f.message and "GPU anchor" in f.message


def test_many_rows_name_the_bad_ones():
    ok = _profile(1000.0)
    table = pd.concat([ok, ok.assign(Device_Conv2D=0.0, Device_Relu=0.0), ok], ignore_index=True)
    (f,) = profile_checks(table)
    assert f.rows == (1,) and "(row 1)" in f.message


@pytest.mark.parametrize(
    ("busy", "match"),
    [
        (5e9, r"500x above the largest .*10,000,000 us"),
        (1.0, r"1,000x below the smallest .*1,000 us"),
    ],
    ids=["above", "below"],
)
def test_device_time_far_outside_training_warns_with_factor(busy, match):
    (f,) = profile_checks(_profile(busy), device_range_us=(1e3, 1e7))
    assert (f.level, f.code) == ("warning", "device_time_out_of_range")
    assert re.search(match, f.message)


def test_device_time_within_ten_times_the_range_is_clean():
    assert profile_checks(_profile(9e7), device_range_us=(1e3, 1e7)) == []


@pytest.mark.parametrize("steps", [11, 22, 100], ids=["11", "22", "100"])
def test_profile_over_many_steps_is_flagged_with_the_implied_count(steps):
    profile = _profile(RATIO_TYPICAL / 2 * steps * LAT * 1e6)  # really `steps` steps
    (f,) = profile_checks(profile, LAT)
    assert (f.level, f.code) == ("warning", "latency_mismatch")
    assert f"--steps {steps}" in f.message
    assert f"device time is {RATIO_TYPICAL / 2 * steps:.1f}x the anchor latency" in f.message
    # told the true step count, the same profile is clean; normalised, too
    assert profile_checks(profile.assign(steps=steps), LAT) == []
    assert profile_checks(normalise_steps(profile.assign(steps=steps)), LAT) == []


def test_latency_from_the_column_and_the_override():
    profile = _profile(22 * LAT * 1e6, batch_latency_s=LAT)
    assert _codes(profile_checks(profile)) == [("warning", "latency_mismatch")]
    assert profile_checks(profile, anchor_latency_s=22 / RATIO_TYPICAL * LAT) == []
    assert profile_checks(profile.assign(batch_latency_s=np.nan)) == []


def test_latency_far_longer_than_the_device_time():
    (f,) = profile_checks(_profile(0.01 * LAT * 1e6), LAT)
    assert f.code == "latency_mismatch" and "0.0x" in f.message
    assert "--steps" not in f.message and "one training step's" in f.message


def test_bad_latency_is_refused():
    with pytest.raises(ValueError, match="must be seconds 1e-06..1e"):
        profile_checks(_profile(1e5), -1.0)


@requires_shared
def test_real_training_rows_pass_clean():
    key = ["exp", "instance", "model", "input_size", "batch_size"]
    prof = pd.read_parquet(SHARED / "profiles.parquet")
    lat = pd.read_parquet(SHARED / "latencies.parquet")
    df = prof.merge(lat[key + ["batch_latency_s"]], on=key)
    ops = [c for c in prof.columns if c.startswith(("Host_", "Device_"))]
    busy = df[[c for c in ops if c.startswith("Device_") and c != "Device_IDLE"]].sum(axis=1)
    findings = profile_checks(
        df[ops + ["batch_latency_s"]], device_range_us=(busy.min(), busy.max())
    )
    assert findings == []


@requires_shared
def test_shipped_example_times_eleven_is_flagged_as_22_steps():
    # profile_a_g3s.json (2 steps) was given with a 122,400 us latency (examples/ README);
    # multiplied by 11 it spans 22 steps, and the ratio says so
    example = json.loads((SHARED / "examples" / "profile_a_g3s.json").read_text())[0]
    lat = 0.1224
    assert profile_checks(parse_profile(json.dumps(example)), lat) == []
    x11 = parse_profile(json.dumps({k: v * 11 for k, v in example.items()}))
    (f,) = profile_checks(x11, lat)
    assert f.code == "latency_mismatch" and "--steps 22" in f.message
    assert (
        profile_checks(parse_profile(json.dumps([x11.iloc[0, :-1].to_dict()]), steps=22), lat) == []
    )


@pytest.mark.parametrize(
    ("latency_s", "match", "meant_ms"),
    [
        (0.113e-3, "seconds given as milliseconds?", 113),
        (113.0, "milliseconds given as seconds?", 113),
    ],
    ids=["s-typed-as-ms", "ms-typed-as-s"],
)
def test_latency_1000x_off_is_refused_as_a_unit_mix_up(latency_s, match, meant_ms):
    # 0.113 typed as ms (it was seconds) once asked whether the profile spans 2,021 steps
    profile = _profile(RATIO_TYPICAL * 0.113 * 1e6)
    findings = profile_checks(profile, latency_s)
    assert _codes(findings) == [("error", "latency_units")]
    assert match in findings[0].message
    assert f"--anchor-latency-ms {meant_ms}" in findings[0].message
    assert "steps?" not in findings[0].message


@pytest.mark.parametrize("busy", [5e-324, 1e-300, 0.5], ids=["denormal", "tiny", "half-us"])
def test_device_time_below_one_microsecond_is_no_gpu_time(busy):
    # 5e-324 us of device time once passed as a GPU profile
    (f,) = profile_checks(_profile(busy))
    assert f.code == "no_device_time" and f.level == "error"


@pytest.mark.parametrize(
    ("factor", "match"),
    [(1e5, "100,000x too long"), (1e-5, "100,000x too short"), (1e7, "1e\\+07x too long")],
    ids=["100000x-long", "100000x-short", "1e7x-long"],
)
def test_latency_far_beyond_any_step_count_or_unit_is_refused(factor, match):
    # a latency 100,000x off once answered with an interval of 5.5e-10..200,080 ms
    busy = RATIO_TYPICAL * LAT * 1e6
    findings = profile_checks(_profile(busy), LAT * factor)
    assert _codes(findings) == [("error", "latency_off")]
    assert re.search(match, findings[0].message)
    assert "anchor latency" in findings[0].message


@pytest.mark.parametrize("factor", [30.0, 1 / 30.0], ids=["30x-long", "30x-short"])
def test_latency_off_by_a_step_count_is_still_a_warning(factor):
    findings = profile_checks(_profile(RATIO_TYPICAL * LAT * 1e6), LAT / factor)
    assert [f.level for f in findings] == ["warning"]
