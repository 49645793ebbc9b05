"""The conformance check's rules on hand-made profiles (no TensorFlow, no real data)."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core.capture._conformance import conformance

# The data's rows of one CNN: a convolution, its bias, SGD and a transfer (GPU only).
DATA = pd.DataFrame(
    {
        "Device_Conv2D": [800.0, 820.0],
        "Device_BiasAdd": [100.0, 90.0],
        "Device_ResourceApplyGradientDescent": [100.0, 90.0],
        "Host__Send": [5.0, 6.0],
        "Host_IDLE": [50.0, 40.0],
    }
)


def capture(**extra: float) -> pd.Series:
    ops = {"Host__FusedConv2D": 900.0, "Host_ResourceApplyGradientDescent": 100.0}
    return pd.Series({**ops, **{f"Host_{k}": v for k, v in extra.items()}})


@pytest.mark.parametrize(
    ("extra", "foreign"),
    [
        ({}, []),
        ({"ReadVariableOp": 100.0}, []),  # a stall booked to a variable read: not a GPU op
        ({"AssignVariableOp": 100.0}, []),
        ({"AssignSubVariableOp": 100.0}, ["AssignSubVariableOp"]),  # Keras 3's optimizer
        ({"Erf": 5.0}, []),  # under 1% of the capture's time
        ({"Erf": 100.0}, ["Erf"]),
    ],
    ids=["clean", "variable-read", "variable-assign", "keras3-sgd", "tiny-foreign", "foreign"],
)
def test_foreign_op_types(extra, foreign):
    assert conformance(capture(**extra), DATA)["foreign"] == foreign


def test_a_missing_material_type_is_named():
    found = conformance(pd.Series({"Host_Conv2D": 900.0}), DATA)
    # BiasAdd (about 10% of the data's device time) and SGD are missing; the transfer is GPU only.
    assert found["missing"] == ["BiasAdd", "ResourceApplyGradientDescent"]


def test_fusions_count_as_what_they_stand_for():
    found = conformance(capture(), DATA)
    assert found["missing"] == []
    assert found["jaccard_normalised"] == pytest.approx(1.0)
