"""Op families of any step (features/_families.py): TensorFlow's and PyTorch's op names, each
with the resource its time follows; nothing unknown merged silently."""

from __future__ import annotations

import pandas as pd
import pytest

from profet_core.features._families import (
    FINE_FAMILIES,
    MEASURED,
    MODEL_FAMILY,
    fine_family,
    fine_family_times,
    unruled_ops,
)

NAMES = {
    # TensorFlow: the notebook's text rows and a BERT's
    "Device_CudnnRNN": "recurrent",
    "Device_CudnnRNNBackprop": "recurrent",
    "Device_CudnnRNNV3": "recurrent",
    "Device_TensorListStack": "loop",
    "Device_While": "loop",
    "Device_Einsum": "attention",
    "Device_BatchMatMulV2": "attention",
    "Device_ResourceGather": "embedding",
    "Device_UnsortedSegmentSum": "embedding",
    "Device_Unique": "embedding",
    "Device_ResourceSparseApplyAdadelta": "embedding",
    "Host_RegexSplitWithOffsets": "host_text",
    "Host_WordpieceTokenizeWithOffsets": "host_text",
    "Host_CaseFoldUTF8": "host_text",
    "Host_LookupTableFindV2": "host_text",
    "Device__Send": "transfer",
    "Host__HostSend": "transfer",
    "Device__HostRecv": "transfer",
    "Host_IteratorGetNext": "input",
    "Device_Softmax": "elementwise",
    "Device_MatMul": "matmul",
    "Device_Conv2DBackpropFilter": "conv",
    "Device_DepthwiseConv2dNative": "depthwise",
    "Device_FusedBatchNormV3": "norm",
    "Device_ResourceApplyAdadelta": "optimizer",
    "Device_IDLE": "idle",
    # PyTorch: first-level aten ops, autograd nodes and the reader's own names
    "Device_aten::conv2d": "conv",
    "Device_ConvolutionBackward0": "conv",
    "Device_aten::conv2d[depthwise]": "depthwise",
    "Device_ConvolutionBackward0[depthwise]": "depthwise",
    "Device_aten::addmm": "matmul",
    "Device_AddmmBackward0": "matmul",
    "Device_aten::linear": "matmul",
    "Device_MmBackward0": "matmul",
    "Device_aten::bmm": "attention",
    "Device_aten::_scaled_dot_product_flash_attention": "attention",
    "Device_aten::native_layer_norm": "norm",
    "Device_CudnnBatchNormBackward0": "norm",
    "Device_aten::lstm": "recurrent",
    "Device_CudnnRnnBackward0": "recurrent",
    "Device_aten::embedding": "embedding",
    "Device_EmbeddingBackward0": "embedding",
    "Device_aten::gelu": "activation",
    "Device_ReluBackward0": "activation",
    "Device_optimizer:SGD": "optimizer",
    "Device_aten::_fused_adam_": "optimizer",
    "Device_nccl:AllReduce": "communication",
    "Device_Memcpy HtoD": "transfer",
    "Device_Memcpy DtoD": "elementwise",
    "Device_Memset": "elementwise",
    "Device_kernel:triton__0d1d": "fused",
    "Device_CompiledFunctionBackward": "fused",
    "Device_kernel:cutlass::Kernel": "other",
    "Device_MyCustomOp": "other",
}


@pytest.mark.parametrize("op", list(NAMES))
def test_each_name_is_in_its_family(op):
    assert fine_family(op) == NAMES[op]


def test_every_family_says_what_moves_it():
    assert set(MODEL_FAMILY) == set(FINE_FAMILIES)
    # what the trained CNN models measured is moved by its own spec-model family
    assert all(MODEL_FAMILY[f] == f for f in MEASURED)


def test_times_are_summed_per_family_and_unruled_ops_named():
    ops = pd.DataFrame(
        [
            {
                "Device_CudnnRNN": 30.0,
                "Device_CudnnRNNBackprop": 50.0,
                "Device_MyCustomOp": 15.0,
                "Device_AddV2": 5.0,
                "Device_IDLE": 40.0,
                "Host_IteratorGetNext": 7.0,
            }
        ]
    )
    dev = fine_family_times(ops)
    assert dev.loc[0, "recurrent"] == 80.0 and dev.loc[0, "other"] == 15.0
    assert dev.loc[0, "idle"] == 40.0 and dev[list(FINE_FAMILIES)].sum(axis=1)[0] == 100.0
    assert fine_family_times(ops, "Host").loc[0, "input"] == 7.0
    assert unruled_ops(ops) == [("MyCustomOp", 0.15)]
