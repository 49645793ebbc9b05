"""Replacing an artifacts folder so that nothing PROFET did not write is ever touched.

* A folder is replaced only if it is a PROFET artifacts folder: a ``manifest.json`` of ours and
  no file, link or special file that the manifest does not list (:func:`not_ours`).
* The new version is written into a temporary folder beside it, ``.profet-train-<nonce>``, made
  together with an owner file ``.profet-train-<nonce>.owner`` (our pid and nonce). Only folders
  with such an owner file are ever removed, and a later run removes those of a killed run.
* On Linux the two folders are exchanged atomically (``renameat2(RENAME_EXCHANGE)``), so at
  every instant the old or the new folder is complete at its path and the path stays a real
  folder; the old version then sits in the temporary folder and is removed. Elsewhere (or on a
  file system without the exchange) the old folder is first renamed to ``<temp>.old``, recorded
  in the owner file, and a run that finds the path missing puts it back.

``PROFET_TEST_STOP_AT=<step>`` makes the process kill itself (SIGKILL) at that step, so tests can
check that a kill at any point loses nothing (steps: :data:`STEPS`); ``PROFET_TEST_NO_EXCHANGE=1``
makes it use the portable swap.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import secrets
import shutil
import signal
import stat
import sys
import tempfile
from pathlib import Path

from ..errors import ProfetFileNotFoundError, ProfetValueError
from ..inputs._outputs import (
    check_path_name,
    folder_lock,
    folder_not_ours,
    inside_artifacts,
    marker_not_ours,
    read_record,
    refuse_overlap,
    remove_stale_locks,
    walk_entries,
    write_marker,
)

PREFIX = ".profet-train-"
OWNER = ".owner"
#: Where ``PROFET_TEST_STOP_AT`` can stop a run.
STEPS = ("temp-created", "before-swap", "old-moved", "after-swap", "old-removed")
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100


def use_exchange() -> bool:
    """Whether to swap with the atomic ``renameat2`` exchange (Linux). Tests set
    ``PROFET_TEST_NO_EXCHANGE`` to exercise the portable fallback; read at each swap, not at
    import, so a process forked after the import still follows its own environment."""
    return sys.platform.startswith("linux") and not os.environ.get("PROFET_TEST_NO_EXCHANGE")


def stop_at(step: str) -> None:
    """Test hook: SIGKILL this process when ``$PROFET_TEST_STOP_AT`` names ``step``."""
    if os.environ.get("PROFET_TEST_STOP_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)


def not_ours(folder: Path) -> str | None:
    """Why ``folder`` is not a PROFET artifacts folder we may replace (None if it is one): no
    manifest of ours, or a file it does not list, a link, a special file, a subfolder that
    cannot be read or an entry of another user (:func:`~profet_core.inputs._outputs.folder_not_ours`)."""
    if folder.is_symlink():
        return "it is a symbolic link"
    if not folder.is_dir():
        return "it is not a folder"
    manifest = read_record(folder / "manifest.json")
    if manifest is None:
        return "no readable manifest.json of PROFET"
    files = manifest.get("files")
    if not isinstance(files, dict) or not isinstance(manifest.get("format"), int):
        return "its manifest.json is not PROFET's"
    listed = {os.path.normpath(str(f)) for f in files} | {"manifest.json"}
    return folder_not_ours(folder, listed)


def check_out_folder(out, data=()) -> Path:
    """Refuse, before any work, an output folder PROFET may not replace or cannot write.

    Parameters
    ----------
    out : path-like
        The artifacts folder to write: absent, or a PROFET artifacts folder.
    data : sequence of path-like
        Dataset folders, which ``out`` may neither be, lie inside nor contain.

    Raises
    ------
    ProfetValueError
        ``out`` overlaps a dataset folder, exists and is not an artifacts folder, or its parent
        cannot be written.
    """
    check_path_name(out)
    out = Path(out)
    where = Path(os.path.abspath(out)).resolve()
    if where.parent.is_dir():
        clean_leftovers(where.parent)  # a killed run's: may restore ``out`` (portable swap)
    for d in data:
        d = Path(d).resolve()
        if where == d or d in where.parents or where in d.parents:
            raise ProfetValueError(
                f"output folder {str(out)!r} overlaps the dataset folder {str(d)!r}; "
                "write the artifacts elsewhere (nothing was changed)"
            )
    if out.exists() or out.is_symlink():
        reason = not_ours(out)
        if reason:
            raise ProfetValueError(
                f"output folder {str(out)!r} exists and is not a PROFET artifacts folder "
                f"({reason}); give a new folder or one PROFET wrote (nothing was changed)"
            )
    _probe_writable(where.parent)
    return out


def check_paths(data, out, validation=None) -> None:
    """What the CLI refuses before reading any data: a missing dataset folder, an output folder
    PROFET may not replace or cannot write (:func:`check_out_folder`), a ``validation`` folder
    that is not one of ``profet validate``."""
    for d in data:
        if not Path(d).is_dir():
            raise ProfetFileNotFoundError(f"dataset folder {str(d)!r} does not exist")
    check_out_folder(out, data)
    if validation is not None:
        check_validation_folder(validation)


def check_validation_folder(validation) -> None:
    """Refuse a ``--validation`` folder that is not one of ``profet validate``: no ``run.json``,
    a link or special file in it (a link to ``/dev/zero`` would be copied until the disk is
    full), a subfolder that cannot be read."""
    folder = Path(validation)
    if folder.is_symlink() or not (folder / "run.json").is_file():
        raise ProfetFileNotFoundError(
            f"--validation {str(validation)!r} is not a `profet validate --out DIR` folder "
            "(no run.json)"
        )
    for rel, st in walk_entries(folder):
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise ProfetValueError(
                f"--validation {str(validation)!r} holds {rel!r}, a link or a special file; "
                "give the folder `profet validate` wrote"
            )


def check_command_out(out, command: str, inputs=()) -> Path:
    """The write rule for the output folder of ``profet <command>`` (``validate``, ``doe
    design``, ``doe analyze``), checked before any work: a new or empty folder, or one this
    command wrote and nobody changed since (:func:`~profet_core.inputs._outputs.marker_not_ours`);
    never equal to, inside or containing an input, never inside an artifacts folder.

    Raises
    ------
    ProfetValueError
        Saying which rule and that nothing was changed.
    """
    check_path_name(out)
    out = Path(out)
    refuse_overlap(out, inputs)
    artifacts = inside_artifacts(out)
    if artifacts is not None:
        raise ProfetValueError(
            f"output folder {str(out)!r} is inside the artifacts folder {str(artifacts)!r}, "
            "whose checksums it would break; write elsewhere (nothing was changed)"
        )
    if out.exists() or out.is_symlink():
        reason = marker_not_ours(out, command)
        if reason:
            raise ProfetValueError(
                f"output folder {str(out)!r} exists and is not one `profet {command}` wrote "
                f"({reason}); give a new folder (nothing was changed)"
            )
    _probe_writable(Path(os.path.abspath(out)).resolve().parent)
    return out


@contextlib.contextmanager
def written_beside(out, command: str):
    """Yield a temporary folder beside ``out`` to write ``profet <command>``'s files into; then
    record them (:data:`~profet_core.inputs._outputs.MARKER`) and swap the folder in."""
    tmp = new_temp_folder(out)
    try:
        yield tmp
        write_marker(tmp, command)
        with folder_lock(out):
            replace_folder(tmp, Path(out), check=lambda o: marker_not_ours(o, command))
    finally:
        remove_temp(tmp)


def _probe_writable(parent: Path) -> None:
    """Make and remove a folder in the nearest existing ancestor of ``parent``."""
    probe = parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".profet-probe-", dir=probe))
    except OSError as exc:
        raise ProfetValueError(
            f"cannot write the output folder in {str(probe)!r}: {exc.strerror or exc}"
        ) from None


def new_temp_folder(out_dir) -> Path:
    """A temporary folder of ours beside ``out_dir`` (so the final rename stays on one disk).

    Leftovers of killed runs beside it (marked by their owner file) are removed first.
    """
    parent = Path(out_dir).resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(parent)
    nonce = secrets.token_hex(8)
    owner = parent / f"{PREFIX}{nonce}{OWNER}"
    # The owner file comes first: a folder of that name without it is never ours to remove.
    with open(owner, "x") as f:
        json.dump({"profet": "temporary folder", "pid": os.getpid(), "nonce": nonce}, f)
    tmp = parent / f"{PREFIX}{nonce}"
    tmp.mkdir(mode=0o755)
    stop_at("temp-created")
    return tmp


def _owner(path: Path) -> dict | None:
    """The owner record of a temporary folder ``path`` (its own file), if it is ours."""
    record = read_record(path.parent / (path.name + OWNER))
    if record is None or record.get("profet") != "temporary folder":
        return None
    if path.name != f"{PREFIX}{record.get('nonce')}" or not isinstance(record.get("pid"), int):
        return None
    if isinstance(record["pid"], bool) or record["pid"] <= 0:
        return None
    return record


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _rmtree(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)


def remove_temp(tmp: Path) -> None:
    """Remove a temporary folder of ours (and its ``.old`` and owner file); others are kept."""
    if _owner(tmp) is None:
        return
    old = tmp.with_name(tmp.name + ".old")
    _rmtree(tmp)
    _rmtree(old)
    stop_at("old-removed")
    if os.path.lexists(tmp) or os.path.lexists(old):  # kept marked: a later run retries
        return
    tmp.with_name(tmp.name + OWNER).unlink(missing_ok=True)


def clean_leftovers(parent: Path) -> None:
    """Remove the temporary folders of dead runs of ours in ``parent``, restoring first an
    artifacts folder that a kill left moved aside (the portable swap's only unsafe moment),
    and the lock files killed writers left."""
    remove_stale_locks(parent)
    for owner in parent.glob(f"{PREFIX}*{OWNER}"):
        tmp = owner.with_name(owner.name[: -len(OWNER)])
        record = _owner(tmp)
        if record is None or _alive(record["pid"]):  # a running training's (maybe ours)
            continue
        old, out = tmp.with_name(tmp.name + ".old"), record.get("out")
        if isinstance(out, str) and old.is_dir() and not os.path.lexists(out):
            os.rename(old, out)
        remove_temp(tmp)


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """``renameat2``; False where the system or the file system does not have it."""
    if not use_exchange():
        return False
    fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if fn is None:  # glibc < 2.28, or not glibc
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(dst))


def replace_folder(tmp: Path, out: Path, check=None) -> None:
    """Put the fully written temporary folder ``tmp`` at ``out``; remove the old one, if any.

    ``check(out)`` says why an existing ``out`` may not be replaced (default :func:`not_ours`:
    an artifacts folder); a file system that cannot rename it (a mount point, an overlay's lower
    layer) is said in one line, ``out`` untouched.

    Raises
    ------
    ProfetValueError
        ``out`` is (now) not a folder of ours, appeared while ``tmp`` was written, or cannot be
        replaced.
    """
    try:
        _replace(tmp, Path(out), check or not_ours)
    except OSError as exc:
        if not os.path.isdir(out) and os.path.isdir(str(tmp) + ".old"):
            os.rename(str(tmp) + ".old", out)  # the portable swap's first rename undone
        raise ProfetValueError(
            f"cannot put the new folder at {str(out)!r}: {exc.strerror or exc} (nothing there "
            "was changed; write to a new folder on a local disk)"
        ) from None


def _replace(tmp: Path, out: Path, check) -> None:
    stop_at("before-swap")
    if not os.path.lexists(out):
        if not _renameat2(tmp, out, _RENAME_NOREPLACE):
            if os.path.lexists(out):
                raise FileExistsError(errno.EEXIST, "appeared while training", str(out))
            os.rename(tmp, out)
        return
    reason = check(out)  # again: files may have been added while we worked
    if reason:
        raise ProfetValueError(
            f"output folder {str(out)!r} is not a folder PROFET wrote ({reason}); "
            "nothing was changed"
        )
    if not _renameat2(tmp, out, _RENAME_EXCHANGE):
        _swap_portably(tmp, out)
    stop_at("after-swap")
    remove_temp(tmp)  # tmp now holds the old version


def _swap_portably(tmp: Path, out: Path) -> None:
    """Two renames; the owner file records ``out`` so a killed run's next run restores it."""
    owner = tmp.with_name(tmp.name + OWNER)
    record = _owner(tmp)
    owner.write_text(json.dumps({**record, "out": str(Path(os.path.abspath(out)))}))
    old = tmp.with_name(tmp.name + ".old")
    os.rename(out, old)
    stop_at("old-moved")
    os.rename(tmp, out)
    os.rename(old, tmp)
