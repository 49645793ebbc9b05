"""Estimators (scikit-learn contract, pickle-free state): the per-pair methods, tree
ensembles, the op-family breakdown, the two-point curve scaler and the prediction intervals.

Layer 3: imports only ``features``, ``inputs`` and the root modules.
"""
