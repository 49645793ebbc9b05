"""Checks on captured profiles that need no TensorFlow (safe on the prediction path)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .._schema import KEY
from ..errors import ProfetError, ProfetValueError
from ..inputs._catalog import MAX_PRICE as MAX_PRICE  # collect --usd-per-hour: the catalog bound
from ..inputs._sanity import MIN_DEVICE_US, NO_GPU, device_busy_us

NO_GPU_MESSAGE = f"the profile has no GPU device time: {NO_GPU}"


def predict_suggestion(profile: pd.DataFrame, path, instance, batch_latency_s) -> str:
    """What ``profet profile`` says to do next with a profile it wrote: only what will work.

    Parameters
    ----------
    profile : pandas.DataFrame
        The profile written (one row).
    path : path-like
        Where it was written.
    instance : str or None
        The instance it was taken on (``--instance``), if named.
    batch_latency_s : float
        The measured batch latency.

    Returns
    -------
    str
        A ``profet predict`` command, or, for a profile without GPU device time (taken on a
        CPU), which ``profet predict`` refuses, why there is none.
    """
    import shlex

    if not has_gpu_ops(profile).all():
        return (
            "no `profet predict` command to suggest: the profile has no GPU device time (taken "
            "on a CPU), which prediction refuses; profile on the GPU instance you predict from"
        )
    anchor = shlex.quote(instance) if instance else "ANCHOR"
    command = (
        f"predict with: profet predict --anchor {anchor} --profile {shlex.quote(str(path))} "
        f"--anchor-latency-ms {batch_latency_s * 1e3:.3f}"
    )
    if not instance:
        command += " (ANCHOR: the instance this ran on, one of `profet instances`)"
    return command


def has_gpu_ops(profiles: pd.DataFrame) -> pd.Series:
    """Per row, whether its ``Device_<Op>`` busy time is at least 1 us (``MIN_DEVICE_US``).

    Parameters
    ----------
    profiles : pandas.DataFrame
        Shape (n_profiles, n_ops), op columns in microseconds (as ``read_profile`` returns).

    Returns
    -------
    pandas.Series of bool, length n_profiles
    """
    return pd.Series(device_busy_us(profiles) >= MIN_DEVICE_US, index=profiles.index)


def check_gpu_profile(profiles: pd.DataFrame) -> None:
    """Refuse profiles without GPU device ops, saying plainly why.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Profiles as ``profet_core.read_profile`` returns them.

    Raises
    ------
    ProfetValueError
        If any row has less than 1 us of ``Device_<Op>`` busy time; names the rows.
    """
    gpu = has_gpu_ops(profiles)
    if not gpu.all():
        rows = [int(i) for i in profiles.index[~gpu.to_numpy()][:5]]
        where = "" if len(profiles) == 1 else f" (row(s) {rows})"
        raise ProfetValueError(NO_GPU_MESSAGE.replace("the profile has", f"the profile{where} has"))


#: What ``profet profile`` and ``profet collect`` can run (checked before TensorFlow starts):
#: square inputs of MIN_INPUT_PX..MAX_INPUT_PX px (PROFET's data spans 32..256), label classes,
#: timed steps, steps per epoch and repetitions.
MIN_INPUT_PX, MAX_INPUT_PX = 8, 1024
MAX_CLASSES = 100_000
MAX_LATENCY_STEPS = 10_000
MAX_STEPS_PER_EPOCH = 1_000_000
MAX_REPEATS = 100
#: ``--optimizer`` values -> legacy Keras optimizer: the convention's SGD, and two that text
#: models are often trained with (PROFET's authors' Reuters rows ran Adadelta:
#: ``ResourceApplyAdadelta``, and for the embedding ``ResourceSparseApplyAdadelta``).
OPTIMIZERS = {"sgd": "SGD", "adadelta": "Adadelta", "adam": "Adam"}
#: The synthetic training and validation arrays (float32 images and one-hot labels) are held
#: in memory; beyond this they are refused, saying which flag to lower.
MAX_SYNTHETIC_BYTES = 8 * 2**30


def _whole(name: str, value, low: int, high: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok or not low <= value <= high:
        from .._messages import show_number

        raise ProfetValueError(
            f"{name} {show_number(value)} is not allowed; it must be an integer {low:,}..{high:,}"
        )
    return value


def check_warmup_steps(warmup_steps) -> int:
    """Untimed steps before the latency run's timed ones: an integer 0..MAX_LATENCY_STEPS."""
    return _whole("warm-up steps", warmup_steps, 0, MAX_LATENCY_STEPS)


