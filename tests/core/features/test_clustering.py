import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from profet_core.features._clustering import OpClusterer

COLS = [
    "Device_Conv2D",
    "Device_Conv2DBackpropFilter",
    "Device_Conv2DBackpropInput",
    "Device_Relu",
    "Device_ReluGrad",
    "Host_IDLE",
    "Host_Dataset",
]


def _frame(values=None):
    return pd.DataFrame([values or dict.fromkeys(COLS, 1.0)])


def test_close_names_share_a_cluster_and_times_are_summed():
    c = OpClusterer(threshold=6).fit(_frame())
    g = c.op_to_feature_
    assert g["Device_Conv2DBackpropFilter"] == g["Device_Conv2DBackpropInput"]
    assert g["Device_Relu"] == g["Device_ReluGrad"]
    assert g["Device_Conv2D"] != g["Device_Relu"]
    # Host ops are never merged.
    assert g["Host_IDLE"] == "Host_IDLE" and g["Host_Dataset"] == "Host_Dataset"
    X = _frame({**dict.fromkeys(COLS, 0.0), "Device_Relu": 2.0, "Device_ReluGrad": 3.0})
    out = c.transform(X)
    assert out[g["Device_Relu"]].iloc[0] == 5.0
    assert out.to_numpy().sum() == 5.0


@pytest.mark.parametrize(
    ("threshold", "n_features"),
    [(0.5, 7), (6, 5), (100, 3)],
    ids=["no-merge", "profet-6", "all-device-ops"],
)
def test_threshold_controls_merging(threshold, n_features):
    assert len(OpClusterer(threshold=threshold).fit(_frame()).feature_names_) == n_features


def test_unseen_op_joins_the_nearest_cluster_or_is_reported():
    c = OpClusterer(threshold=6).fit(_frame())
    X = pd.DataFrame([{"Device_Relu6": 4.0, "Device_SomethingEntirelyNew": 9.0, "Host_New": 1.0}])
    assert c.unknown_ops(X.columns) == ["Device_SomethingEntirelyNew", "Host_New"]
    out = c.transform(X)
    assert out[c.op_to_feature_["Device_Relu"]].iloc[0] == 4.0
    assert out.to_numpy().sum() == 4.0


def test_state_round_trip_and_fitted_check():
    c = OpClusterer(threshold=6).fit(_frame())
    back = OpClusterer.from_state(c.to_state())
    pd.testing.assert_frame_equal(back.transform(_frame()), c.transform(_frame()))
    with pytest.raises(NotFittedError):
        OpClusterer().transform(_frame())
