"""Training, validation and artifact writing: ``train``, ``validate`` (leave-one-architecture-out
cross-validation and its report), ``add_instance`` (a new instance in trained artifacts), the
dataset folders the command line names, and the crash-safe replacement of an output folder.

Layer 6: imports every layer below it.
"""
