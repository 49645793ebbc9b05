"""Markers for the capture tests: TensorFlow/xprof are optional (the `capture` extra)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
requires_tf = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None
    or importlib.util.find_spec("xprof") is None
    or importlib.util.find_spec("tensorboard") is None
    or importlib.util.find_spec("tf_keras") is None,
    reason="tensorflow, tensorboard, xprof and tf-keras are needed (pip install 'profet[capture]')",
)
requires_xprof = pytest.mark.skipif(
    importlib.util.find_spec("xprof") is None, reason="xprof is needed to convert traces"
)

TINY_MODEL = """
import keras


def build_model(input_shape, classes):
    return keras.Sequential([
        keras.Input(shape=input_shape),
        keras.layers.Conv2D(4, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(classes, activation="softmax"),
    ])
"""
