"""Time accounting of a trace's counted steps: the GPU events each holds, its duration, its
idle gaps and its host time (synchronisation waits, the data loader). Times in microseconds."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ._torch_events import Events

#: Host calls that block until the GPU catches up (runtime and driver API); ``cudaMemcpy`` is
#: the blocking copy.
SYNC_CALLS = frozenset(
    "cudaStreamSynchronize cudaDeviceSynchronize cudaEventSynchronize cudaMemcpy "
    "cuStreamSynchronize cuCtxSynchronize cuEventSynchronize".split()
)
DATALOADER = "enumerate(DataLoader)#"


@dataclass
class Step:
    """Accumulators of one counted step."""

    frame: tuple
    intervals: list
    kernels: int = 0


def step_of(starts: list, counted: list, t: float):
    """The counted step whose host span holds time ``t``, or None."""
    k = bisect.bisect_right(starts, t) - 1
    if k < 0 or t > counted[k].frame[2]:
        return None
    return counted[k]


def union(intervals: list) -> float:
    """Total length covered by ``(start, end)`` intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def clipped(intervals: list, lo: float, hi: float) -> list:
    """The parts of ``(start, end)`` intervals inside ``[lo, hi]``."""
    return [(max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi]


def host_times(events: Events, counted: list, reaching: set) -> dict:
    """Host time over the counted steps (us): ``sync`` (blocked in :data:`SYNC_CALLS` or in an
    ``aten::_local_scalar_dense`` that reached the GPU), ``loader`` (inside the data loader's
    ``__next__``), each a union of intervals clipped to the steps, and ``launch`` (the steps'
    host spans less ``sync``)."""
    sync = [(c[1], c[2]) for c in events.calls if c[3] in SYNC_CALLS]
    sync += [
        (events.frames[i][1], events.frames[i][2])
        for i in reaching
        if events.frames[i][3] == "aten::_local_scalar_dense"
    ]
    loader = [(f[1], f[2]) for f in events.frames if f[3].startswith(DATALOADER)]
    out = {"sync": 0.0, "loader": 0.0, "launch": 0.0}
    for s in counted:
        lo, hi = s.frame[1], s.frame[2]
        waited = union(clipped(sync, lo, hi))
        out["sync"] += waited
        out["loader"] += union(clipped(loader, lo, hi))
        out["launch"] += (hi - lo) - waited
    return out


def step_us(s: Step) -> float:
    """A step's duration: the longer of its host span and its GPU window (GPU work queued in a
    step can run past the host's end of it)."""
    cpu = s.frame[2] - s.frame[1]
    if not s.intervals:
        return cpu
    return max(cpu, max(b for _, b in s.intervals) - min(a for a, _ in s.intervals))


def idle_us(counted: list) -> float:
    """Summed over steps: the GPU window (first GPU event's start to the last one's end) less
    the union of the step's GPU events, all streams."""
    total = 0.0
    for s in counted:
        if s.intervals:
            window = max(b for _, b in s.intervals) - min(a for a, _ in s.intervals)
            total += window - union(s.intervals)
    return total
