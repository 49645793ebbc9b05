"""Answers from trained artifacts: the :class:`Predictor`, the vectorised prediction engine,
the :class:`Prediction` result and the checksummed artifact store.

Layer 5: imports the layers below it (``crossgpu`` and ``onepoint`` included), never
``training`` or ``cli``.
"""
