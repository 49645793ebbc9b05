"""Semantic op families: which kind of work an op name does, robust to op names never seen.

A new architecture brings op types the training data never had (``Conv3D``, ``LayerNorm``,
``Gelu``...). Keyword rules put them with the ops they resemble in cost, so features built on
families transfer to unseen CNNs; the Levenshtein clustering of the PROFET reference cannot do
that for names that are short edit distances from unrelated ops (``Relu`` vs ``Rsqrt``).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ._data import op_columns

#: (family, regex on the lower-cased op type), first match wins.
FAMILY_RULES = (
    # Depthwise convolutions are memory-bound and scale across GPUs unlike dense ones.
    ("depthwise", r"depthwise"),
    ("conv", r"conv"),
    ("matmul", r"matmul|einsum|batchmatmul|dense"),
    ("norm", r"batchnorm|layernorm|groupnorm|instancenorm|lrn"),
    ("pool", r"pool"),
    ("activation", r"relu|elu|sigmoid|tanh|softplus|swish|gelu|silu"),
    ("optimizer", r"apply|assign"),
    ("transfer", r"send|recv|memcpy|copy"),
    ("input", r"dataset|iterator|decode|prefetch"),
    (
        "elementwise",
        r"add|mul|sub|div|square|sqrt|neg|bias|cast|equal|greater|less|logical|pad"
        r"|slice|concat|tile|transpose|broadcast|sum|mean|max|min|softmax|stitch"
        r"|random|pack|reshape|select|exp|log|argm|gather|where|fill|identity",
    ),
)
FAMILIES = tuple(f for f, _ in FAMILY_RULES) + ("other",)


def op_family(op: str) -> str:
    """Family of an op column (``Device_Conv2DBackpropFilter`` -> ``conv``); IDLE -> ``idle``."""
    name = op.split("_", 1)[1] if op.startswith(("Host_", "Device_")) else op
    low = name.lower().lstrip("_")
    if low == "idle":
        return "idle"
    for family, rx in FAMILY_RULES:
        if re.search(rx, low):
            return family
    return "other"


def family_times(profiles: pd.DataFrame, side: str = "Device") -> pd.DataFrame:
    """Sum op times per family for one side (``Device`` or ``Host``).

    Parameters
    ----------
    profiles : pandas.DataFrame
        ``Host_*``/``Device_*`` columns in microseconds.
    side : {"Device", "Host"}

    Returns
    -------
    pandas.DataFrame
        Shape (n_rows, len(FAMILIES) + 1): one column per family plus ``idle`` (microseconds).
    """
    cols = [c for c in op_columns(profiles.columns) if c.startswith(side + "_")]
    out = pd.DataFrame(0.0, index=profiles.index, columns=[*FAMILIES, "idle"])
    for c in cols:
        out[op_family(c)] += profiles[c].to_numpy(dtype=float)
    return out


def family_shares(profiles: pd.DataFrame) -> pd.DataFrame:
    """Each device family's share of the device-busy time (IDLE excluded); rows sum to 1 or 0."""
    fam = family_times(profiles, "Device").drop(columns="idle")
    busy = fam.sum(axis=1).to_numpy()
    return fam.div(np.where(busy > 0, busy, 1.0), axis=0)
