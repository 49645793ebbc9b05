"""The benchmark zoo and workload grid of PROFET's original data generation.

Model names equal the ``model`` values of the shared data (``AlexNet``, ``CIFAR10_CNN``,
``InceptionResNetV2``, ``LeNet5``, ``MNIST_CNN``, ``MobileNetV2``, ``ResNet18``, ``ResNet50``,
``ResNetSmall``, ``VGG11``, ``VGG16``, ``VGG19``) so that a new instance's rows pair with the
existing instances' rows on ``(model, input_size, batch_size)``; the other architectures of the
original generation (VGGSmall, VGG13, ResNet34, FLOWER_CNN, InceptionV3, Xception,
EfficientNetB0) are here too. Each is layer for layer the original generator's network
(``data_generation/workload/model_info.py`` of github.com/ddps-lab/profet), built with Keras 2
(the ``tf-keras`` package, which is TF 2.5's tf.keras); Keras applications are built with
``weights=None``: nothing is downloaded. Keras is imported only inside the builders. The text
classifiers (``TextLSTM``, ...) are in :mod:`._textzoo`; :func:`zoo_kind` tells the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProfetValueError
from . import _textzoo

INPUT_SIZES = (32, 64, 128, 224, 256)
BATCH_SIZES = (16, 32, 64, 128, 256)
#: Synthetic training and validation images per input size: the original generator's dataset
#: table (``dataset_info.py``; CIFAR-like 50,000/10,000 at 32 px, 5,000/1,000 at 64 and 128 px,
#: ImageNet-like 2,000/500 at 224 and 256 px).
DATASET_IMAGES = {32: 50_000, 64: 5_000, 128: 5_000, 224: 2_000, 256: 2_000}
TEST_IMAGES = {32: 10_000, 64: 1_000, 128: 1_000, 224: 500, 256: 500}
#: Classes of the synthetic labels per input size (CIFAR-10, -100, ImageNet-like).
CLASSES = {32: 10, 64: 100, 128: 100, 224: 1_000, 256: 1_000}
#: Keras applications that refuse smaller inputs.
MIN_INPUT = {"InceptionV3": 75, "InceptionResNetV2": 75, "Xception": 71}
#: ``--quick``: a few architectures of different kinds at small sizes, epochs capped at
#: QUICK_STEPS steps so a T4-class GPU finishes in minutes.
QUICK_MODELS = ("LeNet5", "VGG11", "ResNet18", "MobileNetV2")
QUICK_INPUT_SIZES = (32, 64)
QUICK_BATCH_SIZES = (32, 128)
QUICK_STEPS = 100


@dataclass(frozen=True)
class Workload:
    """One benchmark run: architecture (zoo name or .py path), sizes and repetition label.

    ``input_size`` is the square input side (px) of a CNN and the sequence length (tokens) of a
    text model; ``kind`` says which (``"cnn"``, ``"text"``, or ``""`` for a ``.keras`` file whose
    input decides when it loads).
    """

    model: str
    input_size: int
    batch_size: int
    exp: str = "exp01"
    kind: str = "cnn"

    @property
    def key(self) -> tuple:
        return (self.exp, self.model, self.input_size, self.batch_size)


#: Model kinds: image CNNs (the original zoo) and text models on token sequences.
KINDS = ("cnn", "text")
#: ``profet collect --models`` group names: every zoo model of that kind.
GROUPS = {"cnn": lambda: list(ZOO), "text": lambda: list(_textzoo.TEXT_ZOO)}


def zoo_kind(name: str) -> str | None:
    """``"cnn"`` for a name of the CNN zoo, ``"text"`` for the text zoo's, else None."""
    if name in ZOO:
        return "cnn"
    return "text" if name in _textzoo.TEXT_ZOO else None


def zoo_names() -> list[str]:
    """Every zoo name: the CNNs, then the text models."""
    return [*ZOO, *_textzoo.TEXT_ZOO]


