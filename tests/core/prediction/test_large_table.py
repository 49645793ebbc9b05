"""A 200,000-row profile table is predicted row for row (bench/claims/large_table.py times
it), and the novelty band of every row is looked up at once, as the one-row lookup would."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pandas as pd
import pytest

from profet_core import load_artifacts
from profet_core.cli._main import main
from profet_core.models._intervals import novelty_band, novelty_bands
from tests._utils import OPS

pytestmark = pytest.mark.slow  # 200,000 profile rows

BANDS = pd.DataFrame(
    {
        "estimator": ["hybrid"] * 4 + ["profet"] * 2,
        "with_latency": [False, False, True, True, False, False],
        "band": ["0-1", ">= 1", "0-1", ">= 1", "0-2", ">= 2"],
        "novelty_lo": [0.0, 1.0, 0.0, 1.0, 0.0, 2.0],
        "novelty_hi": [1.0, np.inf, 1.0, np.inf, 2.0, np.inf],
        "share_pct": [50.0] * 6,
        "mape_pct": [5.0, 20.0, 4.0, 18.0, 6.0, 25.0],
    }
)


@pytest.mark.parametrize("method", ["hybrid", "profet", "absent"])
def test_novelty_bands_match_the_one_row_lookup(method):
    novelty = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 7.0, 1e300, np.inf, np.nan, -1.0] * 2)
    with_latency = np.repeat([False, True], 10)
    band, mape = novelty_bands(BANDS, novelty, with_latency, method)
    for i, (n, w) in enumerate(zip(novelty, with_latency, strict=True)):
        one = novelty_band(BANDS, n, bool(w), method)
        assert band[i] == (one["band"] if one else None), (n, w)
        assert mape[i] == pytest.approx(one["mape_pct"]) if one else np.isnan(mape[i])


def test_novelty_bands_without_a_table():
    band, mape = novelty_bands(None, np.array([1.0, 3.0]), np.array([True, False]), "hybrid")
    assert band.tolist() == [None, None] and np.isnan(mape).all()


ROWS = 200_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    """200,000 distinct profiles (each op scaled by its own factor), whole microseconds."""
    rng = np.random.default_rng(7)
    base = np.array([5000.0 if o.startswith("Device_") else 50.0 for o in OPS])
    times = np.maximum((base * rng.uniform(0.5, 2.0, size=(ROWS, len(OPS)))).round(), 1)
    df = pd.DataFrame(times.astype(np.int64), columns=list(OPS))
    path = tmp_path_factory.mktemp("big") / "big.csv"
    df.to_csv(path, index=False)
    return path, df


def test_200k_row_table_is_predicted_row_for_row(trained, big_csv):
    path, df = big_csv
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["predict", "--anchor", "gpu-a", "--profile", str(path)]
                    + ["--artifacts", str(trained), "--format", "csv"])  # fmt: skip
    assert code == 0, err.getvalue()[-500:]
    table = pd.read_csv(io.StringIO(out.getvalue()))
    predictor = load_artifacts(trained)
    targets = predictor.targets("gpu-a")
    assert len(table) == ROWS * len(targets)
    assert np.isfinite(table["batch_latency_ms"]).all() and (table["batch_latency_ms"] > 0).all()
    # the threaded tree walk and the chunked novelty give each row what it gets alone
    for row in np.random.default_rng(0).choice(ROWS, 12, replace=False):
        alone = predictor.predict("gpu-a", df.iloc[[row]]).table.set_index("target")
        got = table[table["row"] == row].set_index("target")
        for col in ("batch_latency_ms", "low_ms", "high_ms", "novelty"):
            np.testing.assert_allclose(
                got.loc[targets, col], alone.loc[targets, col], rtol=1e-3, atol=6e-5
            )
