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

A text model's layers emit op types no CNN does (:data:`TEXT_LAYER_OPS`): with
``model_kind="text"`` they are listed by layer family (``text_layers``) instead of being called
foreign, and a cuDNN recurrent kernel of the data (``CudnnRNN*``, GPU only) counts as present
where the capture ran Keras' generic recurrent loop, which is what TensorFlow runs on a CPU for
the same layer.
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
#: cuDNN's fused recurrent kernels: what a cuDNN-eligible LSTM/GRU runs on a GPU.
CUDNN_RNN = (
    "CudnnRNN", "CudnnRNNV2", "CudnnRNNV3",
    "CudnnRNNBackprop", "CudnnRNNBackpropV2", "CudnnRNNBackpropV3",
)  # fmt: skip
#: Ops of Keras' generic recurrent loop (a While loop over the time steps) that only it emits:
#: the TensorLists that hand it the steps and collect its outputs and gradients.
GENERIC_LOOP = (
    "While", "TensorListFromTensor", "TensorListStack", "TensorListGetItem",
    "TensorListSetItem", "TensorListReserve", "TensorListPushBack", "TensorListPopBack",
    "TensorListElementShape", "TensorListLength",
)  # fmt: skip
#: Op types a text model's layers emit, by layer family. Ops that CNNs emit too, for the same
#: work or in their classifier head (``MatMul``, ``BiasAdd``, ``Mul``, ``AddV2``, ``AddN``, ``Sub``,
#: ``Mean``, ``Softmax``), are left out: they are in every vocabulary and name no text layer.
TEXT_LAYER_OPS = {
    "recurrent, cuDNN kernel (GPU)": CUDNN_RNN,
    "recurrent, generic loop": (
        *GENERIC_LOOP, "Less", "Sigmoid", "SigmoidGrad", "Tanh", "TanhGrad", "Split", "Select",
        "ReverseV2", "ReverseSequence",
    ),
    "embedding and its sparse update": (
        "ResourceGather", "Unique", "UnsortedSegmentSum", "ResourceScatterAdd",
        "ResourceScatterUpdate", "ResourceSparseApplyAdadelta", "ResourceSparseApplyAdagrad",
        "ResourceSparseApplyAdagradV2", "ResourceSparseApplyFtrl", "ResourceSparseApplyFtrlV2",
        "ResourceSparseApplyKerasMomentum", "ResourceSparseApplyMomentum",
        "ResourceSparseApplyRMSProp", "ResourceSparseApplyCenteredRMSProp", "VariableShape",
    ),
    "attention": ("Einsum", "BatchMatMulV2", "BatchMatMulV3", "Range"),
    "layer normalisation": ("SquaredDifference", "Rsqrt", "RsqrtGrad"),
    "dropout": ("RandomUniform", "GreaterEqual", "SelectV2"),
    "slicing and shapes": (
        "StridedSlice", "StridedSliceGrad", "Fill", "ZerosLike", "Pack", "Unpack",
        "InvertPermutation",
    ),
}  # fmt: skip
_TEXT_FAMILY = {t: family for family, types in TEXT_LAYER_OPS.items() for t in types}


def text_layers(types) -> dict[str, list[str]]:
    """The text-layer op types among ``types``, by family (:data:`TEXT_LAYER_OPS`)."""
    out: dict[str, list[str]] = {}
    for t in sorted(set(types)):
        if t in _TEXT_FAMILY:
            out.setdefault(_TEXT_FAMILY[t], []).append(t)
    return out


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


def conformance(capture: pd.Series, data_rows: pd.DataFrame, model_kind: str = "cnn") -> dict:
    """Compare one captured profile with the data's rows of the same model and sizes.

    Parameters
    ----------
    capture : pandas.Series
        One profile, ``Host_<Op>``/``Device_<Op>`` -> microseconds (e.g. taken on a CPU).
    data_rows : pandas.DataFrame
        The data's profiles of that model (any instances); op columns in microseconds.
    model_kind : {"cnn", "text"}
        ``"text"``: op types of text layers are never foreign (they are listed by family in
        ``text_layers``), and the data's ``CudnnRNN*`` count as present where the capture ran
        the generic recurrent loop (:data:`GENERIC_LOOP`).

    Returns
    -------
    dict
        ``jaccard`` (raw op-type sets, IDLE left out), ``jaccard_normalised`` (fusions
        expanded, GPU-only transfers and variable bookkeeping left out), ``missing`` (data
        device op types with >= 1% median share of device busy time that the capture lacks),
        ``foreign`` (capture op types with >= 1% of its busy time outside the data's vocabulary
        and not variable bookkeeping), both sorted lists; for a text model ``text_layers``
        (:func:`text_layers` of the capture's op types).
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
    text = model_kind == "text"
    if text and have & set(GENERIC_LOOP):  # a CPU runs the loop where a GPU runs cuDNN
        have |= set(CUDNN_RNN)
    vocab_n = normalise(vocab) - GPU_ONLY
    mine_share = mine / mine.sum() if mine.sum() > 0 else mine
    foreign = {
        t
        for t, v in mine_share.items()
        if v >= MATERIAL and t not in vocab | NO_GPU_ROW and not normalise([t]) <= normalise(vocab)
    }
    found = {
        "jaccard": jaccard(mine.index, vocab),
        "jaccard_normalised": jaccard(normalise(mine.index) - GPU_ONLY - NO_GPU_ROW, vocab_n),
        "missing": sorted(material - have - GPU_ONLY),
        "foreign": sorted(foreign - (set(_TEXT_FAMILY) if text else set())),
    }
    if text:
        found["text_layers"] = text_layers(mine.index)
    return found
