import numpy as np
import pandas as pd
import pytest

from profet_core import ProfetValueError, estimate_run

TABLE = pd.DataFrame(
    {
        "target": ["a", "b"],
        "batch_latency_ms": [100.0, 50.0],
        "low_ms": [90.0, 40.0],
        "high_ms": [110.0, 60.0],
        "usd_per_hour": [3.6, np.nan],
    }
)


def test_run_time_and_cost():
    out = estimate_run(TABLE, dataset_images=50_000, batch_size=32, epochs=10)
    steps = 1563 * 10  # ceil(50000 / 32) steps per epoch
    assert out["steps"].tolist() == [steps, steps]
    np.testing.assert_allclose(out["run_hours"], [100.0 * steps / 3.6e6, 50.0 * steps / 3.6e6])
    np.testing.assert_allclose(out["run_usd"].iloc[0], 100.0 * steps / 3.6e6 * 3.6)
    assert np.isnan(out["run_usd"].iloc[1])
    assert out["run_usd_low"].iloc[0] < out["run_usd"].iloc[0] < out["run_usd_high"].iloc[0]


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"epochs": 0}, "epochs is 0"),
        ({"batch_size": 2.5}, "batch_size is 2.5"),
        ({"dataset_images": -5}, "dataset_images is -5"),
    ],
    ids=["zero-epochs", "fractional-batch", "negative-images"],
)
def test_bad_run_parameters(kw, match):
    args = {"dataset_images": 1000, "batch_size": 32, "epochs": 1, **kw}
    with pytest.raises(ProfetValueError, match=match):
        estimate_run(TABLE, **args)
