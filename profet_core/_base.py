"""A scikit-learn-compatible estimator base that does not import scikit-learn.

Prediction must start fast (``profet predict`` as a process within 1.5x of ``import pandas``)
and importing scikit-learn alone costs more than pandas. So the estimators that serve
predictions derive from this base: keyword parameters stored in ``__init__``, learned state
ending in ``_``, ``get_params``/``set_params`` as in scikit-learn (``sklearn.base.clone`` works
on them), and :func:`check_is_fitted`. scikit-learn itself is imported only inside ``fit``.

An estimator's state is ``(meta, arrays)`` (JSON and numpy, no pickle); :func:`sub_arrays` and
:func:`prefixed_arrays` nest one estimator's arrays inside another's under a key prefix;
:func:`kept_for` keeps what is derived from an object that does not change while it lives.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Mapping

from .errors import NotFittedError

#: Constructor parameter names per estimator class (:meth:`Estimator._param_names`).
_PARAM_NAMES: dict = {}


class Estimator:
    """Parameters introspected from ``__init__``, as ``sklearn.base.BaseEstimator`` does."""

    @classmethod
    def _param_names(cls) -> list[str]:
        # A class's constructor does not change: its signature is read once per class.
        names = _PARAM_NAMES.get(cls)
        if names is None:
            sig = inspect.signature(cls.__init__)
            names = _PARAM_NAMES[cls] = tuple(sorted(p for p in sig.parameters if p != "self"))
        return list(names)

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's keyword parameters and their current values."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters; unknown names raise ``ValueError``."""
        valid = set(self._param_names())
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def check_is_fitted(estimator, attributes) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has every fitted attribute named."""
    names = [attributes] if isinstance(attributes, str) else list(attributes)
    if not all(hasattr(estimator, a) for a in names):
        raise NotFittedError(
            f"this {type(estimator).__name__} is not fitted yet; call fit before using it"
        )


def sub_arrays(arrays: Mapping, prefix: str) -> dict:
    """The arrays whose key starts with ``prefix``, with the prefix cut off."""
    cut = len(prefix)
    return {k[cut:]: arrays[k] for k in arrays if k.startswith(prefix)}


def prefixed_arrays(prefix: str, arrays: Mapping) -> dict:
    """``arrays`` with ``prefix`` put before every key: one estimator's arrays inside another's
    (the inverse of :func:`sub_arrays`)."""
    return {f"{prefix}{k}": v for k, v in arrays.items()}


def kept_for(store: dict, obj, build, size: int):
    """``build(obj)``, kept in ``store`` while ``obj`` lives and read again for the same object.

    By identity (a DataFrame is not hashable), for objects never changed in place (a fitted
    model's spec sheet, an offerings frame a cache holds). Entries of objects gone are dropped
    and, beyond ``size`` entries, all of them.
    """
    got = store.get(id(obj))
    if got is not None and got[0]() is obj:
        return got[1]
    value = build(obj)
    for key, (ref, _) in list(store.items()):  # a copy: other threads may add meanwhile
        if ref() is None:  # its object is gone (and its id may be reused)
            store.pop(key, None)
    if len(store) >= size:
        store.clear()
    store[id(obj)] = (weakref.ref(obj), value)
    return value
