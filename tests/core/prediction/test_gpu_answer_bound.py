"""An answer on several GPUs is bounded before the work: 95,000 profile rows with
``--gpus all --precision amp`` ran past 120 s (10 million answers); refused at once, naming the
bound and how many rows fit."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from profet_core import ProfetValueError, load_artifacts, read_profile
from profet_core.prediction._option_checks import MAX_GPU_ANSWERS
from tests._utils import ROOT


def test_too_many_answers_on_several_gpus_are_refused_up_front():
    predictor = load_artifacts()
    one = read_profile(ROOT / "examples" / "profile_g3s.json")
    many = pd.concat([one] * 95_000, ignore_index=True)
    t = time.perf_counter()
    with pytest.raises(ProfetValueError, match=f"at most {MAX_GPU_ANSWERS:,}") as got:
        predictor.predict("g3s.xlarge", many, gpus="all", precision="amp")
    assert time.perf_counter() - t < 10
    assert "95,000 profile rows" in str(got.value) and "parts of at most" in str(got.value)
    assert len(predictor.predict("g3s.xlarge", many.head(3), gpus="all").table)  # fits
