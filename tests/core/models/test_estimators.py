import numpy as np
import pytest
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.linear_model import LinearRegression, Ridge

from profet_core.errors import NotFittedError
from profet_core.models._estimators import (
    BoostingRegressor,
    DenseNetRegressor,
    ForestRegressor,
    LinearModel,
)

rng = np.random.default_rng(0)
X = rng.normal(size=(300, 6))
y = X[:, 0] ** 2 + 2 * X[:, 1] + rng.normal(scale=0.1, size=300)


@pytest.mark.parametrize(
    ("extra", "cls"),
    [(False, RandomForestRegressor), (True, ExtraTreesRegressor)],
    ids=["random-forest", "extra-trees"],
)
def test_exported_forest_predicts_like_sklearn(extra, cls):
    mine = ForestRegressor(n_estimators=20, min_samples_leaf=2, extra=extra).fit(X, y)
    ref = cls(n_estimators=20, max_features=1.0, min_samples_leaf=2, random_state=0).fit(X, y)
    Xt = rng.normal(size=(50, 6))
    np.testing.assert_allclose(mine.predict(Xt), ref.predict(Xt), rtol=1e-12)
    back = ForestRegressor.from_state(*mine.to_state())
    np.testing.assert_array_equal(back.predict(Xt), mine.predict(Xt))


def test_exported_boosting_predicts_like_sklearn():
    from sklearn.ensemble import GradientBoostingRegressor

    mine = BoostingRegressor(n_estimators=30, subsample=0.8).fit(X, y)
    ref = GradientBoostingRegressor(
        n_estimators=30, learning_rate=0.05, subsample=0.8, random_state=0
    ).fit(X, y)
    Xt = rng.normal(size=(50, 6))
    np.testing.assert_allclose(mine.predict(Xt), ref.predict(Xt), rtol=1e-10)
    back = BoostingRegressor.from_state(*mine.to_state())
    np.testing.assert_array_equal(back.predict(Xt), mine.predict(Xt))


@pytest.mark.parametrize(
    ("alpha", "ref"), [(0.0, LinearRegression()), (3.0, None)], ids=["ols", "ridge"]
)
def test_linear_model_matches_sklearn(alpha, ref):
    m = LinearModel(alpha=alpha).fit(X, y)
    if ref is None:
        mu, sd = X.mean(0), X.std(0)
        ref_pred = Ridge(alpha=alpha).fit((X - mu) / sd, y).predict((X - mu) / sd)
    else:
        ref_pred = ref.fit(X, y).predict(X)
    np.testing.assert_allclose(m.predict(X), ref_pred, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(LinearModel.from_state(*m.to_state()).predict(X), m.predict(X))


@pytest.mark.slow
def test_dnn_numpy_forward_equals_keras():
    import tensorflow as tf

    m = DenseNetRegressor(hidden=(8, 4), epochs=3).fit(X, y)
    keras = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(6,)),
            tf.keras.layers.Dense(8, activation="relu"),
            tf.keras.layers.Dense(4, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )
    keras.set_weights([w.astype(np.float32) for w in m.weights_])
    Xs = ((X - m.x_min_) / m.x_scale_).astype(np.float32)
    ref = keras.predict(Xs, verbose=0)[:, 0] * m.y_std_ + m.y_mean_
    np.testing.assert_allclose(m.predict(X), ref, rtol=1e-4, atol=1e-4)
    back = DenseNetRegressor.from_state(*m.to_state())
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    assert back.get_params()["hidden"] == (8, 4)


@pytest.mark.slow
def test_dnn_learns_the_signal():
    m = DenseNetRegressor(epochs=60, random_state=1).fit(X, y)
    assert np.corrcoef(m.predict(X), y)[0, 1] > 0.9


@pytest.mark.parametrize(
    "est",
    [ForestRegressor(), BoostingRegressor(), LinearModel(), DenseNetRegressor()],
    ids=["forest", "boosting", "linear", "dnn"],
)
def test_predict_before_fit_raises(est):
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("n", [10, 1500], ids=["numpy-walk", "compiled-walk"])
def test_flat_trees_sum_equals_sklearn_for_small_and_large_tables(n):
    """Large tables are walked by scikit-learn's compiled trees rebuilt from the flat arrays;
    both paths must give what the original forest gives."""
    from sklearn.ensemble import ExtraTreesRegressor as ET

    from profet_core.models._estimators import ForestRegressor

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(300, 6)), rng.normal(size=300)
    ours = ForestRegressor(n_estimators=15, extra=True, random_state=3).fit(X, y)
    ref = ET(n_estimators=15, random_state=3).fit(X, y)
    Xt = rng.normal(size=(n, 6))
    np.testing.assert_allclose(ours.predict(Xt), ref.predict(Xt), rtol=1e-12, atol=1e-12)
