"""A torch.profiler trace of a training step -> PROFET's profile table (one row).

The trace is the Kineto chrome trace ``torch.profiler`` writes (``tensorboard_trace_handler``
or ``prof.export_chrome_trace``: ``.json``, ``.json.gz``, ``*.pt.trace.json(.gz)``). What is
counted, and how (times in microseconds over the counted steps):

- **Steps**: the ``ProfilerStep#N`` host events (one per ``prof.step()``). The first
  ``warmup_steps`` (default 1) are dropped: the first profiled step still allocates memory and
  autotunes cuDNN. A GPU event belongs to the step in which its runtime call (``cudaLaunchKernel``,
  ``cuLaunchKernel``, ``cudaMemcpyAsync``..., linked by ``args.correlation``) was made, even where
  it runs past the step's host end.
- **``Device_<op>``**: each kernel, copy and memset once, by what launched it: memcpy ->
  ``Memcpy <HtoD|DtoH|DtoD|...>``, memset -> ``Memset``, an NCCL kernel -> ``nccl:<AllReduce|
  AllGather|ReduceScatter|...>``; inside ``Optimizer.step#<Name>.step`` -> ``optimizer:<Name>``
  (foreach and fused kernels included); in backward, the innermost autograd node
  (``autograd::engine::evaluate_function: ConvolutionBackward0`` -> ``ConvolutionBackward0``);
  in forward, the outermost operator (``<namespace>::<op>``: ``aten::conv2d``, ``aten::linear``,
  ``torchvision::nms``; annotations and ``nn.Module`` frames are no ops); else
  ``kernel:<short kernel name>`` (said in a note). A convolution (forward op or its backward
  node, linked by ``Sequence number``) whose recorded shapes show a depthwise or grouped weight
  gets ``[depthwise]`` or ``[grouped]`` (:func:`._torch_names.conv_kind`).
- **``Device_IDLE``**: per step, the GPU window (first GPU event's start to the last one's end)
  less the union of the GPU events (all streams): the launch and idle gaps inside steps.
- **``Host_DataLoader``**: host time inside ``enumerate(DataLoader)#...``; **``Host_Synchronize``**:
  host time blocked in ``cuda{Stream,Device,Event}Synchronize`` (and the driver's), blocking
  ``cudaMemcpy``, and ``aten::_local_scalar_dense`` that reached the GPU (``.item()``), as a
  union of intervals.

The table's extra columns: ``steps`` (int, steps counted), ``batch_latency_s`` (median counted
step, seconds: each step the longer of its host span and its GPU window, measured under the
profiler), ``framework`` ("pytorch"), ``gpu_name``, ``gpu_memory_gib``, ``gpu_sm_count``,
``gpu_compute_capability`` ("8.0"; from ``deviceProperties`` of the device the kernels ran on;
"", NaN and 0 where the trace has none), ``world_size`` (``distributedInfo``, 1 if absent),
``kernels`` (kernel events over the counted steps), ``autocast`` ("fp16", "bf16" or "":
:func:`autocast_of`), ``host_launch_us`` (host time of the counted steps outside
synchronisation waits: near the step time where the step is launch-bound) and ``channels_last``
(bool, only where the strides were recorded). Notes go to ``attrs["profile_notes"]``.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

import pandas as pd

from .._messages import quote
from .._schema import LATENCY_COLUMN, STEPS_COLUMN
from ..errors import ProfetValueError
from . import _torch_names as names
from ._rules import check_op_names, check_times
from ._torch_events import (
    GZIP_MAGIC,
    MAX_TRACE_JSON_BYTES,
    Events,
    gunzip_bounded,
    launches,
    load_json,
    node_name,
    split_events,
)
from ._torch_steps import Step, host_times, idle_us, step_of, step_us

__all__ = [
    "MAX_TRACE_JSON_BYTES",
    "NOTES_ATTR",
    "TraceProfile",
    "is_trace",
    "load_document",
    "read_document",
    "read_trace",
    "trace_table",
]

NOTES_ATTR = "profile_notes"
_STEP = re.compile(r"^ProfilerStep#(\d{1,18})$")
HOW_TO_STEP = (
    "call prof.step() once per training step inside torch.profiler.profile(schedule=...), or "
    "use `profet profile --torch`"
)


@dataclass(frozen=True)
class TraceProfile:
    """One torch.profiler trace, read (see the module docstring for every field's rule).

    ``ops`` holds ``(column, microseconds over the counted steps)`` pairs, ``Host_`` then
    ``Device_`` columns; ``step_us`` each counted step's duration (us); ``gpu_*`` are "", None
    where the trace does not say.
    """

    name: str
    steps: int
    warmup_steps: int
    step_ids: tuple
    step_us: tuple
    batch_latency_s: float
    ops: tuple
    host_launch_us: float
    kernels: int
    nccl_us: float
    gpu_name: str
    gpu_memory_gib: float | None
    gpu_sm_count: int | None
    gpu_compute_capability: str
    world_size: int
    autocast: str
    channels_last: bool | None
    shapes_recorded: bool
    notes: tuple
    framework: str = "pytorch"

    def meta(self) -> dict:
        """The table's meta columns but ``steps`` and ``batch_latency_s``, in order (None where
        the trace does not tell)."""
        keys = (
            "framework gpu_name gpu_memory_gib gpu_sm_count gpu_compute_capability world_size "
            "kernels autocast host_launch_us channels_last"
        ).split()
        return {k: getattr(self, k) for k in keys}


def read_trace(data: bytes, name: str, warmup_steps: int = 1) -> TraceProfile:
    """Read a torch.profiler trace of training steps.

    Parameters
    ----------
    data : bytes
        The file's contents: Kineto JSON, or gzip of it (decompressed at most
        :data:`MAX_TRACE_JSON_BYTES`).
    name : str
        The file's name, for messages.
    warmup_steps : int
        Profiled steps dropped at the start (default 1).

    Returns
    -------
    TraceProfile

    Raises
    ------
    ProfetValueError
        One line each: not gzip or truncated, decompressing past the bound, not valid or
        truncated JSON, no ``traceEvents``; no GPU events (a CPU-only trace); no backward
        (a forward-only, inference trace); no ``ProfilerStep#`` markers; no step left after the
        warm-up.
    """
    where = f"trace {quote(name)}"
    trace = load_document(data, where)
    if not is_trace(trace):
        raise ProfetValueError(f"{where} is not a torch.profiler trace (no 'traceEvents')")
    return read_document(trace, name, warmup_steps)


def load_document(data: bytes, where: str):
    """The parsed JSON of a trace file's bytes, gunzipped (bounded) where they are gzip."""
    if data[:2] == GZIP_MAGIC:
        data = gunzip_bounded(data, where)
    elif len(data) > MAX_TRACE_JSON_BYTES:
        raise ProfetValueError(f"{where} is over {MAX_TRACE_JSON_BYTES / 2**20:.0f} MiB")
    return load_json(data, where)


