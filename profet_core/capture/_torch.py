"""Profile a PyTorch training step the way PROFET reads it (the ``torch`` extra; torch is
imported inside the functions only).

``profile_torch`` runs the user's own step (forward, loss, backward, optimizer step; autocast and
a GradScaler under ``amp="fp16"``, autocast under ``"bf16"``) on the GPU where there is one:
``warmup`` unprofiled steps, then ``latency_steps`` steps timed one by one without the profiler
(PROFET's latency is measured unprofiled: the profiler slows steps), then ``steps + 1`` steps
under ``torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True)``, one
``prof.step()`` each, of which the reader drops the first. It writes the raw trace
(``<name>.pt.trace.json.gz``), the profile (PROFET JSON's object form, ``<name>.json``) and
``<name>.meta.json`` (how it was taken, the reader's notes).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .._messages import quote
from .._schema import LATENCY_COLUMN, MAX_LATENCY_S, MIN_LATENCY_S
from ..errors import ProfetError, ProfetValueError
from ..inputs._outputs import file_not_ours, read_record, write_atomic
from ..inputs._torch_trace import TraceProfile, read_trace
from ._check import _whole
from ._outfile import check_profile_out, meta_path_of

__all__ = [
    "TorchCapture",
    "check_torch_out",
    "load_factory",
    "profile_torch",
    "require_torch",
    "torch_profile_document",
]

AMP = (None, "fp16", "bf16")
DEFAULT_STEPS = 5
MAX_STEPS = 100
MAX_WARMUP = 1000
MAX_LATENCY_STEPS = 10_000


@dataclass(frozen=True)
class TorchCapture:
    """What :func:`profile_torch` wrote and measured (latencies in seconds)."""

    profile_path: Path
    meta_path: Path
    trace_path: Path
    batch_latency_s: float
    profiled_latency_s: float
    device: str
    profile: TraceProfile


def require_torch():
    """The ``torch`` module, or a one-line refusal saying how to install it."""
    try:
        import torch
    except ImportError:
        raise ProfetError(
            "profiling a PyTorch model needs PyTorch (torch >= 2.1): pip install -e '.[torch]', "
            "or the torch build for your CUDA from pytorch.org"
        ) from None
    return torch


def _paths(out_dir, name: str) -> tuple[Path, Path, Path]:
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ProfetValueError(f"name {quote(name)}: a file name stem such as 'profile'")
    out_dir = Path(out_dir)
    profile = out_dir / f"{name}.json"
    return profile, meta_path_of(profile), out_dir / f"{name}.pt.trace.json.gz"


def check_torch_out(out_dir, name: str) -> tuple[Path, Path, Path]:
    """The three files' paths, after the write rule (new files, or the set PROFET wrote,
    unchanged since), checked before any work."""
    profile, meta, trace = _paths(out_dir, name)
    check_profile_out(profile)
    reason = file_not_ours(trace, read_record(meta))
    if reason:
        raise ProfetValueError(
            f"{str(trace)!r} exists and {reason}; give another name or folder, or move that file "
            "away (nothing was changed)"
        )
    return profile, meta, trace


def profile_torch(
    model,
    loss_fn,
    optimizer,
    batch,
    *,
    steps: int = DEFAULT_STEPS,
    warmup: int = 3,
    latency_steps: int = 20,
    amp: str | None = None,
    channels_last: bool = False,
    out_dir=".",
    name: str = "profile",
    instance: str | None = None,
) -> TorchCapture:
    """Profile ``steps`` training steps of a PyTorch model; write the trace and the profile.

    Parameters
    ----------
    model : torch.nn.Module
        Moved to the GPU (CUDA) where there is one, else run on the CPU.
    loss_fn : callable
        ``loss_fn(model(inputs), targets)`` -> a scalar tensor.
    optimizer : torch.optim.Optimizer
        Over ``model``'s parameters.
    batch : tuple
        ``(inputs, targets)``; ``inputs`` a tensor or a tuple of tensors (``model(*inputs)``).
    steps : int
        Steps counted in the profile (1..100); one more is profiled and dropped as warm-up.
    warmup : int
        Unprofiled steps first (0..1000): allocation, cuDNN autotuning.
    latency_steps : int
        Unprofiled steps timed one by one (1..10,000); their median is ``batch_latency_s``.
    amp : {None, "fp16", "bf16"}
        Autocast dtype; ``"fp16"`` also scales the loss with a GradScaler.
    channels_last : bool
        Model and 4-D inputs in ``torch.channels_last`` memory format.
    out_dir, name
        Files ``<name>.json``, ``<name>.meta.json`` and ``<name>.pt.trace.json.gz`` in
        ``out_dir``; each new, or one PROFET wrote and nobody changed since.
    instance : str, optional
        The instance it runs on, written into the profile.

    Returns
    -------
    TorchCapture

    Raises
    ------
    ProfetValueError
        A bad option or output path (before any run); the user's step raising; a trace the
        reader refuses (a CPU run: no GPU kernels), the raw trace then kept and named.
    """
    _whole("steps", steps, 1, MAX_STEPS)
    _whole("warmup", warmup, 0, MAX_WARMUP)
    _whole("latency_steps", latency_steps, 1, MAX_LATENCY_STEPS)
    if amp not in AMP:
        raise ProfetValueError(f"amp {quote(amp)} is not allowed; allowed: None, 'fp16', 'bf16'")
    paths = check_torch_out(out_dir, name)
    torch = require_torch()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    step = _train_step(torch, device, model, loss_fn, optimizer, batch, amp, channels_last)
    for _ in range(warmup):
        step()
    _sync(torch, device)
    latency = _median_step(torch, device, step, latency_steps)
    raw = _profiled(torch, device, step, steps)
    return _write(paths, raw, latency, device.type, amp, channels_last, instance, torch.__version__)


def _to(torch, device, value, channels_last: bool):
    if isinstance(value, torch.Tensor):
        value = value.to(device)
        if channels_last and value.dim() == 4 and value.is_floating_point():
            value = value.contiguous(memory_format=torch.channels_last)
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(_to(torch, device, v, channels_last) for v in value)
    return value


def _train_step(torch, device, model, loss_fn, optimizer, batch, amp, channels_last):
    """A zero-argument function running one training step (errors: ProfetValueError)."""
    if not isinstance(model, torch.nn.Module):
        raise ProfetValueError(f"model is {type(model).__name__}, not a torch.nn.Module")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise ProfetValueError(f"optimizer is {type(optimizer).__name__}, not a torch.optim one")
    if not callable(loss_fn):
        raise ProfetValueError(f"loss_fn is {type(loss_fn).__name__}, not callable")
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ProfetValueError("batch must be (inputs, targets)")
    model.to(device)
    if channels_last:
        model.to(memory_format=torch.channels_last)
    inputs, targets = (_to(torch, device, v, channels_last) for v in batch)
    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(amp)
    scaler = _scaler(torch, device, amp == "fp16")

    def step():
        try:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
                loss = loss_fn(model(*args), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        except Exception as exc:  # the user's model, loss or optimizer
            text = " ".join(repr(exc).split())[:300]
            raise ProfetValueError(f"the training step raised {text}") from None

    return step


def _scaler(torch, device, enabled: bool):
    """``torch.amp.GradScaler`` (torch >= 2.3), else ``torch.cuda.amp.GradScaler``."""
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler(device.type, enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled and device.type == "cuda")


def _sync(torch, device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _median_step(torch, device, step, n: int) -> float:
    """Median of ``n`` steps timed one by one, each waited for (seconds)."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        step()
        _sync(torch, device)
        times.append(time.perf_counter() - start)
    return float(statistics.median(times))


