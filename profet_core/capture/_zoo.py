"""The benchmark zoo and workload grid of PROFET's original data generation.

Model names equal the ``model`` values of the shared data (``AlexNet``, ``CIFAR10_CNN``,
``InceptionResNetV2``, ``LeNet5``, ``MNIST_CNN``, ``MobileNetV2``, ``ResNet18``, ``ResNet50``,
``ResNetSmall``, ``VGG11``, ``VGG16``, ``VGG19``) so that a new instance's rows pair with the
existing instances' rows on ``(model, input_size, batch_size)``; the other architectures of the
original generation (VGGSmall, VGG13, ResNet34, FLOWER_CNN, InceptionV3, Xception,
EfficientNetB0) are here too. Keras applications are built with ``weights=None``: nothing is
downloaded. Keras is imported only inside the builders.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProfetValueError

INPUT_SIZES = (32, 64, 128, 224, 256)
BATCH_SIZES = (16, 32, 64, 128, 256)
#: Synthetic training images per epoch for each input size. 32 and 224/256 px follow the
#: original generator's dataset table (CIFAR-like 50,000; ImageNet-like 2,000); 64 and 128 px use
#: 5,000, which is what the shared data's epoch/step latency ratios show (median 5,340-5,400
#: images per epoch), not the generator table's 15,000/40,000.
DATASET_IMAGES = {32: 50_000, 64: 5_000, 128: 5_000, 224: 2_000, 256: 2_000}
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
    """One benchmark run: architecture (zoo name or .py path), sizes and repetition label."""

    model: str
    input_size: int
    batch_size: int
    exp: str = "exp01"

    @property
    def key(self) -> tuple:
        return (self.exp, self.model, self.input_size, self.batch_size)


def steps_per_epoch(input_size: int, batch_size: int, cap: int | None = None) -> int:
    """Steps of one epoch over the original synthetic data size (at least 2), optionally capped."""
    images = DATASET_IMAGES.get(int(input_size), 2_000)
    steps = max(2, -(-images // int(batch_size)))
    return max(2, min(steps, cap)) if cap else steps


def classes_for(input_size: int) -> int:
    """Number of classes the original generator used at ``input_size`` (nearest listed size)."""
    size = min(CLASSES, key=lambda s: abs(s - int(input_size)))
    return CLASSES[size]


def workload_grid(models, input_sizes, batch_sizes, repeats: int = 1) -> list[Workload]:
    """Every (repetition, model, input, batch) the zoo can build, repetitions ``exp01``...

    Parameters
    ----------
    models : sequence of str
        Zoo names (or ``.py`` model files, which have no size limits).
    input_sizes, batch_sizes : sequence of int
        Pixels (square, 3 channels) and images per step; all > 0.
    repeats : int
        Repetitions, labelled ``exp01``..``expNN`` like the shared data.

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
    return [
        Workload(m, int(i), int(b), f"exp{r + 1:02d}")
        for r in range(int(repeats))
        for m in models
        for i in input_sizes
        for b in batch_sizes
        if int(i) >= MIN_INPUT.get(m, 1)
    ]


def _sequential(input_shape, layers):
    import keras

    return keras.Sequential([keras.Input(shape=input_shape), *layers])


def _head(classes, hidden=(), dropout=0.0):
    from keras import layers as L

    out = [L.Flatten()]
    for units in hidden:
        out.append(L.Dense(units, activation="relu"))
        if dropout:
            out.append(L.Dropout(dropout))
    return [*out, L.Dense(classes, activation="softmax")]


def lenet5(input_shape, classes):
    from keras import layers as L

    body = [L.Conv2D(6, 5, activation="relu"), L.AveragePooling2D(2, padding="same")]
    body += [L.Conv2D(16, 5, activation="relu", padding="same"), L.AveragePooling2D(2)]
    return _sequential(input_shape, body + _head(classes, (120, 84)))


def mnist_cnn(input_shape, classes):
    from keras import layers as L

    body = [L.Conv2D(32, 3, activation="relu"), L.Conv2D(64, 3, activation="relu")]
    body += [L.MaxPooling2D(2), L.Dropout(0.25)]
    return _sequential(input_shape, body + _head(classes, (128,), 0.5))


