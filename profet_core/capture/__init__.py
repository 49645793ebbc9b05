"""Capture: PROFET profiles of Keras models and benchmark collection on a new instance.

Importing this package does not import TensorFlow; ``profile_model``, ``ProfetProfiler`` and
``collect`` load it when used.

``profile_model(model, batch_size, input_size)`` -> (profile DataFrame, ProfileMeta);
``ProfetProfiler`` is the same inside your own ``model.fit``; ``TEXT_ZOO`` the text models
(``TextLSTM``, ... on token sequences made here; ``input_size`` is then the sequence length); ``profile_torch(model, loss_fn,
optimizer, batch)`` profiles a PyTorch training step (the ``torch`` extra; torch loaded when
used) and writes the trace and the profile; ``collect(instance, out)`` runs
the benchmark zoo; ``check_gpu_profile(profiles)`` refuses CPU-taken profiles for prediction.
"""

from ._check import NO_GPU_MESSAGE, check_gpu_profile, has_gpu_ops

_LAZY = {
    "profile_model": "._profile",
    "write_profile": "._profile",
    "ProfileMeta": "._profile",
    "ProfetProfiler": "._callback",
    "collect": "._collect",
    "write_catalog_line": "._collect",
    "ZOO": "._zoo",
    "TEXT_ZOO": "._textzoo",
    "profile_torch": "._torch",
    "TorchCapture": "._torch",
}

__all__ = ["NO_GPU_MESSAGE", "check_gpu_profile", "has_gpu_ops", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
