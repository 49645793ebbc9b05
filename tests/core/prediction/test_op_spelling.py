"""Op names that only resemble known ones are matched by spelling, and the match is said:
on stderr and in ``Prediction.warnings()``, which the app shows."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from profet_core import load_artifacts, read_profile
from profet_core.features._profile_features import lookalike_ops
from tests._utils import run

PROFILE = "examples/profile_g3s.json"
RENAMED = {
    "Device_Conv2D": "Device_Conv2d",
    "Device_Conv2DBackpropFilter": "Device_Conv2DBackpropFiltr",
}
SAID = "Device_Conv2d -> Device_Conv2D, Device_Conv2DBackpropFiltr -> Device_Conv2DBackpropFilter"


@pytest.fixture(scope="module")
def predictor():
    return load_artifacts()


@pytest.fixture
def misspelt(tmp_path):
    doc = json.loads(open(PROFILE).read())
    doc["ops"] = {RENAMED.get(k, k): v for k, v in doc["ops"].items()}
    path = tmp_path / "misspelt.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("method", ["hybrid", "profet"], ids=["hybrid", "profet"])
def test_lookalike_op_names_are_said_in_the_cli_and_the_core(predictor, misspelt, method):
    result = predictor.predict("g3s.xlarge", read_profile(misspelt), method=method)
    said = [w for w in result.warnings() if "matched to known ops by spelling" in w]
    assert len(said) == 1 and SAID in said[0]
    assert result.document()["matched_ops"]["Device_Conv2d"] == "Device_Conv2D"
    code, _, err = run("predict", "--profile", misspelt, "--method", method)
    assert code == 0, err
    assert f"profet: warning: {said[0]}" in err
    # Counted with the known op, so not "never saw ... not modelled".
    assert not any("never saw" in w for w in result.warnings())


@pytest.mark.parametrize("method", ["hybrid", "profet"], ids=["hybrid", "profet"])
def test_exact_op_names_say_nothing(predictor, method):
    result = predictor.predict("g3s.xlarge", read_profile(PROFILE), method=method)
    assert result.matched_ops == ()
    assert not any("spelling" in w for w in result.warnings())


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        ("Device_Conv2d", "Device_Conv2D"),
        ("Device_Relu6", "Device_Relu"),
        ("Device_Relu", None),  # known: exact
        ("Device_Softsign", None),  # no known op of its family
        ("Host_Conv2d", None),  # host ops are not matched
    ],
    ids=["case", "suffix", "exact", "no-family-peer", "host"],
)
def test_lookalike_ops_names_the_nearest_op_of_the_family(op, expected):
    vocabulary = {"Device_Conv2D", "Device_Relu", "Device_AddV2", "Host_Conv2D"}
    assert lookalike_ops([op], vocabulary).get(op) == expected


def test_clusterer_names_the_member_it_took_an_op_for():
    from profet_core.features._clustering import OpClusterer

    ops = ["Device_Conv2D", "Device_Conv2DBackpropFilter", "Device_Conv2DBackpropInput"]
    clusterer = OpClusterer().fit(pd.DataFrame(columns=[*ops, "Device_MaxPool"]))
    found = clusterer.matched_ops(["Device_Conv2DBackpropFiltr", "Device_Conv2D", "Host_X"])
    assert found == {"Device_Conv2DBackpropFiltr": "Device_Conv2DBackpropFilter"}