def is_trace(document) -> bool:
    """Whether parsed JSON is a Kineto trace (an object with ``traceEvents``)."""
    return isinstance(document, dict) and "traceEvents" in document


def read_document(trace: dict, name: str, warmup_steps: int = 1) -> TraceProfile:
    """:func:`read_trace` of an already parsed trace."""
    where = f"trace {quote(name)}"
    events = split_events(trace, where)
    steps = _check(events, where, warmup_steps)
    profile = _read(events, name, steps, warmup_steps)
    if not any(v for k, v in profile.ops if k.startswith("Device_") and k != "Device_IDLE"):
        raise ProfetValueError(
            f"{where}: the counted steps (ProfilerStep#{profile.step_ids[0]}.."
            f"#{profile.step_ids[-1]}) launched no GPU work; profile steps that run on the GPU"
        )
    return profile


def _check(events: Events, where: str, warmup_steps: int) -> list:
    """The trace's step frames in time order, after refusing what cannot be a training profile."""
    if not events.gpu:
        raise ProfetValueError(
            f"{where} holds no GPU kernels: it was taken without a GPU, or with activities "
            "lacking ProfilerActivity.CUDA; profile on the GPU with activities=[CPU, CUDA]"
        )
    if not any(node_name(f[3]) or "Backward" in f[3] for f in events.frames):
        raise ProfetValueError(
            f"{where} has no backward pass (no autograd *Backward* ops): a forward-only "
            "(inference) trace; profile training steps (loss.backward() and optimizer.step())"
        )
    seen, steps = set(), []
    for f in sorted(events.frames, key=lambda f: f[1]):
        m = _STEP.match(f[3])
        if m and int(m.group(1)) not in seen:
            seen.add(int(m.group(1)))
            steps.append(f)
    if not steps:
        raise ProfetValueError(f"{where} has no step markers (ProfilerStep#N): {HOW_TO_STEP}")
    if not isinstance(warmup_steps, int) or warmup_steps < 0:
        raise ProfetValueError(f"warmup_steps {quote(warmup_steps)}: an integer >= 0")
    if len(steps) - warmup_steps < 1:
        raise ProfetValueError(
            f"{where} has {len(steps)} profiled step(s); after dropping {warmup_steps} as "
            "warm-up none is left: profile at least 2 steps (schedule(warmup=1, active=3)), "
            f"and {HOW_TO_STEP}"
        )
    return steps