def check_capture_args(
    batch_size,
    input_size,
    classes=None,
    steps_per_epoch=None,
    latency_steps=50,
    model_kind="cnn",
    vocab_size=None,
) -> None:
    """Refuse a workload the capture cannot run, before TensorFlow starts.

    Parameters
    ----------
    batch_size, input_size : int
        Images (sequences) per step (at most one fewer than the synthetic training set, so that
        an epoch has the 2 steps the trace needs) and square input side (px), or for a text
        model the sequence length (tokens).
    classes, steps_per_epoch : int, optional
        Label classes (2..MAX_CLASSES) and steps per epoch (2..MAX_STEPS_PER_EPOCH).
    latency_steps : int
        Timed steps of the latency run (1..MAX_LATENCY_STEPS).
    model_kind : {"cnn", "text"}
        What ``input_size`` measures and which synthetic data is made.
    vocab_size : int, optional
        A text model's vocabulary (words; ``_textzoo.MIN_VOCAB..MAX_VOCAB``).

    Raises
    ------
    ProfetValueError
        Naming the value, what is allowed, and for memory, which flag to lower.
    """
    from . import _zoo
    from ._textzoo import TEXT_CLASSES

    if model_kind not in _zoo.KINDS:
        raise ProfetValueError(f"model kind {model_kind!r} is not allowed; use one of {_zoo.KINDS}")
    if model_kind == "text":
        size, train, test, item = _text_sizes(input_size, vocab_size)
        what = f"{size:,} tokens"
    else:
        size = _whole("input size", input_size, MIN_INPUT_PX, MAX_INPUT_PX)
        nearest = min(_zoo.DATASET_IMAGES, key=lambda s: abs(s - size))
        train, test = _zoo.DATASET_IMAGES[nearest], _zoo.TEST_IMAGES[nearest]
        item, what = size * size * 3, f"{size} px"
    batch = _whole("batch size", batch_size, 1, 1_000_000)
    if batch >= train:
        raise ProfetValueError(
            f"batch size {batch:,} is larger than the synthetic training set at {what} "
            f"({train:,} {'sequences' if model_kind == 'text' else 'images'}, the original "
            f"data's): an epoch would be 1 step, and the trace needs 2; use a batch size of at "
            f"most {train - 1:,}"
        )
    if classes is not None:
        _whole("classes", classes, 2, MAX_CLASSES)
    if steps_per_epoch is not None:
        _whole("steps per epoch", steps_per_epoch, 2, MAX_STEPS_PER_EPOCH)
    _whole("latency steps", latency_steps, 1, MAX_LATENCY_STEPS)
    n = min(train, (steps_per_epoch or -(-train // batch)) * batch)
    n += max(batch, test * n // train)
    default = TEXT_CLASSES if model_kind == "text" else _zoo.classes_for(size)
    need = n * (item + (classes or default)) * 4
    if need > MAX_SYNTHETIC_BYTES:
        raise ProfetValueError(
            f"the synthetic data for batch {batch:,} at {what} would take "
            f"{need / 2**30:,.1f} GiB of memory; the limit is {MAX_SYNTHETIC_BYTES / 2**30:.0f} "
            "GiB: use a smaller input size, fewer classes or --steps-per-epoch"
        )


def _text_sizes(seq_len, vocab_size) -> tuple[int, int, int, int]:
    """A text workload's sequence length, training and validation sequences, int32 per item."""
    from . import _textzoo as t

    size = _whole("sequence length (--input-size of a text model)", seq_len, t.MIN_SEQ_LEN,
                  t.MAX_SEQ_LEN)  # fmt: skip
    if vocab_size is not None:
        _whole("vocabulary size", vocab_size, t.MIN_VOCAB, t.MAX_VOCAB)
    return size, t.TEXT_TRAIN, t.TEXT_TEST, size


def check_optimizer(optimizer) -> None:
    """Refuse an optimizer the capture does not offer (None: the convention's SGD)."""
    if optimizer is not None and optimizer not in OPTIMIZERS:
        raise ProfetValueError(
            f"optimizer {str(optimizer)[:40]!r} is not allowed; use one of {', '.join(OPTIMIZERS)}"
        )


def check_collect_args(
    input_sizes, batch_sizes, repeats, latency_steps, steps_per_epoch, kinds=("cnn",)
):
    """Refuse ``profet collect`` arguments beyond what it can run (see
    :func:`check_capture_args`), before any workload or the grid is built; ``input_sizes``
    must suit every model kind in ``kinds`` (pixels of a CNN, tokens of a text model)."""
    from . import _textzoo as t

    _whole("repeats", repeats, 1, MAX_REPEATS)
    for size in input_sizes or ():
        if "cnn" in kinds:
            _whole("input size", size, MIN_INPUT_PX, MAX_INPUT_PX)
        if "text" in kinds:
            _whole("sequence length (--input-sizes of a text model)", size, t.MIN_SEQ_LEN,
                   t.MAX_SEQ_LEN)  # fmt: skip
    for batch in batch_sizes or ():
        _whole("batch size", batch, 1, 1_000_000)
    _whole("latency steps", latency_steps, 1, MAX_LATENCY_STEPS)
    if steps_per_epoch is not None:
        _whole("steps per epoch", steps_per_epoch, 2, MAX_STEPS_PER_EPOCH)


#: A ``.keras`` archive's JSON members are small; its weights may be large, not unbounded.
MAX_KERAS_JSON_BYTES = 64 * 2**20
MAX_KERAS_BYTES = 16 * 2**30


def check_keras_archive(path) -> None:
    """Refuse a ``.keras`` zip whose members would not fit in memory, from the sizes its
    directory declares, before Keras reads any (a 4 GiB ``config.json`` took 3 GB in 8 s).
    A file that is no zip is left to Keras (older formats)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    for m in members:
        limit = MAX_KERAS_JSON_BYTES if m.filename.endswith(".json") else MAX_KERAS_BYTES
        if m.file_size > limit:
            raise ProfetValueError(
                f"model file {str(path)!r}: its member {m.filename[:80]!r} is "
                f"{m.file_size / 2**20:,.0f} MiB uncompressed; the limit is "
                f"{limit / 2**20:,.0f} MiB"
            )
    total = sum(m.file_size for m in members)
    if total > MAX_KERAS_BYTES:
        raise ProfetValueError(
            f"model file {str(path)!r} is {total / 2**30:,.1f} GiB uncompressed; the limit is "
            f"{MAX_KERAS_BYTES / 2**30:.0f} GiB"
        )


#: Largest ``status.csv`` and ``instances.csv`` read when resuming (bytes): a full zoo grid's
#: status table is well under 1 MB.
MAX_RESUME_BYTES = 32 * 2**20


def _resume_error(path: Path, what: str) -> ProfetValueError:
    return ProfetValueError(
        f"cannot resume from {str(path)[:200]!r}: {what}; it is not as `profet collect` wrote "
        "it: restore it, or collect into a new folder"
    )


def check_resume(out: Path) -> None:
    """Refuse a folder whose resume files were tampered with, before any workload runs.

    ``status.csv`` must have the status columns, text keys, whole sizes in range and statuses
    ``ok``/``failed``; ``profiles``/``latencies`` tables must read and hold the key columns.
    A tampered file once raised a traceback after the whole collection (and on every rerun).
    """
    import io

    from .._schema import MAX_BATCH_SIZE, MAX_INPUT_SIZE
    from ..inputs._safe_read import read_bounded

    path = out / "status.csv"
    if path.exists() or path.is_symlink():
        try:
            data = read_bounded(path, MAX_RESUME_BYTES, "status table")
            status = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
        except ProfetError as exc:
            raise _resume_error(path, str(exc)[:200]) from None
        except Exception as exc:  # pandas raises many types for a malformed CSV
            raise _resume_error(path, f"it does not read as CSV ({type(exc).__name__})") from None
        missing = [c for c in (*KEY, "status") if c not in status.columns]
        if missing:
            raise _resume_error(path, f"it lacks the column(s) {missing}")
        for col, top in (("input_size", MAX_INPUT_SIZE), ("batch_size", MAX_BATCH_SIZE)):
            values = pd.to_numeric(status[col], errors="coerce")
            bad = ~(values.between(1, top) & (values == values.round()))
            if bad.any():
                i = int(bad.to_numpy().argmax())
                raise _resume_error(
                    path, f"{col} {str(status[col].iloc[i])[:40]!r} on line {i + 2}"
                )
        bad = ~status["status"].isin(["ok", "failed"])
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise _resume_error(
                path, f"status {str(status['status'].iloc[i])[:40]!r} on line {i + 2}"
            )
    for name in ("profiles.parquet", "latencies.parquet"):
        table_path = out / name
        if not table_path.exists():
            continue
        try:
            table = pd.read_parquet(table_path)
        except Exception as exc:  # pyarrow raises many types for a corrupt file
            raise _resume_error(table_path, f"it does not read ({type(exc).__name__})") from None
        missing = [c for c in KEY if c not in table.columns]
        if missing:
            raise _resume_error(table_path, f"it lacks the column(s) {missing}")


def check_catalog_file(out) -> None:
    """Refuse a malformed ``out/instances.csv`` before a collection that will rewrite it."""
    from ..inputs._catalog import validate_catalog
    from ..inputs._csv import read_csv_file

    path = Path(out) / "instances.csv"
    if not path.exists():
        return
    try:
        validate_catalog(read_csv_file(path, MAX_RESUME_BYTES, "instance catalog"))
    except ProfetError as exc:
        raise _resume_error(path, str(exc)[:200]) from None
