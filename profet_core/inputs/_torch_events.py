"""Kineto chrome traces (what ``torch.profiler`` writes): bounded loading and the events PROFET
reads from them, in plain tuples.

A trace is a JSON object with ``traceEvents``: complete events (``"ph": "X"``, ``ts`` and
``dur`` in microseconds) of the host (``cpu_op``, ``user_annotation``, ``cuda_runtime``,
``cuda_driver``) and the GPU (``kernel``, ``gpu_memcpy``, ``gpu_memset``). A GPU event and the
runtime call that launched it share ``args.correlation``. Traces of torch 1.8-1.9 name the same
categories ``Operator``, ``Runtime``, ``Kernel``, ``Memcpy`` and ``Memset``: both are read.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass

from .._messages import quote
from .._schema import MAX_PROFILE_BYTES
from ..errors import ProfetValueError

#: Largest decompressed trace (bytes): 4 x the input bound (200 MiB, about 1.6 GB of memory to
#: read: a 52 MB trace took 415 MB). Kineto's JSON compresses 10-20x, so a 50 MB ``.json.gz`` of a
#: long run can exceed it (profile fewer steps); a gzip bomb (1 GB of zeros is 1 MB) cannot.
TRACE_BOUND_FACTOR = 4
MAX_TRACE_JSON_BYTES = TRACE_BOUND_FACTOR * MAX_PROFILE_BYTES
GZIP_MAGIC = b"\x1f\x8b"
#: Longest event (us, 11.6 days, PROFET's largest op time) and furthest timestamp (us; Kineto's
#: are microseconds since 1970, 1.7e15 in 2024): beyond them a trace is not a profile's.
MAX_EVENT_US = 1e12
MAX_TS_US = 1e17

#: Host categories that nest (ops and annotations); ``python_function`` (with_stack) is left
#: out: an ``nn.Module`` is no op.
_FRAME_CATS = {"cpu_op": "op", "operator": "op", "user_annotation": "annotation"}
_CALL_CATS = {"cuda_runtime", "cuda_driver", "runtime"}
_GPU_CATS = {
    "kernel": "kernel",
    "gpu_memcpy": "memcpy",
    "memcpy": "memcpy",
    "gpu_memset": "memset",
    "memset": "memset",
}


@dataclass(frozen=True)
class Events:
    """The events of one trace that PROFET reads (times in us).

    ``frames``: ``(thread, ts, end, name, kind, args)``, kind "op" or "annotation";
    ``calls``: ``(thread, ts, end, name, correlation)``; ``gpu``: ``(ts, end, name, kind,
    correlation, device, dur)``, kind "kernel", "memcpy" or "memset". ``thread`` is ``(pid,
    tid)``; times count from the trace's first event (:func:`_span`).
    """

    frames: tuple
    calls: tuple
    gpu: tuple
    meta: dict


def gunzip_bounded(data: bytes, where: str, limit: int | None = None) -> bytes:
    """The decompressed bytes of a gzip file (members concatenated), refused beyond ``limit``
    (default :data:`MAX_TRACE_JSON_BYTES`) as soon as the output passes it (it is never
    decompressed further). The trailer's stated size is not trusted: a truncated file ends in
    compressed bytes, which would read as any size.

    Raises
    ------
    ProfetValueError
        Not gzip, truncated, or more than ``limit`` bytes once decompressed (named: a gzip
        bomb, or a trace too long for PROFET).
    """
    limit = MAX_TRACE_JSON_BYTES if limit is None else limit
    out, total, rest = [], 0, data
    while rest:
        inflate = zlib.decompressobj(wbits=31)
        try:
            chunk = inflate.decompress(rest, limit + 1 - total)
            while True:
                out.append(chunk)
                total += len(chunk)
                if total > limit:
                    _too_big(where, limit)
                if inflate.eof or not inflate.unconsumed_tail:
                    break
                chunk = inflate.decompress(inflate.unconsumed_tail, limit + 1 - total)
        except zlib.error as exc:
            raise ProfetValueError(f"{where} is not a valid gzip file ({exc})") from None
        if not inflate.eof:
            raise ProfetValueError(
                f"{where} ends early (a truncated gzip file: the profiler or the copy did not "
                "finish writing it); profile again"
            )
        rest = inflate.unused_data.lstrip(b"\x00")
    return b"".join(out)


def _too_big(where: str, limit: int):
    raise ProfetValueError(
        f"{where} decompresses to more than {limit / 2**20:.0f} MiB, the limit for a trace "
        f"({TRACE_BOUND_FACTOR} x the {MAX_PROFILE_BYTES / 2**20:.0f} MiB input bound); profile "
        "fewer steps "
        "(schedule(active=...))"
    )


def load_json(data: bytes, where: str):
    """Parse a trace's JSON; a truncated or malformed file is refused saying so."""
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        end = len(data.rstrip())
        early = exc.pos >= end - 2 or exc.msg.startswith("Unterminated")
        what = "ends early" if early else f"is not valid JSON ({exc.msg} at line {exc.lineno})"
        raise ProfetValueError(
            f"{where} {what}: a trace the profiler did not finish writing (Kineto leaves a "
            "truncated file when the process dies or the disk fills); profile again"
        ) from None
    except UnicodeDecodeError:
        raise ProfetValueError(f"{where} is not UTF-8 JSON") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise ProfetValueError(f"{where} is not valid JSON: {quote(str(exc))}") from None
    except RecursionError:
        raise ProfetValueError(f"{where} nests too deeply to be a torch.profiler trace") from None


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:  # an integer beyond float range
        return None
    return value if math.isfinite(value) else None