def steps_per_epoch(
    input_size: int, batch_size: int, cap: int | None = None, kind: str = "cnn"
) -> int:
    """Steps of one epoch over the original synthetic data size (at least 2), optionally capped;
    for a text model, over the Reuters-sized token data (:data:`._textzoo.TEXT_TRAIN`)."""
    if kind == "text":
        return _textzoo.text_steps_per_epoch(batch_size, cap)
    images = DATASET_IMAGES.get(int(input_size), 2_000)
    steps = max(2, -(-images // int(batch_size)))
    return max(2, min(steps, cap)) if cap else steps


def classes_for(input_size: int) -> int:
    """Number of classes the original generator used at ``input_size`` (nearest listed size)."""
    size = min(CLASSES, key=lambda s: abs(s - int(input_size)))
    return CLASSES[size]


def workload_grid(models, input_sizes, batch_sizes, repeats: int = 1, kinds=None) -> list[Workload]:
    """Every (repetition, model, input, batch) the zoo can build, repetitions ``exp01``...

    Parameters
    ----------
    models : sequence of str
        Zoo names (or ``.py`` model files, which have no size limits).
    input_sizes, batch_sizes : sequence of int
        Pixels (square, 3 channels) of a CNN or tokens of a text model, and images (sequences)
        per step; all > 0.
    repeats : int
        Repetitions, labelled ``exp01``..``expNN`` like the shared data.
    kinds : sequence of str, optional
        Each model's kind (default: its zoo kind, else ``"cnn"``).

    Returns
    -------
    list of Workload
        Combinations below a model's minimum input size are left out.
    """
    for what, values in (("input size", input_sizes), ("batch size", batch_sizes)):
        bad = [v for v in values if int(v) <= 0]
        if bad:
            raise ProfetValueError(f"{what} {bad[0]} is not allowed; sizes must be integers > 0")
    if int(repeats) <= 0:
        raise ProfetValueError(f"repeats {repeats} is not allowed; it must be >= 1")
    kinds = list(kinds) if kinds is not None else [zoo_kind(m) or "cnn" for m in models]
    return [
        Workload(m, int(i), int(b), f"exp{r + 1:02d}", kind)
        for r in range(int(repeats))
        for m, kind in zip(models, kinds, strict=True)
        for i in input_sizes
        for b in batch_sizes
        if int(i) >= MIN_INPUT.get(m, 1)
    ]


def _keras2():
    """The Keras 2 (``tf-keras``) module the original data was made with (tf.keras of TF 2.5)."""
    import tf_keras

    return tf_keras


def _sequential(layers):
    return _keras2().Sequential(layers)


def _input(input_shape):
    return _keras2().layers.InputLayer(input_shape=tuple(input_shape))


def lenet5(input_shape, classes):
    """Max-pooled LeNet-5: two valid 5x5 convolutions, dense 120-84-classes."""
    L = _keras2().layers
    return _sequential(
        [
            _input(input_shape),
            L.Conv2D(6, 5, activation="relu"),
            L.MaxPooling2D(2, 2),
            L.Conv2D(16, 5, activation="relu"),
            L.MaxPooling2D(2, 2),
            L.Flatten(),
            L.Dense(120, activation="relu"),
            L.Dense(84, activation="relu"),
            L.Dense(classes, activation="softmax"),
        ]
    )


def mnist_cnn(input_shape, classes):
    """Keras' MNIST example: conv 32 / pool / conv 64 / pool, dropout, softmax."""
    L = _keras2().layers
    return _sequential(
        [
            _input(input_shape),
            L.Conv2D(32, 3, activation="relu"),
            L.MaxPooling2D(2),
            L.Conv2D(64, 3, activation="relu"),
            L.MaxPooling2D(2),
            L.Flatten(),
            L.Dropout(0.5),
            L.Dense(classes, activation="softmax"),
        ]
    )


def cifar10_cnn(input_shape, classes):
    """Keras' CIFAR-10 example, activations as separate layers as in the original."""
    L = _keras2().layers
    body = [_input(input_shape)]
    for filters in (32, 64):
        body += [L.Conv2D(filters, 3, padding="same"), L.Activation("relu")]
        body += [L.Conv2D(filters, 3), L.Activation("relu"), L.MaxPooling2D(2), L.Dropout(0.25)]
    body += [L.Flatten(), L.Dense(512), L.Activation("relu"), L.Dropout(0.5)]
    return _sequential([*body, L.Dense(classes), L.Activation("softmax")])


def flower_cnn(input_shape, classes):
    """TensorFlow's flower tutorial CNN (no rescaling layer; the last dense has no softmax)."""
    L = _keras2().layers
    body = [_input(input_shape)]
    for filters in (16, 32, 64):
        body += [L.Conv2D(filters, 3, padding="same", activation="relu"), L.MaxPooling2D()]
    return _sequential([*body, L.Flatten(), L.Dense(128, activation="relu"), L.Dense(classes)])


def alexnet(input_shape, classes):
    """The original's batch-normalised AlexNet (stride-1 11x11 stem, dense 3072-4096)."""
    k = _keras2()
    L = k.layers

    def bn_relu():
        return [L.BatchNormalization(), L.Activation("relu")]

    stem = L.Conv2D(96, 11, padding="same", kernel_regularizer=k.regularizers.l2(0.0))
    body = [_input(input_shape), stem, *bn_relu(), L.MaxPooling2D(2)]
    body += [L.Conv2D(256, 5, padding="same"), *bn_relu(), L.MaxPooling2D(2)]
    for filters, pool in ((512, True), (1024, False), (1024, True)):
        body += [L.ZeroPadding2D(1), L.Conv2D(filters, 3, padding="same"), *bn_relu()]
        body += [L.MaxPooling2D(2)] if pool else []
    body += [L.Flatten()]
    for units in (3072, 4096):
        body += [L.Dense(units), *bn_relu(), L.Dropout(0.5)]
    return _sequential([*body, L.Dense(classes), L.BatchNormalization(), L.Activation("softmax")])


#: Convolution widths per block (3x3, same padding, ReLU; 2x2 max pool after each block) and
#: the hidden dense widths of the original's VGGs.
VGG_CONFIGS = {
    "VGGSmall": (((32, 32), (64, 64), (128, 128)), 1024),
    "VGG11": (((64,), (128,), (256,) * 2, (512,) * 2, (512,) * 2), 4096),
    "VGG13": (((64,) * 2, (128,) * 2, (256,) * 2, (512,) * 2, (512,) * 2), 4096),
    "VGG16": (((64,) * 2, (128,) * 2, (256,) * 3, (512,) * 3, (512,) * 3), 4096),
    "VGG19": (((64,) * 2, (128,) * 2, (256,) * 4, (512,) * 4, (512,) * 4), 4096),
}


def vgg(name):
    def build(input_shape, classes):
        L = _keras2().layers
        blocks, hidden = VGG_CONFIGS[name]
        body = [_input(input_shape)]
        for block in blocks:
            body += [L.Conv2D(f, 3, padding="same", activation="relu") for f in block]
            body += [L.MaxPooling2D(2, 2)]
        body += [L.Flatten(), L.Dense(hidden, activation="relu")]
        body += [L.Dense(hidden, activation="relu"), L.Dense(classes, activation="softmax")]
        return _sequential(body)

    return build


def resnet_small(input_shape, classes):
    """The original's small ResNet: 7x7 stem, four blocks of 1x1 convolutions, GAP head."""
    import tensorflow as tf

    k = _keras2()
    L = k.layers

    def block(x, filters, stride):
        short = x
        if stride != 1:
            short = L.BatchNormalization()(L.Conv2D(filters, 1, strides=stride)(x))
        x = L.Conv2D(filters, 1, strides=stride, padding="same")(x)
        x = tf.nn.relu(L.BatchNormalization()(x))
        x = L.BatchNormalization()(L.Conv2D(filters, 1, padding="same")(x))
        return tf.nn.relu(L.add([short, x]))

    inputs = k.Input(shape=tuple(input_shape))
    x = L.Conv2D(64, 7, strides=2, activation="relu", padding="same")(inputs)
    x = L.MaxPooling2D(3, 2, padding="same")(L.BatchNormalization()(x))
    for filters, stride in ((64, 2), (64, 1), (128, 2), (128, 1)):
        x = block(x, filters, stride)
    x = L.GlobalAveragePooling2D()(x)
    return k.Model(inputs, L.Dense(classes, activation="softmax")(x))


#: Blocks per stage (filters 64, 128, 256, 512) and block kind of the original's ResNets.
RESNET_STAGES = {
    "ResNet18": ((2, 2, 2, 2), "basic"),
    "ResNet34": ((3, 4, 6, 3), "basic"),
    "ResNet50": ((3, 4, 6, 3), "bottleneck"),
}


def _resnet_layers():
    """Conv (he_normal, L2 1e-4, same) and BN-ReLU helpers of the pre-activation ResNets."""
    k = _keras2()
    L = k.layers

    def conv(x, filters, size, stride=1, padding="same"):
        reg = k.regularizers.l2(1e-4)
        return L.Conv2D(
            filters, size, strides=stride, padding=padding,
            kernel_initializer="he_normal", kernel_regularizer=reg,
        )(x)  # fmt: skip

    def bn_relu(x):
        return L.Activation("relu")(L.BatchNormalization(axis=3)(x))

    return L, conv, bn_relu


def _residual_unit(x, filters, stride, kind, first):
    """One pre-activation unit (He et al. 2016): [BN-ReLU-]conv ..., plus a shortcut."""
    L, conv, bn_relu = _resnet_layers()
    sizes = ((3, filters), (3, filters)) if kind == "basic" else ((1, filters), (3, filters))
    sizes += () if kind == "basic" else ((1, filters * 4),)
    y = x
    for i, (size, width) in enumerate(sizes):
        # The first unit of the first stage follows the stem's BN-ReLU-pool: no BN-ReLU again.
        y = conv(y if (first and i == 0) else bn_relu(y), width, size, stride if i == 0 else 1)
    short = x
    if stride > 1 or x.shape[-1] != y.shape[-1]:
        short = conv(x, y.shape[-1], 1, stride, padding="valid")
    return L.add([short, y])


def resnet(name):
    def build(input_shape, classes):
        k = _keras2()
        L, conv, bn_relu = _resnet_layers()
        repeats, kind = RESNET_STAGES[name]
        inputs = k.Input(shape=tuple(input_shape))
        x = bn_relu(conv(inputs, 64, 7, 2))
        x = L.MaxPooling2D(3, 2, padding="same")(x)
        for stage, n in enumerate(repeats):
            for i in range(n):
                stride = 2 if stage and not i else 1
                x = _residual_unit(x, 64 * 2**stage, stride, kind, stage == 0 and i == 0)
        x = bn_relu(x)
        x = L.Flatten()(L.AveragePooling2D(tuple(x.shape[1:3]), strides=1)(x))
        out = L.Dense(classes, kernel_initializer="he_normal", activation="softmax")(x)
        return k.Model(inputs, out)

    return build


def application(name):
    def build(input_shape, classes):
        cls = getattr(_keras2().applications, name)
        return cls(weights=None, input_shape=tuple(input_shape), classes=classes)

    return build


ZOO = {
    "LeNet5": lenet5,
    "MNIST_CNN": mnist_cnn,
    "CIFAR10_CNN": cifar10_cnn,
    "FLOWER_CNN": flower_cnn,
    "AlexNet": alexnet,
    **{name: vgg(name) for name in VGG_CONFIGS},
    "ResNetSmall": resnet_small,
    **{name: resnet(name) for name in RESNET_STAGES},
    **{
        name: application(name)
        for name in (
            "InceptionV3",
            "InceptionResNetV2",
            "Xception",
            "EfficientNetB0",
            "MobileNetV2",
        )
    },
}


def build_zoo_model(name: str, input_size: int, classes: int):
    """Build zoo architecture ``name`` for square RGB ``input_size`` px images and ``classes``."""
    if name not in ZOO:
        raise ProfetValueError(f"unknown zoo model {name!r}; known: {sorted(ZOO)}")
    if int(input_size) < MIN_INPUT.get(name, 1):
        raise ProfetValueError(f"{name} needs input size >= {MIN_INPUT[name]} px; got {input_size}")
    return ZOO[name]((int(input_size), int(input_size), 3), int(classes))
