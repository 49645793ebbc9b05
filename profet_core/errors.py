"""Exceptions raised by profet_core.

The app and the CLI catch only :class:`ProfetError` (and its subclasses): anything else is a bug
and should surface as one.
"""

from __future__ import annotations


class ProfetError(Exception):
    """Base class of every error profet_core raises on purpose (bad input, bad artifacts)."""


class ProfetValueError(ProfetError, ValueError):
    """A value the user supplied is malformed or outside what is allowed."""


class ProfetFileNotFoundError(ProfetError, FileNotFoundError):
    """A file or folder the user named does not exist."""


class ArtifactError(ProfetError):
    """Trained artifacts are missing, corrupt or do not match their manifest."""


class NotFittedError(ProfetError, ValueError, AttributeError):
    """An estimator was used before ``fit`` (the same bases as scikit-learn's NotFittedError)."""
