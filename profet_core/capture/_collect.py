"""``profet collect``: run the benchmark zoo here and append rows in the shared schema.

Every workload runs in its own subprocess (an out-of-memory error or a crash costs one workload),
its outcome goes to ``DIR/status.csv`` (``ok`` or ``failed`` with the error kind), successful ones
add a row to ``DIR/profiles.parquet`` and ``DIR/latencies.parquet``. Tables are rewritten
atomically (temporary file + rename), a workload's rows are replaced rather than duplicated, and
workloads already in the status table are skipped, so a killed run resumes where it stopped.
``DIR/convention.json`` records the capture convention and zoo (``profet_core.inputs._convention``);
a folder of another convention is refused.

Text models (:mod:`._textzoo`) are collected the same way; their ``input_size`` is the sequence
length in tokens. ``latencies.parquet`` and ``status.csv`` say so in every row: ``model_kind``
(``cnn`` or ``text``) and ``seq_len`` (tokens; empty for a CNN), and ``latencies.parquet`` the
text model's ``vocab_size``; ``profiles.parquet`` stays the shared schema (key and op columns).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import ProfetError, ProfetFileNotFoundError, ProfetValueError
from ..inputs import _convention
from ..inputs._outputs import TEMP_PREFIX, folder_lock, folder_not_ours, walk_entries
from . import _zoo
from ._tables import (
    done_keys,
    drop_failed,
    model_name,
    read_table,
    record,
    write_table,
)

CATALOG_COLUMNS = ["instance", "gpu", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gib"]


@dataclass(frozen=True)
class CollectSummary:
    """Outcome of one ``collect`` call (counts of workloads; seconds of wall time)."""

    total: int
    ok: int
    failed: int
    skipped: int
    seconds: float


def check_models(models) -> list[str]:
    """Zoo names, the group names ``cnn`` and ``text`` (every zoo model of that kind) or
    existing ``.py``/``.keras`` files; anything else is refused up front. A model named twice
    runs once."""
    out = []
    for spec in models:
        if spec in _zoo.GROUPS:
            out.extend(_zoo.GROUPS[spec]())
        elif _zoo.zoo_kind(spec):
            out.append(spec)
        elif Path(spec).suffix in (".py", ".keras"):
            if not Path(spec).is_file():
                raise ProfetFileNotFoundError(f"model file {spec!r} does not exist")
            out.append(str(Path(spec).resolve()))
        else:
            raise ProfetValueError(
                f"model {spec!r} is not in the zoo ({', '.join(_zoo.zoo_names())}), a group "
                f"({', '.join(_zoo.GROUPS)}) nor a .py/.keras file"
            )
    return list(dict.fromkeys(out))


def check_out_dir(out: str | Path) -> Path:
    """Create ``out`` if needed and make sure files can be written there."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ProfetError(f"output folder {str(out)!r} is not writable: {exc.strerror}") from None
    return out


def run_workload(
    w, instance, steps_per_epoch, latency_steps, timeout, python=None, optimizer=None
) -> dict:
    """Run one workload in a subprocess; the worker's JSON result or a classified failure."""
    with tempfile.TemporaryDirectory(prefix="profet-collect-") as tmp:
        result = Path(tmp) / "result.json"
        cmd = [python or sys.executable, "-m", "profet_core.capture._worker"]
        cmd += ["--model", w.model, "--input-size", str(w.input_size)]
        cmd += ["--batch-size", str(w.batch_size), "--instance", instance]
        cmd += ["--latency-steps", str(latency_steps), "--result", str(result)]
        if steps_per_epoch:
            cmd += ["--steps-per-epoch", str(steps_per_epoch)]
        cmd += ["--model-kind", w.kind] if w.kind else []  # "": a .keras file's input decides
        cmd += ["--optimizer", optimizer] if optimizer else []
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"ok": False, "error_kind": "timeout", "message": f"over {timeout}s"}
        if result.is_file():
            return json.loads(result.read_text())
        tail = (proc.stderr or "").strip().splitlines()[-1:] or [""]
        kind = "oom" if "out of memory" in tail[0].lower() else "crash"
        return {"ok": False, "error_kind": kind, "message": f"exit {proc.returncode}: {tail[0]}"}


class Progress:
    """One stderr line: ``[done/total] ok N, failed M, remaining R, ~ETA``."""

    def __init__(self, total: int, stream=None):
        self.total, self.stream = total, stream or sys.stderr
        self.start = time.monotonic()
        self.ok = self.failed = 0

    def __call__(self, ok: bool, label: str) -> None:
        self.ok += bool(ok)
        self.failed += not ok
        done = self.ok + self.failed
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (self.total - done)
        line = (
            f"[{done}/{self.total}] ok {self.ok}, failed {self.failed}, remaining "
            f"{self.total - done}, {elapsed:.0f}s, ~{eta:.0f}s left | {label}"
        )
        end = "\n" if done == self.total else ""
        print(f"\r{line[:110].ljust(110)}", end=end, file=self.stream, flush=True)


