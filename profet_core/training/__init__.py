"""Training, validation and artifact writing: ``train``, leave-one-architecture-out
cross-validation, the validation report, adding an instance to trained artifacts, and the
crash-safe replacement of an output folder.

Layer 6: imports every layer below it.
"""
