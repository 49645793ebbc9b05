"""Two-level designs (profet_core.doe.make_design, parse_factor): aliases, run sheets, bad input."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core.doe import make_design, parse_factor
from profet_core.errors import ProfetValueError
from tests.core.doe._utils import STUDY


def test_alias_structure_of_half_fraction_abcd():
    d = make_design(STUDY, "D=ABC", randomize=False)
    assert d.label == "2^(4-1)"
    assert d.defining_relation == ("ABCD",)
    assert d.defining_relation_text == "I = ABCD"
    assert d.resolution == 4 and d.resolution_label == "IV"
    assert set(d.aliases) == {
        "A = BCD",
        "B = ACD",
        "C = ABD",
        "D = ABC",
        "AB = CD",
        "AC = BD",
        "AD = BC",
    }
    two = d.alias_table(max_order=2)
    assert two["aliases"].tolist() == [
        "A = BCD",
        "B = ACD",
        "C = ABD",
        "D = ABC",
        "AB = CD",
        "AC = BD",
        "AD = BC",
    ]
    assert two["factors"].iloc[4] == "cpu:memory = network:epochs"


def test_negative_generator_gives_the_other_half_with_signed_aliases():
    d = make_design(STUDY, "D = -ABC", randomize=False)
    assert d.defining_relation == ("-ABCD",)
    assert "A = -BCD" in d.aliases and "AB = -CD" in d.aliases
    plus = make_design(STUDY, "D=ABC", randomize=False).coded()
    assert (d.coded()["epochs"] == -plus["epochs"]).all()


def test_quarter_fraction_resolution_three():
    d = make_design(
        ["a=0,1", "b=0,1", "c=0,1", "d=0,1", "e=0,1"], ["D=AB", "E=AC"], randomize=False
    )
    assert d.n_runs == 8
    assert d.defining_relation == ("ABD", "ACE", "BCDE")
    assert d.resolution == 3
    assert "A = BD = CE = ABCDE" in d.aliases


def test_full_factorial_standard_order_and_no_aliases():
    d = make_design(["a=lo,hi", "b=lo,hi", "c=lo,hi"], randomize=False)
    assert d.label == "2^3" and d.resolution is None and d.aliases == ()
    # Yates' order: A changes fastest
    assert d.runs["a"].tolist() == ["lo", "hi"] * 4
    assert d.runs["c"].tolist() == ["lo"] * 4 + ["hi"] * 4


def test_run_sheet_replicates_labels_and_seeded_order():
    d1 = make_design(STUDY, "D=ABC", replicates=4, seed=7)
    d2 = make_design(STUDY, "D=ABC", replicates=4, seed=7)
    d3 = make_design(STUDY, "D=ABC", replicates=4, seed=8)
    assert d1.n_runs == 32 and d1.seed == 7
    assert d1.runs["run"].tolist() == list(range(1, 33))
    pd.testing.assert_frame_equal(d1.runs, d2.runs)
    assert d1.runs["std_order"].tolist() != d3.runs["std_order"].tolist()
    assert (d1.runs.groupby("std_order").size() == 4).all()
    assert set(d1.runs["cpu"]) == {"750m", "1500m"}
    assert set(d1.runs["network"]) == {"FashionMNISTCNN", "FashionMNISTResNet"}
    # each std_order row always has the same levels, in every replicate
    assert (
        (d1.runs.groupby("std_order")[["cpu", "memory", "network", "epochs"]].nunique() == 1)
        .all()
        .all()
    )


def test_unseeded_design_records_its_seed():
    d = make_design(STUDY, "D=ABC", replicates=2)
    again = make_design(STUDY, "D=ABC", replicates=2, seed=d.seed)
    pd.testing.assert_frame_equal(d.runs, again.runs)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("cpu=750m", r"'cpu' has 1 level"),
        ("cpu=1,2,3", r"'cpu' has 3 level"),
        ("cpu=1,1", r"'cpu' has one level"),
        ("750m,1500m", r"NAME=LOW,HIGH"),
    ],
    ids=["one-level", "three-levels", "same-levels", "no-name"],
)
def test_parse_factor_rejects(spec, match):
    with pytest.raises(ProfetValueError, match=match):
        parse_factor(spec)


@pytest.mark.parametrize(
    ("factors", "generators", "kwargs", "match"),
    [
        (STUDY, "E=ABC", {}, r"letter\(s\) E.*only A, B, C, D"),
        (STUDY, "D=D", {}, r"in terms of itself"),
        (STUDY, "D=A", {}, r"at least two letters"),
        (STUDY, "D=ABC, D=AB", {}, r"D has more than one generator"),
        (STUDY, ["C=AB", "D=AC"], {}, r"uses generated factor\(s\) C"),
        (STUDY, "D equals ABC", {}, r"must look like D=ABC"),
        (STUDY, "", {"replicates": 0}, r"replicates must be.*got 0"),
        (["a=0,1", "a=1,2"], "", {}, r"unique; repeated: a"),
        (["run=0,1"], "", {}, r"reserved"),
        (["cpu:mem=0,1"], "", {}, r"may not contain ':'"),
        ([f"f{i}=0,1" for i in range(13)], "", {}, r"1 to 12 factors; got 13"),
    ],
    ids=[
        "unknown-letter",
        "self",
        "single-letter",
        "twice",
        "generated-source",
        "syntax",
        "zero-replicates",
        "duplicate",
        "reserved",
        "colon-in-name",
        "too-many",
    ],
)
def test_make_design_rejects(factors, generators, kwargs, match):
    with pytest.raises(ProfetValueError, match=match):
        make_design(factors, generators, **kwargs)