def _profiled(torch, device, step, steps: int) -> bytes:
    """The Kineto JSON of ``steps + 1`` profiled steps (the first dropped by the reader)."""
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=steps + 1, repeat=1)
    with tempfile.TemporaryDirectory(prefix="profet-torch-") as tmp:
        path = Path(tmp) / "trace.json"

        def ready(prof):
            prof.export_chrome_trace(str(path))

        with torch.profiler.profile(
            activities=acts, record_shapes=True, schedule=schedule, on_trace_ready=ready
        ) as prof:
            for _ in range(steps + 2):
                step()
                prof.step()
        _sync(torch, device)
        if not path.is_file():
            raise ProfetError("torch.profiler wrote no trace")
        return path.read_bytes()


def torch_profile_document(profile: TraceProfile, batch_latency_s: float, instance=None) -> dict:
    """The profile JSON written: PROFET's object form with the trace table's meta keys.

    ``{"ops": {column: us}, "steps": ..., "batch_latency_s": <unprofiled median>, "framework":
    "pytorch", "gpu_name": ..., "gpu_memory_gib": ..., "gpu_sm_count": ...,
    "gpu_compute_capability": ..., "world_size": ..., "kernels": ..., "autocast": ...,
    "host_launch_us": ..., "channels_last": ...}``; keys the trace does not tell are left out.
    """
    doc = {"ops": dict(profile.ops), "steps": profile.steps}
    if MIN_LATENCY_S <= batch_latency_s <= MAX_LATENCY_S:
        doc[LATENCY_COLUMN] = float(batch_latency_s)
    doc.update({k: v for k, v in profile.meta().items() if v is not None})
    if instance:
        doc["instance"] = str(instance)
    return doc


