"""The preparation every answer shares: a profile naming another instance than the anchor."""

import pandas as pd
import pytest

from profet_core.errors import ProfetValueError
from profet_core.inputs._prepare import check_anchor


def _table(*instances) -> pd.DataFrame:
    return pd.DataFrame({"Device_Conv2D": [1e4] * len(instances), "instance": list(instances)})


@pytest.mark.parametrize(
    "profiles",
    [
        _table("g3s.xlarge"),
        _table("g3s.xlarge", None),
        pd.DataFrame({"Device_Conv2D": [1e4]}),
    ],
    ids=["same", "same-or-unnamed", "unnamed"],
)
def test_profiles_of_the_anchor_pass(profiles):
    check_anchor(profiles, "g3s.xlarge")


@pytest.mark.parametrize(
    ("profiles", "match"),
    [
        (
            _table("g3s.xlarge"),
            r"^the profile says it was taken on 'g3s.xlarge', but the anchor is 'p3.2xlarge'.*"
            r"drop --anchor .* or give --anchor g3s.xlarge; in the app pick 'g3s.xlarge'",
        ),
        (
            _table("p3.2xlarge", "g3s.xlarge", "p2.xlarge"),
            r"^row 1 of the profile says it was taken on 'g3s.xlarge'.*every row must name",
        ),
    ],
    ids=["one-profile", "table-names-the-first-row"],
)
def test_profiles_of_another_instance_are_refused(profiles, match):
    with pytest.raises(ProfetValueError, match=match):
        check_anchor(profiles, "p3.2xlarge")


def _reference_ops(profiles: pd.DataFrame) -> pd.DataFrame:
    """The op table as it was built before the one-matrix path: the profile brought to 2 steps
    by ``normalise_steps``, its op columns selected, as floats, index 0..n-1."""
    from profet_core._schema import op_columns
    from profet_core.inputs._profile import normalise_steps

    out = normalise_steps(profiles)
    return out[op_columns(out.columns)].reset_index(drop=True).astype(float)


@pytest.mark.parametrize(
    ("steps", "dtype", "latency"),
    [(None, float, 0.1), (2, int, 0.1), (4, float, None), ([1, 3, 1000], float, 0.2)],
    ids=["no-steps", "2-steps-int", "4-steps-no-latency", "steps-per-row"],
)
def test_prepared_ops_equal_the_normalised_profile(steps, dtype, latency):
    import numpy as np

    from profet_core.inputs._prepare import prepare_profiles

    rng = np.random.default_rng(7)
    ops = pd.DataFrame(
        rng.integers(0, 10**6, size=(3, 5)),
        columns=["Device_Conv2D", "Host_Dataset", "Device_MatMul", "Host_IDLE", "Device_IDLE"],
    ).astype(dtype)
    profiles = ops.assign(instance="g3s.xlarge", batch_latency_s=latency, batch_size=32)
    if steps is not None:
        profiles = profiles.assign(steps=steps)
    profiles.index = [10, 11, 12]
    got = prepare_profiles(profiles, anchor="g3s.xlarge")
    pd.testing.assert_frame_equal(got.ops, _reference_ops(profiles), check_exact=True)
    assert list(got.ops.dtypes) == [np.float64] * 5
    if latency is None:
        assert got.latency_s is None
    else:
        np.testing.assert_array_equal(got.latency_s, np.full(3, latency))