def _read(events: Events, name: str, steps: list, warmup_steps: int) -> TraceProfile:
    counted = [Step(f, []) for f in steps[warmup_steps:]]
    starts = [s.frame[1] for s in counted]
    found, reaching = launches(events.frames, events.calls)
    by_corr: dict = {}
    for j, call in enumerate(events.calls):
        if call[4] is not None:
            by_corr.setdefault(call[4], j)
    labels = names.Labeller(events.frames)
    device: dict = {}
    tally = {"unlinked": 0, "no_op_us": 0.0, "no_op": 0, "half": {"fp16": 0.0, "bf16": 0.0}}
    span = (counted[0].frame[1], counted[-1].frame[2])
    for g in events.gpu:
        j = by_corr.get(g[4])
        if j is None:  # launched before the trace began, or its call was not recorded
            tally["unlinked"] += span[0] <= g[0] <= span[1]
            continue
        step = step_of(starts, counted, events.calls[j][1])
        if step is None:
            continue
        label = labels.label(g, found[j])
        device[label] = device.get(label, 0.0) + g[6]
        step.intervals.append((g[0], g[1]))
        if g[3] == "kernel":
            step.kernels += 1
            precision = names.kernel_precision(g[2])
            if precision:
                tally["half"][precision] += g[6]
        if label.startswith("kernel:"):
            tally["no_op"] += 1
            tally["no_op_us"] += g[6]
    return _assemble(events, name, counted, warmup_steps, device, tally, reaching)


def _assemble(events, name, counted, warmup, device, tally, reaching) -> TraceProfile:
    host = host_times(events, counted, reaching)
    lo, hi = counted[0].frame[1], counted[-1].frame[2]
    kernels = sum(s.kernels for s in counted)
    kernel_us = sum(v for k, v in device.items() if not k.startswith(("Memcpy", "Memset")))
    cast_ops = any(f[3] == "aten::_autocast_to_reduced_precision" for f in events.frames)
    dist = events.meta.get("distributedInfo")
    dist = dist if isinstance(dist, dict) else {}
    world = dist.get("world_size")
    whole = isinstance(world, int) and not isinstance(world, bool)
    world = world if whole and 0 < world <= 1_000_000 else 1
    ops = [("Host_DataLoader", host["loader"]), ("Host_Synchronize", host["sync"])]
    ops += sorted(((f"Device_{k}", v) for k, v in device.items()), key=lambda kv: (-kv[1], kv[0]))
    ops.append(("Device_IDLE", idle_us(counted)))
    durations = tuple(step_us(s) for s in counted)
    profile = TraceProfile(
        name=name,
        steps=len(counted),
        warmup_steps=warmup,
        step_ids=tuple(int(_STEP.match(s.frame[3]).group(1)) for s in counted),
        step_us=durations,
        batch_latency_s=statistics.median(durations) / 1e6,
        ops=tuple(ops),
        host_launch_us=host["launch"],
        kernels=kernels,
        nccl_us=sum(v for k, v in device.items() if k.startswith("nccl:")),
        world_size=world,
        autocast=names.autocast_of(tally["half"], kernel_us, cast_ops),
        channels_last=names.layout(events, lo, hi),
        shapes_recorded=any("Input Dims" in f[5] for f in events.frames),
        notes=(),
        **names.device_props(events),
    )
    notes = _notes(profile, tally, dist, kernel_us)
    return TraceProfile(**{**profile.__dict__, "notes": notes})


