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