def collect(
    instance: str,
    out: str | Path,
    models=None,
    input_sizes=None,
    batch_sizes=None,
    repeats: int = 1,
    quick: bool = False,
    steps_per_epoch: int | None = None,
    latency_steps: int = 50,
    timeout: float = 3600,
    retry_failed: bool = False,
    progress=True,
    model_kind: str | None = None,
    optimizer: str | None = None,
) -> CollectSummary:
    """Run the zoo's workload grid on this machine and append the results to ``out``.

    Parameters
    ----------
    instance : str
        Name of this machine's instance type, written to every row.
    out : path-like
        Dataset folder: ``profiles.parquet``, ``latencies.parquet`` (shared schema) and
        ``status.csv`` (every workload's outcome) are created or extended.
    models : sequence of str, optional
        Zoo names, ``cnn``/``text`` (every zoo model of that kind) or model files. Default:
        the CNN zoo, or with ``quick`` the quick subset.
    input_sizes, batch_sizes : sequences, optional
        Pixels of a CNN and tokens of a text model, and batch sizes. Default per kind: the
        grid's (CNN ``_zoo.INPUT_SIZES``, text ``_textzoo.SEQ_LENS``), or the quick subset's.
    repeats : int
        Repetitions ``exp01``..``expNN``.
    quick : bool
        The quick subset, epochs capped at ``_zoo.QUICK_STEPS`` steps.
    steps_per_epoch : int, optional
        Fixed steps per epoch (default: original data size / batch size).
    latency_steps, timeout : int, float
        Timed steps of the latency run; seconds before a workload is killed.
    retry_failed : bool
        Run workloads recorded as failed again.
    progress : bool
        Progress line on stderr.
    model_kind : {"cnn", "text"}, optional
        Kind of the ``.py`` model files (default ``cnn``; zoo names and ``.keras`` files know
        theirs).
    optimizer : {"sgd", "adadelta", "adam"}, optional
        Default SGD (the convention); another names the folder's convention
        (``profet-2021+adadelta``), so its rows never join SGD rows.

    Returns
    -------
    CollectSummary
    """
    from ..inputs._rules import check_instance_names
    from ._check import check_collect_args, check_optimizer, check_resume

    check_instance_names([instance], "--instance")  # '->' and the like break pair keys
    check_optimizer(optimizer)
    models = check_models(models or (_zoo.QUICK_MODELS if quick else list(_zoo.ZOO)))
    kinds = [_spec_kind(m, model_kind) for m in models]
    check_collect_args(input_sizes, batch_sizes, repeats, latency_steps, steps_per_epoch,
                       {k or "cnn" for k in kinds})  # fmt: skip
    grid = _grid(models, kinds, input_sizes, batch_sizes, repeats, quick)
    if steps_per_epoch is not None and steps_per_epoch < 2:
        raise ProfetValueError(f"steps per epoch {steps_per_epoch} is not allowed; needs >= 2")
    check_resume(Path(out))  # tampered resume files: refused before any workload runs
    check_collect_out(out)  # before any work
    out = check_out_dir(out)
    with folder_lock(out):  # one collect at a time extends a folder
        _claim_convention(out, optimizer)
        return _collect_grid(
            out,
            grid,
            instance,
            quick,
            steps_per_epoch,
            latency_steps,
            timeout,
            retry_failed,
            progress,
            optimizer,
        )


def _spec_kind(spec: str, model_kind: str | None) -> str:
    """A model's kind for the grid: the zoo's, ``model_kind`` (default cnn) for a ``.py`` file,
    ``""`` for a ``.keras`` file (its input decides when the worker loads it)."""
    if _zoo.zoo_kind(spec):
        return _zoo.zoo_kind(spec)
    if model_kind:
        return model_kind
    return "" if Path(spec).suffix == ".keras" else "cnn"


def _grid(models, kinds, input_sizes, batch_sizes, repeats, quick) -> list:
    """The workload grid, each kind at its own default sizes unless sizes are given;
    repetition by repetition like :func:`_zoo.workload_grid`."""
    from . import _textzoo

    grid = []
    for kind in dict.fromkeys(kinds):
        group = [m for m, k in zip(models, kinds, strict=True) if k == kind]
        if kind == "text":
            default = _textzoo.QUICK_SEQ_LENS if quick else _textzoo.SEQ_LENS
        else:
            default = _zoo.QUICK_INPUT_SIZES if quick else _zoo.INPUT_SIZES
        batches = batch_sizes or (_zoo.QUICK_BATCH_SIZES if quick else _zoo.BATCH_SIZES)
        grid += _zoo.workload_grid(group, input_sizes or default, batches, repeats,
                                   [kind] * len(group))  # fmt: skip
    return sorted(grid, key=lambda w: w.exp)  # stable: each kind's order kept within a repeat


#: The files ``collect`` writes into its folder (with ``--gpu``: ``instances.csv``).
COLLECT_FILES = (
    "profiles.parquet",
    "latencies.parquet",
    "status.csv",
    "instances.csv",
    _convention.CONVENTION_FILE,
)