def _notes(p: TraceProfile, tally: dict, dist: dict, kernel_us: float) -> tuple:
    first, last = p.step_ids[0], p.step_ids[-1]
    out = [
        f"{p.steps} steady step(s) counted (ProfilerStep#{first}..#{last}); the first "
        f"{p.warmup_steps} profiled step(s) dropped as warm-up (allocation, cuDNN autotuning)",
        f"batch_latency_s {p.batch_latency_s * 1e3:.3f} ms is the median counted step measured "
        "under the profiler (its overhead included: an unprofiled step is faster)",
    ]
    if not p.shapes_recorded:
        out.append(
            "shapes not recorded (record_shapes=False): depthwise convolutions not told from "
            "dense ones"
        )
    if p.world_size > 1 or p.nccl_us > 0:
        share = p.nccl_us / kernel_us if kernel_us else 0.0
        out.append(
            f"distributed: world size {p.world_size} ({_backend(dist)}); "
            f"NCCL kernels {p.nccl_us / 1e3:.3f} ms over the {p.steps} step(s) ({share:.0%} of "
            "kernel time), on their own stream (they may overlap compute)"
        )
    if tally["no_op"]:
        out.append(
            f"{tally['no_op']} kernel(s) ({tally['no_op_us'] / 1e3:.3f} ms) launched outside any "
            "op: named Device_kernel:<kernel>"
        )
    if tally["unlinked"]:
        out.append(
            f"{tally['unlinked']} GPU event(s) inside the counted steps not linked to any runtime "
            "call (no matching correlation): left out"
        )
    if p.autocast:
        share = tally["half"][p.autocast] / kernel_us if kernel_us else 0.0
        out.append(f"autocast {p.autocast}: {share:.0%} of kernel time in {p.autocast} kernels")
    return tuple(out)


def _backend(dist: dict) -> str:
    backend = dist.get("backend")
    ok = isinstance(backend, str) and re.fullmatch(r"[\w:,.-]{1,40}", backend)
    return backend if ok else "backend not said"


def trace_table(profile: TraceProfile) -> pd.DataFrame:
    """The one-row profile table of a read trace (as :func:`parse_profile` returns tables).

    Returns
    -------
    pandas.DataFrame
        Shape (1, n_ops + 12): ``Host_``/``Device_`` columns (us over ``steps`` steps), then
        ``steps``, ``batch_latency_s``, ``framework``, ``gpu_name``, ``gpu_memory_gib``,
        ``gpu_sm_count``, ``gpu_compute_capability``, ``world_size``, ``kernels``,
        ``autocast``, ``host_launch_us`` and, where told, ``channels_last``. ``attrs
        ["profile_notes"]`` holds the notes (a tuple of str).
    """
    cols = dict(profile.ops)
    check_op_names(list(cols), f"trace {quote(profile.name)}")
    row = {**cols, STEPS_COLUMN: profile.steps, LATENCY_COLUMN: profile.batch_latency_s}
    meta = profile.meta()
    if meta["gpu_memory_gib"] is None:
        meta["gpu_memory_gib"] = float("nan")
    if meta["gpu_sm_count"] is None:
        meta["gpu_sm_count"] = 0
    if meta["channels_last"] is None:
        del meta["channels_last"]
    row.update(meta)
    out = pd.DataFrame([row])
    times = out[list(cols)].to_numpy(dtype=float)
    check_times(times, list(cols), f"trace {quote(profile.name)}")
    out.attrs[NOTES_ATTR] = profile.notes
    return out
