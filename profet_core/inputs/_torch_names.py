"""Names a torch.profiler trace gives its GPU work, read into PROFET's op names (NCCL
collectives, copies, kernels without an op, convolution kinds from recorded shapes), and what
the names and the trace's header say about the run: the precision kernels compute in, the
memory layout, the GPU.
"""

from __future__ import annotations

import re
import statistics

from ._torch_events import Events, node_name

#: NCCL's kernels: ``ncclKernel_AllReduce_RING_LL_Sum_float(...)`` (NCCL < 2.19) and
#: ``ncclDevKernel_AllGather_RING_LL(...)`` (later).
_NCCL = re.compile(r"^(?:void\s+)?nccl(?:Dev)?Kernel_([A-Za-z]+)")
_MEMCPY = re.compile(r"^Memcpy\s+([A-Za-z]+)")
#: Convolution ops whose weight is ``[C_out, C_in / groups, k...]`` (not the transposed ones,
#: whose weight is ``[C_in, C_out / groups, k...]``).
_CONV = re.compile(r"^aten::(?:_?convolution|conv[123]d|cudnn_convolution|miopen_convolution|"
                   r"mkldnn_convolution|_nnpack_spatial_convolution|thnn_conv2d|slow_conv2d)$")  # fmt: skip
MAX_KERNEL_NAME = 120
#: Share of kernel time in half-precision kernels from which a trace counts as AMP.
AUTOCAST_SHARE = 0.05


def nccl_collective(kernel: str) -> str | None:
    """``ncclKernel_AllReduce_RING_LL_Sum_float(...)`` -> ``AllReduce``; None for other kernels."""
    m = _NCCL.match(kernel)
    return m.group(1) if m else None


def memcpy_kind(name: str) -> str:
    """``Memcpy HtoD (Pageable -> Device)`` -> ``HtoD`` (``DtoH``, ``DtoD``, ``PtoP``...)."""
    m = _MEMCPY.match(name)
    return m.group(1) if m else "other"


def short_kernel(name: str) -> str:
    """A kernel's name without ``void``, template arguments and parameters, at most 120
    characters: ``void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)`` ->
    ``at::native::vectorized_elementwise_kernel``."""
    text = name.strip()
    text = text[5:] if text.startswith("void ") else text
    depth, out = 0, []
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    short = "".join(out).strip() or text
    return short[:MAX_KERNEL_NAME]


def _dims(args: dict) -> list | None:
    dims = args.get("Input Dims") if isinstance(args, dict) else None
    return dims if isinstance(dims, list) else None


def _shape(value) -> list[int] | None:
    ok = isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    )
    return value if ok else None


def conv_kind(name: str, args: dict) -> str | None:
    """``"depthwise"``, ``"grouped"`` or ``"dense"`` for a convolution op whose shapes were
    recorded; None for other ops or where the shapes are not there.

    The input is ``[N, C_in, ...]`` and the weight ``[C_out, C_in / groups, k...]`` (the logical
    shapes, channels_last included), so ``groups = C_in / weight[1]``: depthwise where the
    weight is ``[C, 1, k...]`` on more than one input channel (groups == C_in), grouped where
    1 < groups < C_in.
    """
    if not _CONV.match(name):
        return None
    dims = _dims(args)
    if not dims or len(dims) < 2:
        return None
    x, w = _shape(dims[0]), _shape(dims[1])
    if not x or not w or len(x) < 3 or len(w) != len(x) or w[1] <= 0:
        return None
    c_in, per_group = x[1], w[1]
    if c_in % per_group:
        return None  # shapes that do not fit a convolution: say nothing
    if c_in == per_group:
        return "dense"
    return "depthwise" if per_group == 1 else "grouped"


def channels_last(name: str, args: dict) -> bool | None:
    """Whether a 4-D convolution's input is channels_last (its channel stride is 1), from the
    recorded strides (``Input Strides``, torch >= 2.1 with record_shapes); None if not told."""
    if not _CONV.match(name) or not isinstance(args, dict):
        return None
    dims, strides = _dims(args), args.get("Input Strides")
    if not dims or not isinstance(strides, list) or not strides:
        return None
    x, s = _shape(dims[0]), _shape(strides[0])
    if not x or not s or len(x) != 4 or len(s) != 4 or x[1] <= 1:
        return None
    return s[1] == 1