def _span(event: dict, i: int, where: str, base: list) -> tuple[float, float, float]:
    """``(start, end, dur)`` in us from the trace's first start: Kineto's epoch times (~1.7e15
    us) hold a quarter-microsecond at best, the offsets from one of them every digit."""
    ts, dur = _number(event.get("ts")), _number(event.get("dur", 0.0))
    if ts is None or dur is None or not 0 <= dur <= MAX_EVENT_US or abs(ts) > MAX_TS_US:
        raise ProfetValueError(
            f"{where}: event {i} ({quote(event.get('name'))}) has ts {quote(event.get('ts'))} "
            f"and dur {quote(event.get('dur'))}; complete events need numbers of us: dur "
            f"0..{MAX_EVENT_US:.0e} (11.6 days), ts within {MAX_TS_US:.0e}"
        )
    if not base:
        base.append(math.floor(ts))
    ts -= base[0]
    return ts, ts + dur, dur


def _key(value) -> int | str | None:
    """An id (correlation, device) as a dict key: an int or short text, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and len(value) <= 64):
        return value
    return None


def _args(event: dict) -> dict:
    args = event.get("args")
    return args if isinstance(args, dict) else {}


def split_events(trace: dict, where: str) -> Events:
    """The frames, runtime calls and GPU events of a parsed trace (a dict with traceEvents).

    Raises
    ------
    ProfetValueError
        ``traceEvents`` is not a list, or an event PROFET reads has no numeric ``ts``/``dur``.
    """
    raw = trace.get("traceEvents")
    if not isinstance(raw, list):
        raise ProfetValueError(f"{where}: 'traceEvents' is not a list of events")
    frames, calls, gpu, base = [], [], [], []
    for i, event in enumerate(raw):
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        cat = str(event.get("cat", "")).lower()
        name = event.get("name")
        if not isinstance(name, str):
            continue
        if cat in _FRAME_CATS:
            ts, end, _ = _span(event, i, where, base)
            thread = (str(event.get("pid")), str(event.get("tid")))
            frames.append((thread, ts, end, name, _FRAME_CATS[cat], _args(event)))
        elif cat in _CALL_CATS:
            ts, end, _ = _span(event, i, where, base)
            thread = (str(event.get("pid")), str(event.get("tid")))
            calls.append((thread, ts, end, name, _key(_args(event).get("correlation"))))
        elif cat in _GPU_CATS:
            ts, end, dur = _span(event, i, where, base)
            args = _args(event)
            kind, corr = _GPU_CATS[cat], _key(args.get("correlation"))
            gpu.append((ts, end, name, kind, corr, _key(args.get("device")), dur))
    meta = {k: v for k, v in trace.items() if k != "traceEvents"}
    return Events(tuple(frames), tuple(calls), tuple(gpu), meta)


@dataclass(frozen=True)
class Launch:
    """What encloses one runtime call on its thread: the outermost ``Optimizer.step#`` frame's
    optimizer name, the innermost autograd node's frame index, the outermost op's frame index
    (None where absent)."""

    optimizer: str | None
    node: int | None
    op: int | None


AUTOGRAD_PREFIX = "autograd::engine::evaluate_function: "
OPTIMIZER_PREFIX = "Optimizer.step#"
#: ``aten::add``, ``torchvision::nms``, ``c10d::allreduce_``, a custom op's ``mylib::op``; not
#: the autograd engine's own frames, not annotations (``ProfilerStep#3``, ``## forward ##``).
_NOT_OPS = ("autograd::", "torch::autograd::")


def is_op(name: str, kind: str) -> bool:
    """Whether a frame is an operator (``<namespace>::<name>``) rather than an annotation."""
    head = name.split("(", 1)[0]
    return kind == "op" and "::" in head and " " not in head and not name.startswith(_NOT_OPS)


def optimizer_name(name: str) -> str | None:
    """``Optimizer.step#SGD.step`` -> ``SGD``; None for any other frame."""
    if not name.startswith(OPTIMIZER_PREFIX):
        return None
    rest = name[len(OPTIMIZER_PREFIX) :]
    return rest.rsplit(".step", 1)[0] or "unknown"


