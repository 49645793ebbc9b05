"""What the cross-instance model remembers between predictions (for speed: a pair's
basis and the targets' spec gaps) is its fitted state's alone: a copy with other specs or
calibrations, or a refit, never answers from the old one's memory."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from profet_core import load_artifacts
from profet_core.crossgpu.spec._basis import fitted_memo
from profet_core.crossgpu.spec._targets import _pair_arrays

ANCHOR = "g3s.xlarge"


@pytest.fixture(scope="module")
def cross():
    return load_artifacts().cross


def test_memo_is_new_when_a_fitted_attribute_is_another_object(cross):
    model = copy.copy(cross)
    memo = fitted_memo(model, "probe")
    memo["x"] = 1
    assert fitted_memo(model, "probe") is memo
    model.calibration_ = dict(model.calibration_)  # another object, the same content
    assert fitted_memo(model, "probe") == {}
    assert fitted_memo(cross, "probe").get("x") is None  # the original keeps its own


def test_a_calibrated_copy_does_not_answer_from_the_original_memory(cross):
    target = next(t for t in cross.spec_index_ if t not in cross.instances_)
    before = cross.pair_basis(ANCHOR, target)
    arrays = _pair_arrays(cross, ANCHOR, [target])
    calibrated = copy.copy(cross)
    calibrated.calibration_ = {**cross.calibration_, target: {"delta": 0.5, "runs": 3}}
    assert calibrated.pair_basis(ANCHOR, target) == "calibrated (3 runs)" != before
    assert cross.pair_basis(ANCHOR, target) == before
    moved = _pair_arrays(calibrated, ANCHOR, [target])[1]
    np.testing.assert_allclose(moved - arrays[1], 0.5)
    assert not arrays[0].flags.writeable  # kept arrays cannot be changed by a caller


def test_pair_bases_equal_each_pair_basis_asked_afresh(cross):
    targets = [t for t in cross.spec_index_ if t != ANCHOR]
    fresh = copy.deepcopy(cross)
    vars(fresh).pop("_pair_basis_memo", None)
    want = [max([fresh.basis(ANCHOR), fresh.basis(t)], key=_rank) for t in targets]
    assert cross.pair_bases(ANCHOR, targets) == want == cross.pair_bases(ANCHOR, targets)


def _rank(basis: str) -> int:
    from profet_core.crossgpu.spec._basis import BASES

    return BASES.index(basis.split(" (")[0])
