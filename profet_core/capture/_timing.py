"""Keras callbacks that time training steps and epochs (TensorFlow loaded by the caller).

They are Keras 2 (``tf-keras``) callbacks: Keras 2's ``fit`` needs its own callback class, and
Keras 3's ``fit`` runs them too (a user's Keras 3 model under ``ProfetProfiler``).
"""

from __future__ import annotations

import statistics
import time

import tf_keras


class StepTimer(tf_keras.callbacks.Callback):
    """Wall time of every training step and epoch (seconds), and the global step count."""

    def __init__(self, stop_after: int | None = None):
        super().__init__()
        self.stop_after = stop_after
        self.steps: list[float] = []
        self.epochs: list[float] = []
        self._t_step = self._t_epoch = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self._t_epoch = self._t_step = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(time.perf_counter() - self._t_epoch)

    def on_train_batch_end(self, batch, logs=None):
        # Reading the loss waits for the step to finish (Keras 2, which made the shared data,
        # did so every step); a step is the time from the previous step's end to this one's.
        if logs and "loss" in logs:
            float(logs["loss"])
        now = time.perf_counter()
        self.steps.append(now - self._t_step)
        self._t_step = now
        # Stop once the traced steps are written: the rest of epoch 2 adds nothing.
        if self.stop_after is not None and len(self.steps) >= self.stop_after:
            self.model.stop_training = True

    def median_step(self, warmup: int) -> float:
        """Median step time after dropping the first ``warmup`` steps (graph building)."""
        kept = self.steps[warmup:] or self.steps
        return float(statistics.median(kept))