def _write(paths, raw, latency, device, amp, channels_last, instance, version) -> TorchCapture:
    """Write the trace, then the profile the reader makes of it (or, refused, only the trace and
    the metadata saying why) and the metadata."""
    profile_path, meta_path, trace_path = paths
    data = gzip.compress(raw, mtime=0)
    try:
        profile_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(trace_path, data)
    except OSError as exc:
        raise ProfetError(f"cannot write {str(trace_path)!r}: {exc.strerror}") from None
    files = {trace_path.name: hashlib.sha256(data).hexdigest()}
    record = {"framework": "pytorch", "torch_version": version, "device": device}
    record.update(amp=amp, channels_last=channels_last, batch_latency_s=latency)
    try:
        profile = read_trace(data, trace_path.name)
    except ProfetValueError as exc:
        _write_record(meta_path, {**record, "refused": str(exc), "profet_files": files})
        where = "on this machine's CPU (no GPU)" if device == "cpu" else f"on {device}"
        raise ProfetValueError(
            f"the run {where} wrote the raw trace {str(trace_path)!r} but no profile: {exc}"
        ) from None
    doc = torch_profile_document(profile, latency, instance)
    text = (json.dumps(doc, indent=1) + "\n").encode()
    files[profile_path.name] = hashlib.sha256(text).hexdigest()
    record.update(profiled_latency_s=profile.batch_latency_s, notes=list(profile.notes))
    try:
        write_atomic(profile_path, text)
    except OSError as exc:
        raise ProfetError(f"cannot write {str(profile_path)!r}: {exc.strerror}") from None
    _write_record(meta_path, {**record, "profet_files": files})
    return TorchCapture(
        profile_path, meta_path, trace_path, latency, profile.batch_latency_s, device, profile
    )


def _write_record(path: Path, record: dict) -> None:
    try:
        write_atomic(path, (json.dumps(record, indent=1) + "\n").encode())
    except OSError as exc:
        raise ProfetError(f"cannot write {str(path)!r}: {exc.strerror}") from None


def load_factory(spec: str):
    """``MODULE:FACTORY`` or ``path/to/file.py:FACTORY`` -> what ``FACTORY()`` returns, checked
    to be ``(model, loss_fn, optimizer, batch)``.

    Raises
    ------
    ProfetValueError
        No ``:``, a module that does not import or exits, no such callable, a factory that raises
        or returns something else.
    """
    module_name, sep, attr = str(spec).rpartition(":")
    if not sep or not module_name or not attr.isidentifier():
        raise ProfetValueError(
            f"--torch {quote(spec)}: give MODULE:FACTORY or path/file.py:FACTORY, where "
            "FACTORY() returns (model, loss_fn, optimizer, batch)"
        )
    module = _import(module_name, spec)
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ProfetValueError(f"--torch {quote(spec)}: {module_name} defines no {attr}()")
    try:
        made = factory()
    except SystemExit as exc:
        raise ProfetValueError(f"--torch {quote(spec)}: {attr}() exits ({exc.code!r})") from None
    except Exception as exc:  # user code
        text = " ".join(repr(exc).split())[:300]
        raise ProfetValueError(f"--torch {quote(spec)}: {attr}() raised {text}") from None
    if not isinstance(made, (tuple, list)) or len(made) != 4:
        raise ProfetValueError(
            f"--torch {quote(spec)}: {attr}() must return (model, loss_fn, optimizer, batch); "
            f"it returned {type(made).__name__}"
        )
    return tuple(made)


def _import(module_name: str, spec: str):
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise ProfetValueError(f"--torch {quote(spec)}: {str(path)!r} does not exist")
            found = importlib.util.spec_from_file_location(f"profet_torch_{path.stem}", path)
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
            return module
        sys.path.insert(0, str(Path.cwd()))  # as `python -m` finds a module here
        try:
            return importlib.import_module(module_name)
        finally:
            sys.path.remove(str(Path.cwd()))
    except ProfetValueError:
        raise
    except SystemExit as exc:
        raise ProfetValueError(f"--torch {quote(spec)}: the module exits ({exc.code!r})") from None
    except Exception as exc:  # user code, or a module that is not there
        text = " ".join(repr(exc).split())[:300]
        raise ProfetValueError(f"--torch {quote(spec)}: the module does not load: {text}") from None
