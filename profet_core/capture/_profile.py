"""Profile a Keras model the way PROFET's training data was made (TensorFlow imported lazily).

The original generator's convention (``profet_core.inputs._convention``), on today's TensorFlow through
``tf-keras`` (Keras 2): ``compile(optimizer=legacy SGD, loss=categorical_crossentropy,
metrics=["accuracy"], jit_compile=False)`` in FP32, ``fit`` on numpy arrays of the original
dataset sizes with validation data, TensorBoard with ``histogram_freq=1`` tracing two consecutive
steps at 1.5 epochs (``profile_batch=(N, N + 1)``), so the op totals cover two steps; the batch
latency is the median step time of a separate, unprofiled run after warm-up.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import ProfetError, ProfetValueError
from ..inputs._outputs import write_atomic
from . import _textzoo, _zoo
from ._check import OPTIMIZERS, check_capture_args, check_optimizer, check_warmup_steps
from ._load import check_input, kind_hint, load_model, model_kind_of, token_range
from ._outfile import check_profile_out, meta_path_of, profile_document

STEPS_TRACED = 2
WARMUP_STEPS = 5


@dataclass(frozen=True)
class ProfileMeta:
    """What a profile was taken on and how (JSON-ready; times in seconds)."""

    model: str
    batch_size: int
    input_size: int
    classes: int
    steps_per_epoch: int
    traced_steps: tuple
    steps_traced: int
    batch_latency_s: float
    latency_steps: int
    epoch_latency_s: float
    instance: str | None
    gpu_name: str | None
    gpu_memory_bytes: int | None
    tensorflow_version: str
    keras_version: str
    profiler_version: str
    convention: dict = field(default_factory=dict)
    #: ``"cnn"`` (``input_size`` is the square image side, px) or ``"text"`` (``input_size`` is
    #: the sequence length, tokens, also in ``seq_len``; ``vocab_size`` the token range).
    model_kind: str = "cnn"
    seq_len: int | None = None
    vocab_size: int | None = None

    def to_dict(self) -> dict:
        """Plain dict (tuples become lists) for JSON."""
        out = asdict(self)
        out["traced_steps"] = list(self.traced_steps)
        return out


def traced_steps(steps_per_epoch: int) -> tuple[int, int]:
    """Global 1-based steps ``(N, N + 1)`` in the middle of epoch 2 (Keras counts across epochs)."""
    if steps_per_epoch < 2:
        raise ProfetValueError(f"steps per epoch {steps_per_epoch} is too few; needs >= 2")
    n = steps_per_epoch + steps_per_epoch // 2
    return n, n + 1


def synthetic_arrays(n: int, input_size: int, classes: int, seed: int = 0):
    """``n`` random images (float32, shape (n, px, px, 3)) and one-hot labels, as numpy arrays
    (the original generator's synthetic data)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.random((int(n), int(input_size), int(input_size), 3), dtype=np.float32)
    y = np.zeros((int(n), int(classes)), dtype=np.float32)  # np.eye(classes): classes^2 floats
    y[np.arange(int(n)), rng.integers(0, classes, int(n))] = 1.0
    return x, y


def dataset_sizes(
    input_size: int, batch_size: int, steps_per_epoch: int, kind: str = "cnn"
) -> tuple[int, int]:
    """Training and validation images: the original's (``_zoo.DATASET_IMAGES``/``TEST_IMAGES``),
    or, for fewer steps per epoch, that many batches and validation in the same proportion; a
    text model's sequences: Reuters' (``_textzoo.TEXT_TRAIN``/``TEXT_TEST``), likewise."""
    if kind == "text":
        train, test = _textzoo.TEXT_TRAIN, _textzoo.TEXT_TEST
    else:
        size = min(_zoo.DATASET_IMAGES, key=lambda s: abs(s - int(input_size)))
        train, test = _zoo.DATASET_IMAGES[size], _zoo.TEST_IMAGES[size]
    n = min(train, steps_per_epoch * batch_size)
    return n, max(batch_size, test * n // train)


def device_info() -> tuple[str | None, int | None]:
    """GPU name and memory limit (bytes) as TensorFlow reports them; (None, None) on a CPU."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return None, None
    name = tf.config.experimental.get_device_details(gpus[0]).get("device_name")
    from tensorflow.python.client import device_lib  # the only API reporting the memory limit

    memory = next(
        (d.memory_limit for d in device_lib.list_local_devices() if d.device_type == "GPU"), None
    )
    return name, None if memory is None else int(memory)


#: :func:`profile_model`'s options that ``profet profile`` and the collect worker pass through
#: under the same names (their argparse destinations).
PROFILE_OPTIONS = (
    "classes",
    "steps_per_epoch",
    "latency_steps",
    "instance",
    "model_kind",
    "vocab_size",
    "optimizer",
)


def profile_model(
    model,
    batch_size: int,
    input_size: int,
    classes: int | None = None,
    steps_per_epoch: int | None = None,
    latency_steps: int = 50,
    instance: str | None = None,
    logdir: str | Path | None = None,
    model_kind: str | None = None,
    vocab_size: int | None = None,
    optimizer: str | None = None,
    warmup_steps: int = WARMUP_STEPS,
) -> tuple[pd.DataFrame, ProfileMeta]:
    """Profile training of ``model`` in PROFET's convention.

    Parameters
    ----------
    model : keras.Model or str
        A model, or a spec for :func:`load_model`. It is (re)compiled in the convention (legacy
        SGD, categorical cross-entropy, accuracy metric, ``jit_compile=False``). A Keras 3 model
        is rebuilt under Keras 2 where its layers allow it; else it runs as it is and
        ``meta.convention["differs"]`` says what differs (a warning too).
    batch_size, input_size : int
        Images (sequences) per step (> 0) and square input size in px, or a text model's
        sequence length in tokens.
    classes : int, optional
        Label classes; default the model's output width, else the original data's per size
        (a text model: Reuters' 46).
    steps_per_epoch : int, optional
        Default: the original synthetic data size / batch size (see ``_zoo.DATASET_IMAGES``;
        text: ``_textzoo.TEXT_TRAIN``); fewer make the numpy arrays that many batches
        (validation in proportion).
    latency_steps : int
        Steps timed in the unprofiled latency run, after ``warmup_steps`` untimed ones (default
        :data:`WARMUP_STEPS`; 0..10,000).
    instance : str, optional
        Name recorded in the metadata.
    logdir : path-like, optional
        Where the trace goes (default: a temporary folder, removed afterwards).
    model_kind : {"cnn", "text"}, optional
        Default: a zoo name's kind, ``"cnn"`` for a ``.py`` file, else what the model's input
        is (:func:`model_kind_of`).
    vocab_size : int, optional
        A text model's token range (default: its smallest embedding; a text-zoo model is built
        with ``_textzoo.VOCAB_SIZE`` words).
    optimizer : {"sgd", "adadelta", "adam"}, optional
        Default ``"sgd"`` (the convention); another is recorded in ``convention["differs"]``.

    Returns
    -------
    profile : pandas.DataFrame
        Shape (1, n_ops): ``Host_<Type>``/``Device_<Type>`` total microseconds over 2 steps.
    meta : ProfileMeta
    """
    if logdir is None:
        with tempfile.TemporaryDirectory(prefix="profet-trace-") as tmp:
            return profile_model(
                model, batch_size, input_size, classes, steps_per_epoch, latency_steps,
                instance, tmp, model_kind, vocab_size, optimizer, warmup_steps,
            )  # fmt: skip
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    check_optimizer(optimizer)
    check_warmup_steps(warmup_steps)
    optimizer = optimizer or "sgd"
    setup = _setup(model, batch_size, input_size, classes, steps_per_epoch, latency_steps,
                   model_kind, vocab_size)  # fmt: skip
    from ._keras2 import check_model, is_keras2, keras3_differences, to_keras2

    model = to_keras2(setup.model) or setup.model
    check_model(model, xla=False)  # recompiled below with jit_compile=False
    differs = _compile(model, optimizer)
    n_train, n_test = dataset_sizes(input_size, batch_size, setup.steps_per_epoch, setup.kind)
    spe = -(-n_train // batch_size)
    first, last = traced_steps(spe)
    data = _data_maker(setup, input_size)
    profile, timer, latency = _run(model, (n_train, n_test), batch_size, data, (first, last),
                                   (warmup_steps, latency_steps), logdir)  # fmt: skip
    text = setup.kind == "text"
    meta = _meta(
        model=setup.name,
        batch_size=batch_size,
        input_size=input_size,
        classes=setup.classes,
        steps_per_epoch=spe,
        traced_steps=(first, last),
        batch_latency_s=latency.median_step(warmup_steps),
        latency_steps=latency_steps,
        epoch_latency_s=float(timer.epochs[0]),
        instance=instance,
        keras_model=model,
        differs=differs,
        model_kind=setup.kind,
        seq_len=int(input_size) if text else None,
        vocab_size=setup.tokens,
    )
    if not is_keras2(model):
        warnings.warn("; ".join(keras3_differences(model)), stacklevel=2)
    return profile, meta


@dataclass(frozen=True)
class _Setup:
    """What :func:`profile_model` trains: the model and its workload's resolved defaults."""

    model: object
    name: str
    kind: str
    classes: int
    steps_per_epoch: int
    tokens: int | None  # a text model's token range; None for a CNN


def _setup(model, batch_size, input_size, classes, spe, latency_steps, model_kind, vocab_size):
    """Resolve kind, classes and steps, check the workload (before building a zoo or ``.py``
    model), then build or load the model."""
    given = not isinstance(model, str)
    name = model.name if given else model
    kind = model_kind or (model_kind_of(model) if given else kind_hint(model))
    if kind is None:  # a .keras file: loaded first, its input says what it is
        model = load_model(model, input_size, classes or 2, None, vocab_size)
        kind, given = model_kind_of(model), True
    if classes is None and given:
        classes = int(model.output_shape[-1])
    classes = classes or (_textzoo.TEXT_CLASSES if kind == "text" else _zoo.classes_for(input_size))
    spe = spe or _zoo.steps_per_epoch(input_size, batch_size, kind=kind)
    check_capture_args(batch_size, input_size, classes, spe, latency_steps, kind, vocab_size)
    if not given:
        model = load_model(model, input_size, classes, kind, vocab_size)
    check_input(model, name, kind, input_size)
    tokens = token_range(model, vocab_size, input_size) if kind == "text" else None
    return _Setup(model, name, kind, classes, spe, tokens)


def _data_maker(setup: _Setup, input_size: int):
    """``(n, seed) -> (x, y)``: random images, or token sequences of a text model."""
    if setup.kind == "text":
        return lambda n, seed: _textzoo.synthetic_tokens(
            n, input_size, setup.classes, setup.tokens, seed
        )
    return lambda n, seed: synthetic_arrays(n, input_size, setup.classes, seed)


def _run(model, sizes, batch_size, data, window, latency, logdir):
    """The traced fit (-> profile, its step timer) and the separate latency run's timer
    (``latency``: its warm-up and timed steps)."""
    from ._convert import find_xplanes, trace_to_profile
    from ._timing import StepTimer

    x, y = data(sizes[0], 0)
    spe = -(-sizes[0] // batch_size)
    k = _keras_of(model)
    board = k.callbacks.TensorBoard(log_dir=str(logdir), histogram_freq=1, profile_batch=window)
    # The timer stops training after the traced steps (it runs after the TensorBoard callback).
    timer = StepTimer(stop_after=window[1])
    fit = {"batch_size": batch_size, "verbose": 0}
    model.fit(x, y, epochs=2, validation_data=data(sizes[1], 1), callbacks=[board, timer],
              **fit)  # fmt: skip
    profile = trace_to_profile(find_xplanes(logdir))
    # The latency comes from a separate, unprofiled run (the profiler slows the traced steps).
    steps = sum(latency)
    latency = StepTimer(stop_after=steps)
    model.fit(x, y, epochs=-(-steps // spe), callbacks=[latency], **fit)
    return profile, timer, latency


def _keras_of(model):
    """The Keras module (``tf_keras`` or Keras 3) ``model`` belongs to."""
    from ._keras2 import is_keras2

    if is_keras2(model):
        import tf_keras

        return tf_keras

    import keras

    return keras


def _compile(model, optimizer: str = "sgd") -> list[str]:
    """Compile in the convention with ``optimizer``; the parts of the convention this run does
    not follow (a Keras 3 model's, or an optimizer other than SGD)."""
    from ._keras2 import is_keras2, keras3_differences

    k = _keras_of(model)
    cls = OPTIMIZERS[optimizer]
    opt = getattr(k.optimizers.legacy, cls)() if is_keras2(model) else getattr(k.optimizers, cls)()
    loss = k.losses.categorical_crossentropy
    # jit_compile stated: Keras 3's default ("auto") turns XLA on whenever a GPU is present.
    model.compile(optimizer=opt, loss=loss, metrics=["accuracy"], jit_compile=False)
    if not is_keras2(model):
        return keras3_differences(model)  # names a non-SGD optimizer too
    if optimizer == "sgd":
        return []
    return [f"optimizer legacy {cls} instead of the legacy SGD (ResourceApplyGradientDescent)"]


def _meta(keras_model, differs, **fields) -> ProfileMeta:
    """The run's metadata plus what this machine and its libraries report."""
    import tensorflow as tf

    from ._convert import profiler_version
    from ._keras2 import convention_record

    gpu, memory = device_info()
    convention = convention_record(keras_model, differs)
    return ProfileMeta(
        **fields,
        steps_traced=STEPS_TRACED,
        gpu_name=gpu,
        gpu_memory_bytes=memory,
        tensorflow_version=tf.__version__,
        keras_version=convention["keras"],
        profiler_version=profiler_version(),
        convention=convention,
    )


def write_profile(
    profile: pd.DataFrame, meta: ProfileMeta, out: str | Path, model=None
) -> tuple[Path, Path]:
    """Write PROFET JSON (a list holding one object op -> us) and ``<stem>.meta.json`` next to it.

    A profile taken outside the convention is written in the object form with
    ``convention_differs`` (what differs), which ``profet predict`` warns about. Existing files
    are replaced only if ``profet profile`` wrote them (:func:`check_profile_out`); each file
    is written to a new temporary name beside it and renamed over.

    Raises
    ------
    ProfetError
        If the folder cannot be written, or ``out`` is a file PROFET may not replace.
    """
    out = Path(out)
    check_profile_out(out, model)
    meta_path = meta_path_of(out)
    doc = profile_document(profile, meta)
    data = (json.dumps(doc, indent=1) + "\n").encode()
    record = {**meta.to_dict(), "profet_files": {out.name: hashlib.sha256(data).hexdigest()}}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, data)
        write_atomic(meta_path, (json.dumps(record, indent=1) + "\n").encode())
    except OSError as exc:
        raise ProfetError(f"cannot write profile to {str(out)!r}: {exc.strerror}") from None
    return out, meta_path