def cifar10_cnn(input_shape, classes):
    from keras import layers as L

    body = []
    for filters in (32, 64):
        body += [L.Conv2D(filters, 3, padding="same", activation="relu")]
        body += [L.Conv2D(filters, 3, activation="relu"), L.MaxPooling2D(2), L.Dropout(0.25)]
    return _sequential(input_shape, body + _head(classes, (512,), 0.5))


def flower_cnn(input_shape, classes):
    from keras import layers as L

    body = [L.Rescaling(1.0 / 255)]
    for filters in (16, 32, 64):
        body += [L.Conv2D(filters, 3, padding="same", activation="relu"), L.MaxPooling2D(2)]
    return _sequential(input_shape, body + _head(classes, (128,)))


def alexnet(input_shape, classes):
    from keras import layers as L

    body = [L.Conv2D(96, 11, strides=4, padding="same", activation="relu")]
    body += [L.MaxPooling2D(3, 2, padding="same")]
    body += [L.Conv2D(256, 5, padding="same", activation="relu")]
    body += [L.MaxPooling2D(3, 2, padding="same")]
    body += [L.Conv2D(f, 3, padding="same", activation="relu") for f in (384, 384, 256)]
    body += [L.MaxPooling2D(3, 2, padding="same")]
    return _sequential(input_shape, body + _head(classes, (4096, 4096), 0.5))


VGG_CONFIGS = {
    "VGGSmall": ((32, 32), (64, 64)),
    "VGG11": ((64,), (128,), (256, 256), (512, 512), (512, 512)),
    "VGG13": ((64, 64), (128, 128), (256, 256), (512, 512), (512, 512)),
    "VGG16": ((64, 64), (128, 128), (256,) * 3, (512,) * 3, (512,) * 3),
    "VGG19": ((64, 64), (128, 128), (256,) * 4, (512,) * 4, (512,) * 4),
}


def vgg(name):
    def build(input_shape, classes):
        from keras import layers as L

        body = []
        for block in VGG_CONFIGS[name]:
            body += [L.Conv2D(f, 3, padding="same", activation="relu") for f in block]
            body += [L.MaxPooling2D(2, padding="same")]
        hidden = (512,) if name == "VGGSmall" else (4096, 4096)
        return _sequential(input_shape, body + _head(classes, hidden))

    return build


def _basic_block(x, filters, stride):
    from keras import layers as L

    shortcut = x
    y = L.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    y = L.Activation("relu")(L.BatchNormalization()(y))
    y = L.BatchNormalization()(L.Conv2D(filters, 3, padding="same", use_bias=False)(y))
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = L.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
        shortcut = L.BatchNormalization()(shortcut)
    return L.Activation("relu")(L.Add()([y, shortcut]))


RESNET_BLOCKS = {
    "ResNetSmall": ((16, 1), (32, 1), (64, 1)),
    "ResNet18": ((64, 2), (128, 2), (256, 2), (512, 2)),
    "ResNet34": ((64, 3), (128, 4), (256, 6), (512, 3)),
}


def resnet(name):
    def build(input_shape, classes):
        import keras
        from keras import layers as L

        inputs = keras.Input(shape=input_shape)
        small = name == "ResNetSmall"
        x = L.Conv2D(16 if small else 64, 3 if small else 7, strides=1 if small else 2)(inputs)
        x = L.Activation("relu")(L.BatchNormalization()(x))
        if not small:
            x = L.MaxPooling2D(3, 2, padding="same")(x)
        for stage, (filters, blocks) in enumerate(RESNET_BLOCKS[name]):
            for b in range(blocks):
                x = _basic_block(x, filters, 2 if stage and not b else 1)
        x = L.GlobalAveragePooling2D()(x)
        return keras.Model(inputs, L.Dense(classes, activation="softmax")(x), name=name)

    return build


def application(name):
    def build(input_shape, classes):
        import keras

        cls = getattr(keras.applications, name)
        return cls(weights=None, input_shape=tuple(input_shape), classes=classes)

    return build


ZOO = {
    "LeNet5": lenet5,
    "MNIST_CNN": mnist_cnn,
    "CIFAR10_CNN": cifar10_cnn,
    "FLOWER_CNN": flower_cnn,
    "AlexNet": alexnet,
    **{name: vgg(name) for name in VGG_CONFIGS},
    **{name: resnet(name) for name in RESNET_BLOCKS},
    **{
        name: application(name)
        for name in (
            "ResNet50",
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
