"""A scikit-learn-compatible estimator base that does not import scikit-learn.

Prediction must start fast (``profet predict`` as a process within 1.5x of ``import pandas``)
and importing scikit-learn alone costs more than pandas. So the estimators that serve
predictions derive from this base: keyword parameters stored in ``__init__``, learned state
ending in ``_``, ``get_params``/``set_params`` as in scikit-learn (``sklearn.base.clone`` works
on them), and :func:`check_is_fitted`. scikit-learn itself is imported only inside ``fit``.
"""

from __future__ import annotations

import inspect

from .errors import NotFittedError


class Estimator:
    """Parameters introspected from ``__init__``, as ``sklearn.base.BaseEstimator`` does."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p for p in sig.parameters if p != "self")

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