def check_collect_out(out) -> None:
    """The write rule for ``collect --out``: a new or empty folder, or one ``collect`` made
    (its ``status.csv`` or ``convention.json``) holding only the files it writes, every
    subfolder readable.

    Raises
    ------
    ProfetValueError
        Naming the folder and the first file that is not collect's; nothing was changed.
    """
    from ..inputs._outputs import check_path_name, inside_artifacts

    check_path_name(out, "--out")
    artifacts = inside_artifacts(out)
    if artifacts is not None:
        raise ProfetValueError(
            f"--out {str(out)!r} is inside the artifacts folder {str(artifacts)!r}, whose "
            "checksums it would break; write the dataset elsewhere (nothing was changed)"
        )
    folder = Path(out)
    if not os.path.lexists(folder):
        return
    entries = [] if folder.is_symlink() or not folder.is_dir() else list(walk_entries(folder))
    names = {rel for rel, _ in entries}
    temps = {n for n in names if n.startswith(TEMP_PREFIX)}  # a killed run's: left alone
    reason = (
        folder_not_ours(folder, {*COLLECT_FILES, *temps}, None, "not a file collect writes")
        if entries
        else None
    )
    if folder.is_symlink() or not folder.is_dir():
        reason = "it is a link or not a folder"
    elif entries and not names & {"status.csv", _convention.CONVENTION_FILE}:
        reason = "no status.csv or convention.json of `profet collect`"
    if reason:
        raise ProfetValueError(
            f"--out {str(out)!r} is not a dataset folder `profet collect` made ({reason}); give "
            "a new folder (nothing was changed)"
        )


def _collect_grid(
    out, grid, instance, quick, steps_per_epoch, latency_steps, timeout, retry_failed, progress,
    optimizer=None,
) -> CollectSummary:  # fmt: skip
    if retry_failed:
        drop_failed(out)
    done = done_keys(out)
    todo = [
        w
        for w in grid
        if (w.exp, instance, model_name(w.model), w.input_size, w.batch_size) not in done
    ]
    start = time.monotonic()
    bar = Progress(len(todo)) if progress and todo else None
    ok = 0
    for w in todo:
        spe = steps_per_epoch
        if quick and not spe:
            spe = _zoo.steps_per_epoch(
                w.input_size, w.batch_size, cap=_zoo.QUICK_STEPS, kind=w.kind or "cnn"
            )
        t0 = time.monotonic()
        result = run_workload(w, instance, spe, latency_steps, timeout, optimizer=optimizer)
        record(out, w, instance, result, time.monotonic() - t0)
        ok += bool(result["ok"])
        if bar:
            unit = "tok" if w.kind == "text" else "px"
            label = f"{model_name(w.model)} {w.input_size}{unit} b{w.batch_size} {w.exp}"
            bar(result["ok"], label if result["ok"] else f"{label} FAILED {result['error_kind']}")
    return CollectSummary(
        len(grid), ok, len(todo) - ok, len(grid) - len(todo), time.monotonic() - start
    )


def _claim_convention(out: Path, optimizer: str | None = None) -> None:
    """Record this convention in ``out``; refuse a folder that holds another one's rows."""
    from ._textzoo import TEXT_ZOO_VERSION

    name = _convention.convention_name(optimizer)
    here = (name, _convention.ZOO_VERSION)
    has_rows = (out / "status.csv").is_file() or (out / _convention.CONVENTION_FILE).is_file()
    found = _convention.folder_convention(out) if has_rows else here
    if found != here:
        raise ProfetValueError(
            f"{str(out)!r} holds rows of convention {found[0]!r} (zoo {found[1]!r}), not "
            f"{here[0]!r} (zoo {here[1]!r}): collect into a new folder"
        )
    parts = dict(_convention.CONVENTION_PARTS)
    if optimizer not in (None, "sgd"):
        parts["optimizer"] = f"legacy {optimizer}"
    details = {"made_by": "profet collect", "parts": parts, "text_zoo": TEXT_ZOO_VERSION}
    _convention.write_folder_convention(out, details, name)


def write_catalog_line(out: str | Path, instance: str, gpu: str, usd_per_hour: float, **extra):
    """Add or update ``instance``'s line in ``out/instances.csv`` (the catalog's columns).

    Parameters
    ----------
    out : path-like
        Dataset folder.
    instance, gpu : str
        Instance type and its GPU's name.
    usd_per_hour : float
        On-demand price (finite, >= 0).
    **extra
        Other catalog columns (``gpu_count``, ``gpu_memory_gb``, ``vcpus``, ``memory_gib``).
    """
    price = float(usd_per_hour)
    if not price >= 0 or price == float("inf"):
        raise ProfetValueError(f"usd per hour {usd_per_hour!r} is not allowed; needs >= 0")
    out = check_out_dir(out)
    path = out / "instances.csv"
    old = read_table(path)
    row = {"instance": instance, "gpu": gpu, **extra, "usd_per_hour": price}
    if old is not None:
        old = old[old["instance"].astype(str) != instance]
    table = pd.concat([old, pd.DataFrame([row])], ignore_index=True) if old is not None else None
    table = pd.DataFrame([row]) if table is None else table
    cols = [c for c in (*CATALOG_COLUMNS, "usd_per_hour") if c in table.columns]
    write_table(table[cols + [c for c in table.columns if c not in cols]], path)
    return path