#: Half-precision kernels by name. FP16: cuBLAS/cuDNN HMMA kernels (``volta_h884gemm``,
#: ``turing_h1688gemm``, ``*_fp16_s16816gemm_fp16*``, ``sm80_xmma_*_f16f16_*``, CUTLASS
#: ``*tensorop_f16_*`` / ``h16816``), and ATen kernels templated on ``c10::Half`` or ``__half``.
#: BF16 the same with ``bf16`` / ``c10::BFloat16``. ``s16816`` (a 16x8x16 MMA, which only half
#: types have; TF32's is ``s1688``) counts as FP16 where no BF16 token says otherwise.
_BF16 = re.compile(r"bf16|BFloat16|__nv_bfloat16", re.IGNORECASE)
_FP16 = re.compile(
    r"(?<![bB])f16|fp16|h884|h1688|h16816|hmma|c10::Half\b|__half\b|s16816", re.IGNORECASE
)


def kernel_precision(kernel: str) -> str | None:
    """``"bf16"``, ``"fp16"`` or None (FP32/TF32 or not told) from a kernel's name."""
    if _BF16.search(kernel):
        return "bf16"
    if _FP16.search(kernel):
        return "fp16"
    return None


class Labeller:
    """The op name of a GPU event (module docstring), convolution kinds cached per frame."""

    def __init__(self, frames: tuple):
        self.frames = frames
        self.kinds: dict = {}
        self.by_seq: dict | None = None

    def _forward_kinds(self) -> dict:
        if self.by_seq is None:
            self.by_seq = {}
            for f in self.frames:
                seq = f[5].get("Sequence number")
                kind = conv_kind(f[3], f[5]) if _whole(seq) else None
                if kind:
                    self.by_seq.setdefault(seq, kind)
        return self.by_seq

    def _kind(self, i: int, backward: bool) -> str | None:
        if i not in self.kinds:
            f = self.frames[i]
            if backward:
                seq = f[5].get("Sequence number")
                conv = "Conv" in f[3] and _whole(seq)
                self.kinds[i] = self._forward_kinds().get(seq) if conv else None
            else:
                self.kinds[i] = conv_kind(f[3], f[5])
        kind = self.kinds[i]
        return f"[{kind}]" if kind in ("depthwise", "grouped") else ""

    def label(self, g: tuple, launch) -> str:
        if g[3] == "memcpy":
            return f"Memcpy {memcpy_kind(g[2])}"
        if g[3] == "memset":
            return "Memset"
        collective = nccl_collective(g[2])
        if collective:
            return f"nccl:{collective}"
        if launch.optimizer:
            return f"optimizer:{launch.optimizer}"[:200]
        if launch.node is not None:
            node = node_name(self.frames[launch.node][3])
            return node[:200] + self._kind(launch.node, True)
        if launch.op is not None:
            return self.frames[launch.op][3][:200] + self._kind(launch.op, False)
        return f"kernel:{short_kernel(g[2])}"


def device_props(events: Events) -> dict:
    """``gpu_name``, ``gpu_memory_gib``, ``gpu_sm_count``, ``gpu_compute_capability`` of the
    device most kernels ran on (``deviceProperties``; its first entry where the kernels do not
    say); "" or None where the trace does not tell."""
    props = events.meta.get("deviceProperties")
    props = [p for p in props if isinstance(p, dict)] if isinstance(props, list) else []
    used = [g[5] for g in events.gpu if g[3] == "kernel" and g[5] is not None]
    want = statistics.mode(used) if used else None
    pick = next((p for p in props if p.get("id") == want), props[0] if props else {})
    memory, sms = pick.get("totalGlobalMem"), pick.get("numSms")
    major, minor = pick.get("computeMajor"), pick.get("computeMinor")
    memory_ok = _whole(memory) and 0 < memory < 2**50
    capability_ok = _whole(major) and _whole(minor) and 0 <= major < 100 and 0 <= minor < 100
    name = pick.get("name")
    return {
        "gpu_name": name[:80] if isinstance(name, str) else "",
        "gpu_memory_gib": memory / 2**30 if memory_ok else None,
        "gpu_sm_count": sms if _whole(sms) and 0 < sms <= 4096 else None,
        "gpu_compute_capability": f"{major}.{minor}" if capability_ok else "",
    }


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def autocast_of(half: dict, kernel_us: float, cast_ops: bool) -> str:
    """``"fp16"``/``"bf16"`` where half-precision kernels (:func:`._torch_names.kernel_precision`)
    take at least :data:`AUTOCAST_SHARE` of kernel time, or any where autocast's own cast op
    (``aten::_autocast_to_reduced_precision``) ran; the larger of the two; else ``""``."""
    best = max(half, key=half.get)
    share = half[best] / kernel_us if kernel_us > 0 else 0.0
    return best if share >= AUTOCAST_SHARE or (cast_ops and half[best] > 0) else ""


def layout(events: Events, lo: float, hi: float) -> bool | None:
    votes = [channels_last(f[3], f[5]) for f in events.frames if lo <= f[1] <= hi and f[5]]
    votes = [v for v in votes if v is not None]
    return None if not votes else sum(votes) * 2 > len(votes)
