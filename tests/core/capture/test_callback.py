"""``ProfetProfiler`` refuses XLA and mixed precision, and records what else differs; a Keras 3
model is rebuilt under Keras 2, or profiled as it is with its differences recorded."""

from __future__ import annotations

import json

import numpy as np
import pytest

from profet_core.errors import ProfetValueError
from tests.core.capture._utils import TINY_MODEL, requires_tf

pytestmark = requires_tf


def _data():
    x = np.random.default_rng(0).random((48, 16, 16, 3), dtype="float32")
    return x, np.eye(3, dtype="float32")[np.arange(48) % 3]


def _keras3_model(**layer_kw):
    import keras

    return keras.Sequential(
        [
            keras.Input(shape=(16, 16, 3)),
            keras.layers.Conv2D(4, 3, activation="relu"),
            keras.layers.Flatten(),
            keras.layers.Dense(3, activation="softmax", **layer_kw),
        ]
    )


def _fit(model, **kw):
    from profet_core.capture import ProfetProfiler

    cb = ProfetProfiler(batch_size=8, input_size=16, **kw)
    model.fit(*_data(), batch_size=8, epochs=2, callbacks=[cb], verbose=0)
    return cb


@pytest.mark.parametrize(
    "layer_kw, compile_kw, match",
    [
        ({}, {"jit_compile": True}, r"XLA \(jit_compile=True\).*compile with jit_compile=False"),
        ({"dtype": "mixed_float16"}, {}, "dtype policy 'mixed_float16'.*FP32"),
    ],
    ids=["xla", "mixed-precision"],
)
def test_refuses_xla_and_mixed_precision_in_one_line(layer_kw, compile_kw, match):
    model = _keras3_model(**layer_kw)
    model.compile(optimizer="sgd", loss="categorical_crossentropy", **compile_kw)
    with pytest.raises(ProfetValueError, match=match) as err:
        _fit(model)
    assert "\n" not in str(err.value)


def test_keras3_model_is_profiled_and_its_differences_recorded(tmp_path):
    from profet_core import read_profile

    model = _keras3_model()
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    with pytest.warns(UserWarning, match="Keras 3 .* instead of Keras 2"):
        cb = _fit(model, out=tmp_path / "k3.json")
    conv = cb.meta.convention
    assert conv["convention"] == "non-conformant" and conv["keras"].endswith("(Keras 3)")
    assert any("optimizer Adam" in d for d in conv["differs"])
    # The profile file carries it, for predict's warning (see tests/core/inputs/test_convention.py).
    profile = read_profile(tmp_path / "k3.json")
    assert "optimizer Adam" in profile["convention_differs"].iloc[0]


def test_keras2_model_in_the_convention_is_conformant(recwarn):
    import tf_keras

    from profet_core.capture._keras2 import to_keras2

    ns = {}
    exec(TINY_MODEL, ns)
    keras3 = ns["build_model"]((16, 16, 3), 3)
    model = to_keras2(keras3)  # rebuilt from the Keras 3 config
    assert isinstance(model, tf_keras.Model) and model.count_params() == keras3.count_params()
    sgd = tf_keras.optimizers.legacy.SGD()
    model.compile(optimizer=sgd, loss="categorical_crossentropy", metrics=["accuracy"])
    cb = _fit(model)
    assert cb.meta.convention["convention"] == "profet-2021" and not cb.meta.convention["differs"]
    assert not [w for w in recwarn if "ProfetProfiler" in str(w.message)]
    assert cb.profile["Host_ResourceApplyGradientDescent"].iloc[0] > 0


def test_profile_model_runs_a_keras3_model_keras2_cannot_build_and_says_so(tmp_path):
    import keras

    from profet_core.capture import profile_model, write_profile
    from profet_core.capture._keras2 import to_keras2

    model = _keras3_model()
    odd = keras.Sequential([keras.Input(shape=(16, 16, 3)), keras.layers.Lambda(lambda t: t * 2)])
    model = keras.Sequential([odd, *model.layers])  # a Lambda: Keras 2 cannot rebuild it
    assert to_keras2(model) is None
    with pytest.warns(UserWarning, match="Keras 3"):
        profile, meta = profile_model(model, 8, 16, steps_per_epoch=2, latency_steps=1)
    assert meta.convention["convention"] == "non-conformant" and meta.convention["xla"] is False
    path, _ = write_profile(profile, meta, tmp_path / "p.json")
    assert "Keras 3" in json.loads(path.read_text())["convention_differs"]


def test_a_saved_keras3_file_is_profiled_under_keras2(tmp_path):
    import tf_keras

    from profet_core.capture._profile import load_model

    path = tmp_path / "m.keras"
    _keras3_model().save(path)
    model = load_model(str(path), 16, 3)
    assert (
        isinstance(model, tf_keras.Model) and model.count_params() == 4 * 28 + 3 * 14 * 14 * 4 + 3
    )
