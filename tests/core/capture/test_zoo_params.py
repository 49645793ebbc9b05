"""The zoo is the original generator's networks: parameter and layer counts match them.

The expected counts were worked out from the original definitions
(``data_generation/workload/model_info.py`` of github.com/ddps-lab/profet, run with Keras 2)
and, for the Keras applications, agree with Keras' published counts (e.g. MobileNetV2 without
its top: 2,257,984 parameters, plus 1280 x 10 + 10 for the 10-class head).
"""

from __future__ import annotations

from collections import Counter

import pytest

from profet_core.capture import _textzoo, _zoo
from tests.core.capture._utils import requires_tf

pytestmark = [requires_tf, pytest.mark.slow]  # TensorFlow builds 20 networks

# name: (input px, classes, parameters, {layer class: count} or None for the applications)
ORIGINAL = {
    "LeNet5": (32, 10, 62_006, {"Conv2D": 2, "MaxPooling2D": 2, "Flatten": 1, "Dense": 3}),
    "MNIST_CNN": (32, 10, 42_442, {"Conv2D": 2, "MaxPooling2D": 2, "Dropout": 1, "Dense": 1}),
    "CIFAR10_CNN": (32, 10, 1_250_858, {"Conv2D": 4, "Activation": 6, "Dropout": 3, "Dense": 2}),
    "FLOWER_CNN": (32, 10, 156_074, {"Conv2D": 3, "MaxPooling2D": 3, "Dense": 2}),
    "AlexNet": (32, 10, 78_990_642, {"BatchNormalization": 8, "ZeroPadding2D": 3, "Dense": 3}),
    "VGGSmall": (32, 10, 3_445_034, {"Conv2D": 6, "MaxPooling2D": 3, "Dense": 3}),
    "VGG11": (32, 10, 28_144_010, {"Conv2D": 8, "MaxPooling2D": 5, "Dense": 3}),
    "VGG13": (32, 10, 28_328_522, {"Conv2D": 10, "MaxPooling2D": 5, "Dense": 3}),
    "VGG16": (32, 10, 33_638_218, {"Conv2D": 13, "MaxPooling2D": 5, "Dense": 3}),
    "VGG19": (32, 10, 38_947_914, {"Conv2D": 16, "MaxPooling2D": 5, "Dense": 3}),
    "ResNetSmall": (
        32, 10, 101_834, {"Conv2D": 11, "BatchNormalization": 11, "TFOpLambda": 8, "Add": 4},
    ),
    "ResNet18": (
        32, 10, 11_192_458,
        {"Conv2D": 20, "BatchNormalization": 17, "Activation": 17, "Add": 8, "AveragePooling2D": 1},
    ),
    "ResNet34": (
        32, 10, 21_311_754, {"Conv2D": 36, "BatchNormalization": 33, "Activation": 33, "Add": 16},
    ),
    "ResNet50": (
        32, 10, 23_592_842, {"Conv2D": 53, "BatchNormalization": 49, "Activation": 49, "Add": 16},
    ),
    "MobileNetV2": (32, 10, 2_270_794, None),
    "EfficientNetB0": (32, 10, 4_062_381, None),
    "InceptionV3": (128, 100, 22_007_684, None),
    "InceptionResNetV2": (128, 100, 54_490_436, None),
    "Xception": (128, 100, 21_066_380, None),
}  # fmt: skip
# At 128 px / 100 classes too, where the heads' sizes depend on the input (ResNet's final
# average pool spans the whole feature map; VGG's flatten grows with the input).
ORIGINAL_128 = {"LeNet5": 1_636_376, "VGG11": 59_970_020, "ResNet18": 11_238_628}


def test_every_zoo_name_has_an_original_count():
    assert set(ORIGINAL) == set(_zoo.ZOO)


@pytest.mark.parametrize("name", sorted(ORIGINAL), ids=sorted(ORIGINAL))
def test_zoo_model_is_the_originals(name):
    size, classes, params, layers = ORIGINAL[name]
    model = _zoo.build_zoo_model(name, size, classes)
    assert model.count_params() == params
    assert type(model).__module__.startswith("tf_keras")  # Keras 2, as the data was made
    if layers:
        got = Counter(type(layer).__name__ for layer in model.layers)
        assert {k: got[k] for k in layers} == layers


@pytest.mark.parametrize("name", sorted(ORIGINAL_128), ids=sorted(ORIGINAL_128))
def test_zoo_model_at_128_px(name):
    assert _zoo.build_zoo_model(name, 128, 100).count_params() == ORIGINAL_128[name]


# The text zoo at its defaults (200 tokens, 10,000 words, Reuters' 46 classes), worked out by
# hand: embedding 10,000 x 128 = 1,280,000 and head 128 x 46 + 46 = 5,934, plus an RNN's
# 128 x 128 x 2 + 128, an LSTM's 4 x that, a GRU's 3 x (128 x 128 x 2 + 2 x 128), two 64-unit
# LSTMs (4 x (128 x 64 + 64 x 64 + 64) each); the Transformer: 10,000 x 64 + 200 x 64 embeddings,
# per layer attention 3 x (64 x 64 + 64) + 64 x 64 + 64, two layer norms 2 x 128, feed-forward
# 64 x 128 + 128 + 128 x 64 + 64, and the head 64 x 46 + 46.
TEXT = {
    "TextRNN": (1_318_830, {"Embedding": 1, "SimpleRNN": 1, "Dense": 1}),
    "TextLSTM": (1_417_518, {"Embedding": 1, "LSTM": 1, "Dense": 1}),
    "TextLSTMDropout": (1_417_518, {"Embedding": 1, "LSTM": 1, "Dense": 1}),
    "TextGRU": (1_385_006, {"Embedding": 1, "GRU": 1, "Dense": 1}),
    "TextBiLSTM": (1_384_750, {"Embedding": 1, "Bidirectional": 1, "Dense": 1}),
    "TextTransformer": (722_734, {"MultiHeadAttention": 2, "LayerNormalization": 4, "Dense": 5}),
}


def test_every_text_zoo_name_has_a_count():
    assert set(TEXT) == set(_textzoo.TEXT_ZOO)


@pytest.mark.parametrize("name", sorted(TEXT), ids=sorted(TEXT))
def test_text_zoo_model(name):
    params, layers = TEXT[name]
    model = _textzoo.build_text_model(name, _textzoo.SEQ_LEN, _textzoo.TEXT_CLASSES)
    assert model.count_params() == params
    assert type(model).__module__.startswith("tf_keras") and model.input_shape == (None, 200)
    got = Counter(type(layer).__name__ for layer in model.layers)
    assert {k: got[k] for k in layers} == layers
    # cuDNN-eligible recurrent layers, except the one whose recurrent dropout keeps it off cuDNN
    rnn = [layer for layer in model.layers if type(layer).__name__ in ("LSTM", "GRU")]
    for layer in rnn:
        assert (layer.recurrent_dropout > 0) == (name == "TextLSTMDropout")
