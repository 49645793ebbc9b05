"""``ProfetProfiler``: a PROFET profile from inside a user's own ``model.fit``.

Importing this module imports TensorFlow/Keras. The callback traces two consecutive steps in
the middle of epoch 2 (the same steps ``profile_model`` traces) with TensorFlow's profiler, and
takes the batch latency as the median time of epoch 1's unprofiled steps after warm-up. It
refuses a model compiled with XLA or under mixed precision (the training data has neither), and
records in ``meta.convention["differs"]`` (and warns) what else differs from the data's
convention, e.g. a Keras 3 model, whose op types differ from Keras 2's.
"""

from __future__ import annotations

import statistics
import tempfile
import warnings
from pathlib import Path

import tensorflow as tf

from ._convert import find_xplanes, profiler_version, trace_to_profile
from ._keras2 import check_model, convention_record, is_keras2, keras3_differences
from ._load import model_kind_of, token_range
from ._profile import (
    STEPS_TRACED,
    WARMUP_STEPS,
    ProfileMeta,
    device_info,
    traced_steps,
    write_profile,
)
from ._timing import StepTimer


class ProfetProfiler(StepTimer):
    """Keras callback that leaves a PROFET profile in ``self.profile`` and ``self.meta``.

    Parameters
    ----------
    batch_size, input_size : int
        Recorded in the metadata (Keras does not know them for every input type); for a text
        model (one integer token sequence per example, :func:`model_kind_of`) ``input_size`` is
        the sequence length in tokens, recorded as ``seq_len`` too.
    out : path-like, optional
        Also write the profile JSON (and ``<stem>.meta.json``) there at the end of training.
    instance : str, optional
        Instance name for the metadata.
    logdir : path-like, optional
        Trace folder (default: a temporary one).

    Notes
    -----
    ``fit`` needs a known number of steps per epoch (>= 2) and at least 2 epochs; the traced
    steps are ``traced_steps(steps_per_epoch)``.
    """

    def __init__(self, batch_size, input_size, out=None, instance=None, logdir=None):
        super().__init__()
        self.batch_size, self.input_size = int(batch_size), int(input_size)
        self.out, self.instance = out, instance
        self._tmp = None if logdir else tempfile.TemporaryDirectory(prefix="profet-trace-")
        self.logdir = Path(logdir or self._tmp.name)
        self.profile = self.meta = None
        self._window = None
        self._tracing = False
        self.differs = []

    def on_train_begin(self, logs=None):
        spe = self.params.get("steps")
        if not spe or self.params.get("epochs", 1) < 2:
            raise ValueError(
                "ProfetProfiler needs fit(..., epochs>=2) with a known steps_per_epoch "
                f"(got steps={spe}, epochs={self.params.get('epochs')})"
            )
        check_model(self.model)
        self.differs = _differences(self.model)
        if self.differs:
            warnings.warn(
                "ProfetProfiler: not PROFET's convention: " + "; ".join(self.differs), stacklevel=2
            )
        self._window = traced_steps(int(spe))

    def on_train_batch_begin(self, batch, logs=None):
        if len(self.steps) + 1 == self._window[0]:
            tf.profiler.experimental.start(str(self.logdir))
            self._tracing = True

    def on_train_batch_end(self, batch, logs=None):
        super().on_train_batch_end(batch, logs)
        if self._tracing and len(self.steps) == self._window[1]:
            tf.profiler.experimental.stop()
            self._tracing = False
            self._finish()

    def on_train_end(self, logs=None):
        if self._tracing:  # training stopped inside the window: no complete profile
            tf.profiler.experimental.stop(save=False)
            self._tracing = False

    def _finish(self):
        spe = int(self.params["steps"])
        timed = self.steps[WARMUP_STEPS:spe] or self.steps[:spe]
        self.profile = trace_to_profile(find_xplanes(self.logdir))
        gpu, memory = device_info()
        convention = convention_record(self.model, self.differs)
        text = model_kind_of(self.model) == "text"
        self.meta = ProfileMeta(
            model=self.model.name,
            batch_size=self.batch_size,
            input_size=self.input_size,
            classes=int(self.model.output_shape[-1]),
            steps_per_epoch=spe,
            traced_steps=self._window,
            steps_traced=STEPS_TRACED,
            batch_latency_s=float(statistics.median(timed)),
            latency_steps=len(timed),
            epoch_latency_s=float(self.epochs[0]),
            instance=self.instance,
            gpu_name=gpu,
            gpu_memory_bytes=memory,
            tensorflow_version=tf.__version__,
            keras_version=convention["keras"],
            profiler_version=profiler_version(),
            convention=convention,
            model_kind="text" if text else "cnn",
            seq_len=self.input_size if text else None,
            vocab_size=token_range(self.model, None, self.input_size) if text else None,
        )
        if self.out:
            write_profile(self.profile, self.meta, self.out)


def _differences(model) -> list[str]:
    """Parts of the data's convention a user's compiled model does not follow."""
    if not is_keras2(model):
        return keras3_differences(model)
    opt = getattr(model, "optimizer", None)
    name = f"{type(opt).__module__}.{type(opt).__name__}"
    if "optimizers.legacy" in name and type(opt).__name__ == "SGD":
        return []
    return [f"optimizer {name} instead of the legacy SGD (ResourceApplyGradientDescent)"]