def launches(frames: tuple, calls: tuple) -> tuple[list[Launch], set[int]]:
    """For each runtime call, what encloses it on its own thread (see :class:`Launch`); and the
    frames that enclose any runtime call (those that reach the GPU).

    One sweep per thread over frames and calls in time order, with a stack of open frames.
    """
    by_thread: dict = {}
    for i, f in enumerate(frames):
        by_thread.setdefault(f[0], ([], []))[0].append(i)
    for j, c in enumerate(calls):
        by_thread.setdefault(c[0], ([], []))[1].append(j)
    out: list = [Launch(None, None, None)] * len(calls)
    reaching: set[int] = set()
    for fidx, cidx in by_thread.values():
        fidx.sort(key=lambda i: (frames[i][1], -frames[i][2]))
        cidx.sort(key=lambda j: calls[j][1])
        stack: list[int] = []
        k = 0
        for j in cidx:
            t = calls[j][1]
            while k < len(fidx) and frames[fidx[k]][1] <= t:
                start = frames[fidx[k]][1]
                while stack and frames[stack[-1]][2] <= start:
                    stack.pop()
                stack.append(fidx[k])
                k += 1
            while stack and frames[stack[-1]][2] < t:
                stack.pop()
            live = [i for i in stack if frames[i][2] >= t]
            reaching.update(live)
            out[j] = _launch(frames, live)
    return out, reaching


#: An autograd node's own frame: ``ConvolutionBackward0``, ``torch::autograd::AccumulateGrad``
#: (torch 1.8-1.9 traces have only these; later ones wrap them in ``AUTOGRAD_PREFIX`` frames).
_NODE = re.compile(r"^(?:\w+Backward\d*|torch::autograd::.+)$")


def node_name(name: str) -> str | None:
    """The autograd node a frame runs (``ConvolutionBackward0``), or None for other frames."""
    if name.startswith(AUTOGRAD_PREFIX):
        return name[len(AUTOGRAD_PREFIX) :]
    return name if _NODE.match(name) else None


def _launch(frames: tuple, stack: list[int]) -> Launch:
    optimizer = node = op = None
    for i in stack:  # outer first
        name, kind = frames[i][3], frames[i][4]
        if optimizer is None:
            optimizer = optimizer_name(name)
        if node_name(name) is not None:
            node = i  # the innermost wins
        elif op is None and is_op(name, kind):
            op = i
    return Launch(optimizer, node, op)
