"""Build the committed trace fixtures from real torch.profiler traces (see README.md here).

Run from the repository root with the source traces' paths (fetched from their repositories,
README.md says which)::

    python tests/core/inputs/data/torch_traces/make_fixtures.py SOURCE OUT FIRST LAST
    python tests/core/inputs/data/torch_traces/make_fixtures.py SOURCE OUT --whole

Keeps the ``ProfilerStep#FIRST..#LAST`` window and, of it, only what the reader reads: host
frames (``cpu_op``, ``user_annotation``; torch 1.9's ``Operator``) that enclose a kept runtime
call or mark steps, optimizers, the data loader, autograd nodes or autocast; the runtime calls
that launched a kept GPU event, and the synchronising ones; the GPU events those calls
launched; ``args`` cut to the keys the reader uses; of the top-level keys only
``schemaVersion``, ``deviceProperties``, ``distributedInfo`` (``backend``, ``rank``,
``world_size``) and ``record_shapes``. ``--whole`` keeps every event and cuts only the
top-level keys. It then checks that the reader gives the
same table (times to 1e-9 relative) for the fixture as for the source with its steps outside
the window removed.
"""

from __future__ import annotations

import gzip
import json
import re
import sys

from profet_core.errors import ProfetValueError
from profet_core.inputs._torch_events import launches, split_events
from profet_core.inputs._torch_trace import read_document, trace_table

FRAME_CATS = {"cpu_op", "user_annotation", "operator"}
CALL_CATS = {"cuda_runtime", "cuda_driver", "runtime"}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
SYNC = re.compile(r"Synchronize$|^cudaMemcpy$")
KEEP_NAMES = re.compile(
    r"^(ProfilerStep#|Optimizer\.|enumerate\(DataLoader\)#|autograd::engine::|"
    r"aten::_autocast_to_reduced_precision$|aten::_local_scalar_dense$|\w+Backward\d*$|"
    r"torch::autograd::)"
)
FRAME_ARGS = ("Input Dims", "Input Strides", "Sequence number")
META = ("schemaVersion", "deviceProperties", "distributedInfo", "record_shapes")


def load(path: str) -> dict:
    raw = open(path, "rb").read()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _step(event) -> int | None:
    m = re.match(r"^ProfilerStep#(\d+)$", str(event.get("name", "")))
    return int(m.group(1)) if m and str(event.get("cat", "")).lower() in FRAME_CATS else None


def restrict(trace: dict, first: int, last: int) -> dict:
    """The trace without the ProfilerStep frames outside first..last."""
    keep = [e for e in trace["traceEvents"] if _step(e) is None or first <= _step(e) <= last]
    return {**trace, "traceEvents": keep}


def trim(trace: dict, first: int, last: int) -> dict:
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in events if _step(e) is not None and first <= _step(e) <= last]
    lo = min(e["ts"] for e in steps)
    hi = max(e["ts"] + e["dur"] for e in steps)
    cat = lambda e: str(e.get("cat", "")).lower()  # noqa: E731
    inside = lambda e: lo <= e["ts"] <= hi  # noqa: E731
    calls = [e for e in events if cat(e) in CALL_CATS and inside(e)]
    corr = {e["args"].get("correlation") for e in calls}
    gpu = [e for e in events if cat(e) in GPU_CATS and e["args"].get("correlation") in corr]
    launched = {e["args"]["correlation"] for e in gpu}
    calls = [e for e in calls if e["args"].get("correlation") in launched or SYNC.search(e["name"])]
    frames = [
        e for e in events if cat(e) in FRAME_CATS and e["ts"] + e["dur"] >= lo and e["ts"] <= hi
    ]
    small = {"traceEvents": frames + calls}
    parsed = split_events(small, "x")
    _, reaching = launches(parsed.frames, parsed.calls)
    frames = [
        f for i, f in enumerate(frames)
        if i in reaching or KEEP_NAMES.match(f["name"]) or cat(f) == "user_annotation"
    ]  # fmt: skip
    out = []
    for e in frames:
        args = {k: e["args"][k] for k in FRAME_ARGS if k in e.get("args", {})}
        out.append(_event(e, args))
    out += [_event(e, {"correlation": e["args"]["correlation"]}) for e in calls]
    for e in gpu:
        args = {k: e["args"][k] for k in ("correlation", "device", "stream") if k in e["args"]}
        out.append(_event(e, args))
    out.sort(key=lambda e: e["ts"])
    return {**meta_of(trace), "traceEvents": out}


def meta_of(trace: dict) -> dict:
    """The top-level keys kept (``distributedInfo`` cut to what the reader reads)."""
    out = {k: trace[k] for k in META if k in trace}
    if isinstance(out.get("distributedInfo"), dict):
        keep = ("backend", "rank", "world_size")
        out["distributedInfo"] = {k: v for k, v in out["distributedInfo"].items() if k in keep}
    return out


def _event(e: dict, args: dict) -> dict:
    keep = {k: e[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur")}
    return {**keep, "args": args} if args else keep


def _table(trace: dict):
    """The reader's table, or its refusal's message."""
    try:
        return trace_table(read_document(trace, "t"))
    except ProfetValueError as exc:
        return str(exc)


def _close(want, got) -> bool:
    """Equal tables, times to 1e-9 relative: the reader counts times from a trace's first
    event, which trimming moves, so interval ends round in other last bits."""
    import pandas as pd

    try:
        pd.testing.assert_frame_equal(want, got, rtol=1e-9, atol=0)
    except AssertionError:
        return False
    return True


def main(source: str, out: str, first: int | None, last: int | None) -> None:
    trace = load(source)
    if first is None:
        small = {**meta_of(trace), "traceEvents": trace["traceEvents"]}
        first, last = -1, 10**12
    else:
        small = trim(trace, first, last)
    data = gzip.compress(json.dumps(small, separators=(",", ":")).encode(), mtime=0)
    with open(out, "wb") as f:
        f.write(data)
    want = _table(restrict(trace, first, last))
    got = _table(json.loads(gzip.decompress(data)))
    same = want == got if isinstance(want, str) else _close(want, got)
    print(f"{out}: {len(data) / 1024:.0f} KiB, {len(small['traceEvents'])} events; same: {same}")
    if not same:
        print("source:", want if isinstance(want, str) else want.T.to_string())
        print("fixture:", got if isinstance(got, str) else got.T.to_string())
        raise SystemExit(1)


if __name__ == "__main__":
    whole = sys.argv[3] == "--whole"
    main(*sys.argv[1:3], *((None, None) if whole else map(int, sys.argv[3:5])))
