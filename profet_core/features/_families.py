"""Op families of any training step, TensorFlow's or PyTorch's: what each op runs on.

The trained models read a CNN profile through ``_profile_features.FAMILY_RULES`` (eleven
families, kept as they were trained). A profile of another kind of model (recurrent layers,
attention, embeddings, text preprocessing) or from PyTorch is read here, by finer families, each
with the resource its time follows from GPU to GPU:

========================  ==================================================================
family                    runs on (moved by)
========================  ==================================================================
conv, matmul, attention   the tensor/FP32 rate (the spec model's compute exponents)
depthwise, norm, pool,    memory bandwidth and clocks (the spec model's memory exponents)
activation, elementwise
recurrent                 fused cuDNN recurrent kernels: bandwidth-bound at training batch
                          sizes (the elementwise exponents)
embedding                 gathers and sparse updates: memory (the elementwise exponents)
fused                     compiler-fused kernels (torch.compile, Triton): memory
optimizer                 the optimizer's updates (the spec model's optimizer exponents)
loop                      a framework-level loop's per-step small kernels (Keras' generic RNN
                          loop): launch-bound, so a faster GPU does not shorten them
transfer                  host-device copies: the bus, not the GPU
input                     the input pipeline (datasets, data loaders): the host CPU
communication             collectives (NCCL): the data-parallel model's, not one GPU's step
host_text                 host-side text preprocessing: the host CPU
other                     no rule: named, never merged silently
========================  ==================================================================

Rules are regexes on the lower-cased op name without its ``Device_``/``Host_`` prefix, first
match wins; they read TensorFlow's op types (``CudnnRNNBackprop``, ``Einsum``) and PyTorch's
first-level ops and autograd nodes (``aten::addmm``, ``ConvolutionBackward0``, ``optimizer:SGD``,
``nccl:AllReduce``, ``Memcpy HtoD``) alike.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

from .._schema import OP_PREFIXES, op_columns

_MM = r"matmul|(?:^|::|_)(?:add)?mm(?:backward|_|$)|^mmbackward|^addmmbackward|linear|gemm|dense"
#: (family, regex), first match wins.
FINE_RULES = (
    (
        "communication",
        r"^nccl|allreduce|all_reduce|allgather|all_gather|reducescatter|reduce_scatter"
        r"|alltoall|all_to_all|collective|c10d::|sendrecv",
    ),
    (
        "host_text",
        r"regexsplit|wordpiece|casefold|normalizeutf8|lookuptable|stringsplit|unicode|tokeniz"
        r"|sentencepiece|stringtohash|staticregex|stringlower|bytesplit|substr|stringjoin",
    ),
    ("transfer", r"^_?send$|^_?recv$|_hostsend|_hostrecv|^_?host(send|recv)|memcpy (htod|dtoh)"),
    ("input", r"dataset|iterator|dataloader|decode|prefetch"),
    (
        "recurrent",
        r"cudnnrnn|cudnn_rnn|_thnn_fused_(lstm|gru)|lstm|gru|rnn_tanh|rnn_relu|blockcell",
    ),
    (
        "loop",
        r"tensorlist|^while$|^statelesswhile|^enter$|^exit$|nextiteration|loopcond|^merge$"
        r"|^switch$",
    ),
    (
        "embedding",
        r"resourcegather|^gatherv2$|^gather$|embedding|unsortedsegment|^unique|sparseapply"
        r"|resourcesparse|sparse_|dynamicstitch|fbgemm|index_select|^scatter|segment_sum"
        r"|splitlookup",
    ),
    ("attention", r"einsum|batchmatmul|scaled_dot_product|flash|efficient_attention|attention|bmm"),
    ("depthwise", r"depthwise"),
    ("conv", r"conv"),
    ("matmul", _MM),
    (
        "norm",
        r"batchnorm|batch_norm|layernorm|layer_norm|groupnorm|group_norm|instancenorm"
        r"|instance_norm|rmsnorm|rms_norm|^lrn",
    ),
    ("pool", r"pool"),
    (
        "optimizer",
        r"^optimizer:|apply|assign|_foreach_|fused_?adam|fused_?sgd|adagrad|rmsprop",
    ),
    ("activation", r"relu|elu|sigmoid|tanh|softplus|swish|gelu|silu|threshold|mish|hardswish"),
    ("fused", r"compiledfunction|triton|^kernel:fused"),
    (
        "elementwise",
        r"add|mul|sub|div|square|sqrt|neg|bias|cast|equal|greater|less|logical|pad|slice"
        r"|concat|tile|transpose|broadcast|sum|mean|max|min|softmax|stitch|random|pack|reshape"
        r"|select|exp|log|argm|gather|where|fill|identity|copy|zero|ones|^aten::cat|clone"
        r"|contiguous|_to_copy|^aten::to$|memset|memcpy dtod|dropout|loss|entropy|nll|flatten"
        r"|view|expand|index|pow|clamp|abs|sign|cumsum|sort|topk|permute|accumulategrad"
        r"|rsqrt|reduce|range|arange|stack|split|squeeze|mask|bernoulli|full|empty|unfold"
        r"|reciprocal|reverse|readvariable|square|erf|floor|round|isfinite|isnan|nonzero",
    ),
)
FINE_FAMILIES = (*(f for f, _ in FINE_RULES), "other")
#: Families the spec model learned from CNN training measurements (the rest it never saw).
MEASURED = frozenset(
    ("conv", "depthwise", "matmul", "norm", "pool", "activation", "elementwise", "optimizer")
)
#: The spec model's family whose exponents move each fine family; None: not moved by the GPU
#: (``loop``: launch-bound; ``host_text``: the host; ``communication``: the data-parallel model).
MODEL_FAMILY = {
    "conv": "conv",
    "depthwise": "depthwise",
    "matmul": "matmul",
    "attention": "matmul",
    "norm": "norm",
    "pool": "pool",
    "activation": "activation",
    "elementwise": "elementwise",
    "recurrent": "elementwise",
    "embedding": "elementwise",
    "fused": "elementwise",
    "other": "elementwise",
    "optimizer": "optimizer",
    "transfer": "transfer",
    "loop": None,
    "input": None,
    "host_text": None,
    "communication": None,
}
#: What each family's time runs on, in words (the answer's notes).
RESOURCE = {
    "recurrent": "memory bandwidth (fused recurrent kernels)",
    "attention": "the tensor/FP32 rate, as matrix products",
    "embedding": "memory bandwidth (gathers, sparse updates)",
    "fused": "memory bandwidth (compiler-fused kernels)",
    "loop": "kernel launches (a launch-bound loop of small kernels: not faster on a faster GPU)",
    "communication": "the interconnect (the data-parallel model)",
    "host_text": "the host CPU",
    "input": "the host CPU (the input pipeline)",
    "other": "memory bandwidth, as elementwise work (no rule names it)",
}


def fine_family(op: str) -> str:
    """Family of an op column (``Device_CudnnRNNBackprop`` -> ``recurrent``,
    ``Device_aten::addmm`` -> ``matmul``); ``Device_IDLE`` -> ``idle``."""
    name = op.split("_", 1)[1] if op.startswith(OP_PREFIXES) else op
    low = name.lower()
    if low == "idle":
        return "idle"
    low = low.lstrip("_")
    for family, rx in _COMPILED:
        if rx.search(low):
            return family
    return "other"


_COMPILED = tuple((f, re.compile(rx)) for f, rx in FINE_RULES)


@lru_cache(maxsize=64)
def _onehot(columns: tuple, side: str) -> tuple[np.ndarray, np.ndarray]:
    pos = [i for i, c in enumerate(columns) if c.startswith(side + "_")]
    onehot = np.zeros((len(pos), len(FINE_FAMILIES) + 1))
    for row, i in enumerate(pos):
        fam = fine_family(columns[i])
        onehot[row, len(FINE_FAMILIES) if fam == "idle" else FINE_FAMILIES.index(fam)] = 1.0
    return np.asarray(pos, dtype=int), onehot


def fine_family_times(ops: pd.DataFrame, side: str = "Device") -> pd.DataFrame:
    """Op times summed per fine family, idle last.

    Parameters
    ----------
    ops : pandas.DataFrame
        ``Host_*``/``Device_*`` columns in microseconds, any op names.
    side : {"Device", "Host"}

    Returns
    -------
    pandas.DataFrame
        Shape (n_rows, len(FINE_FAMILIES) + 1): one column per family, then ``idle`` (us).
    """
    cols = tuple(op_columns(ops.columns))
    pos, onehot = _onehot(cols, side)
    values = ops[list(cols)].to_numpy(dtype=float) if cols else np.zeros((len(ops), 0))
    return pd.DataFrame(values[:, pos] @ onehot, index=ops.index, columns=[*FINE_FAMILIES, "idle"])


def unruled_ops(ops: pd.DataFrame, row: int = 0, top: int = 3) -> list[tuple[str, float]]:
    """The ``Device_*`` ops of ``row`` that no family rule names, largest first, with their
    share of the row's device busy time."""
    cols = [c for c in op_columns(ops.columns) if c.startswith("Device_") and c != "Device_IDLE"]
    times = ops[cols].iloc[row].to_numpy(dtype=float) if cols else np.zeros(0)
    busy = times.sum()
    out = [
        (c.removeprefix("Device_"), t / busy)
        for c, t in zip(cols, times, strict=True)
        if t > 0 and fine_family(c) == "other"
    ]
    return sorted(out, key=lambda x: -x[1])[:top]
