"""Does a capture speak the training data's op vocabulary? (No TensorFlow needed.)

Compares the op types of a captured profile with those of the data's rows of the same CNN.
Op types are compared without their ``Host_``/``Device_`` prefix: on a CPU every op is a host
op, and with ``TF_ENABLE_ONEDNN_OPTS=0`` TensorFlow runs the plain kernels, the op types it
places on a GPU. Only these differences are normalised, each documented:

- CPU fusions of TensorFlow's grappler remapper (:data:`FUSIONS`): ``_FusedConv2D`` is a
  convolution with its bias add, ``_FusedMatMul`` likewise for dense layers, ``L2Loss`` is the
  L2 regulariser's ``Square`` + ``Sum`` (its gradient's ``Tile`` on a GPU),
  ``_FusedBatchNormEx`` is batch normalisation with its activation. A fused convolution or
  matrix product may also have absorbed the ReLU after it (:data:`MAY_ABSORB`): the data's
  ``Relu`` counts as present where the capture has one of them, but never adds to the
  normalised Jaccard;
- GPU-only ops (:data:`GPU_ONLY`), which a CPU run cannot have: host <-> device transfers, and
  the ``Transpose`` that grappler's layout optimizer puts around convolutions on a GPU (NHWC to
  the NCHW that cuDNN prefers; on a CPU the convolutions stay NHWC);
- resource-variable bookkeeping (:data:`NO_GPU_ROW`): ``ReadVariableOp`` and
  ``AssignVariableOp`` hand a variable's buffer over without a kernel of their own on a GPU, and
  no row of the data has them (its only variable op types are ``AssignAddVariableOp`` and
  ``AssignSubVariableOp``). On a CPU their time is the executor's, 0.01% of a MobileNetV2 step
  when the machine is quiet, but a thread descheduled while it runs one books the stall to it:
  one CI run at a load of 3 or more saw ``ReadVariableOp`` above 1%.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._schema import op_columns

#: CPU fusion op type -> the op types it stands for on a GPU.
FUSIONS = {
    "_FusedConv2D": ("Conv2D", "BiasAdd"),
    "_FusedMatMul": ("MatMul", "BiasAdd"),
    "_FusedDepthwiseConv2dNative": ("DepthwiseConv2dNative", "BiasAdd"),
    "_FusedBatchNormEx": ("FusedBatchNormV3", "Relu"),
    "L2Loss": ("Square", "Sum", "Tile"),
}
#: CPU fusion op type -> activations it may have absorbed (which one is not in the table).
MAY_ABSORB = {
    "_FusedConv2D": ("Relu",),
    "_FusedMatMul": ("Relu",),
    "_FusedDepthwiseConv2dNative": ("Relu6",),
}
#: Host <-> device transfers and layout conversions for cuDNN: present on a GPU only.
GPU_ONLY = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv", "Transpose"})
#: Variable reads and plain assignments: no GPU kernel, so no row in the data (see above).
NO_GPU_ROW = frozenset({"ReadVariableOp", "AssignVariableOp"})
#: Share of busy time from which an op type counts as material (1%).
MATERIAL = 0.01


def _type(column: str) -> str:
    return column.split("_", 1)[1]


def type_times(row: pd.Series) -> pd.Series:
    """Busy time (us) per op type, prefixes dropped, IDLE left out, only types with time > 0."""
    ops = {c: float(row[c]) for c in op_columns(row.index)}
    s = pd.Series(ops, dtype=float)
    s = s[(s > 0) & ~s.index.str.endswith("_IDLE")]
    return s.groupby([_type(c) for c in s.index]).sum()


def normalise(types) -> set[str]:
    """Op types with CPU fusions expanded into what they stand for (see :data:`FUSIONS`)."""
    out = set()
    for t in types:
        out.update(FUSIONS.get(t, (t,)))
    return out


def jaccard(a, b) -> float:
    """|a & b| / |a | b| of two sets of op types (1 when both are empty)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def conformance(capture: pd.Series, data_rows: pd.DataFrame) -> dict:
    """Compare one captured profile with the data's rows of the same CNN and sizes.

    Parameters
    ----------
    capture : pandas.Series
        One profile, ``Host_<Op>``/``Device_<Op>`` -> microseconds (e.g. taken on a CPU).
    data_rows : pandas.DataFrame
        The data's profiles of that CNN (any instances); op columns in microseconds.

    Returns
    -------
    dict
        ``jaccard`` (raw op-type sets, IDLE left out), ``jaccard_normalised`` (fusions
        expanded, GPU-only transfers and variable bookkeeping left out), ``missing`` (data
        device op types with >= 1% median share of device busy time that the capture lacks),
        ``foreign`` (capture op types with >= 1% of its busy time outside the data's vocabulary
        and not variable bookkeeping), both sorted lists.
    """
    ops = op_columns(data_rows.columns)
    data_times = data_rows[ops].fillna(0.0)
    vocab = {_type(c) for c in ops if (data_times[c] > 0).any() and not c.endswith("_IDLE")}
    mine = type_times(capture)
    dev = [c for c in ops if c.startswith("Device_") and c != "Device_IDLE"]
    busy = data_times[dev].sum(axis=1).to_numpy()
    share = data_times[dev].div(np.where(busy > 0, busy, np.nan), axis=0).median()
    material = {_type(c) for c, v in share.items() if v >= MATERIAL}
    # A data op type is present as itself or as what a capture's fusion stands for.
    have = normalise(mine.index) | set(mine.index)
    have |= {a for t in mine.index for a in MAY_ABSORB.get(t, ())}
    vocab_n = normalise(vocab) - GPU_ONLY
    mine_share = mine / mine.sum() if mine.sum() > 0 else mine
    foreign = {
        t
        for t, v in mine_share.items()
        if v >= MATERIAL and t not in vocab | NO_GPU_ROW and not normalise([t]) <= normalise(vocab)
    }
    return {
        "jaccard": jaccard(mine.index, vocab),
        "jaccard_normalised": jaccard(normalise(mine.index) - GPU_ONLY - NO_GPU_ROW, vocab_n),
        "missing": sorted(material - have - GPU_ONLY),
        "foreign": sorted(foreign),
    }
