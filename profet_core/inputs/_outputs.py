"""The one write rule of every command that writes (``train``, ``add-instance``, ``validate``,
``collect``, ``profile``, ``doe design``, ``doe analyze``), in one place.

* **An output folder** is new, empty, or one this command wrote: a record of ours lists every
  file in it (an artifacts folder's ``manifest.json``; other commands' :data:`MARKER`, with each
  file's sha256, so a file the user edited since makes the folder theirs), it holds no link or
  special file, every subfolder can be read (``os.walk`` would silently skip one it cannot read)
  and it belongs to this user (:func:`folder_not_ours`).
* **Never over an input**: an output path equal to, inside or containing an input path (a
  dataset folder, the artifacts a report is about, the model file) is refused
  (:func:`refuse_overlap`).
* **A single output file** (``profile --out X.json`` and its ``X.meta.json``) replaces only a
  file PROFET wrote (:func:`file_not_ours`); temporary files get a random name with a PROFET
  prefix and are created exclusively, so no user's file is ever consumed (:func:`write_atomic`).
* Every check runs **before any work**; folders are written beside and swapped in
  (``training._swap``).
* A writer of an artifacts or dataset folder holds an **advisory lock** beside it
  (:func:`folder_lock`, ``fcntl.flock`` on ``.profet-lock-<name>`` holding its pid): a second
  writer waits up to ``$PROFET_LOCK_WAIT_S`` seconds (default 60), then is refused in one line.

Records of ours are read bounded (:func:`read_record`): a FIFO or a link to ``/dev/zero`` named
like one neither hangs nor grows memory.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import stat
import time
from pathlib import Path

from .._messages import quote
from ..errors import ProfetValueError

#: The record of the files a command wrote into its output folder.
MARKER = ".profet-output.json"
#: Largest record of ours read (bytes): a manifest lists at most ~1000 files.
MAX_RECORD_BYTES = 4 * 1024 * 1024
LOCK_PREFIX = ".profet-lock-"
TEMP_PREFIX = ".profet-tmp-"
_NAME_MAX = 255


def read_record(path) -> dict | None:
    """A small JSON object file of ours, or None: read without blocking, only a regular file,
    at most :data:`MAX_RECORD_BYTES` (a FIFO, a device or a huge file is not a record)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_RECORD_BYTES:
            return None
        raw = os.read(fd, MAX_RECORD_BYTES + 1)
        if len(raw) > MAX_RECORD_BYTES:
            return None
        record = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    return record if isinstance(record, dict) else None


def sha256_file(path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def walk_entries(folder: Path):
    """``(relative path, lstat)`` of every entry under ``folder``.

    Raises
    ------
    ProfetValueError
        A subfolder that cannot be listed (``os.walk`` would skip it silently).
    """

    def fail(exc: OSError):
        rel = os.path.relpath(exc.filename or folder, folder)
        raise ProfetValueError(
            f"output folder {quote(str(folder))} holds {quote(rel)}, which cannot be read "
            f"({exc.strerror or exc}); give a new folder (nothing was changed)"
        )

    for root, dirs, names in os.walk(folder, onerror=fail):
        for name in dirs + names:
            path = os.path.join(root, name)
            yield os.path.relpath(path, folder), os.lstat(path)


def folder_not_ours(
    folder, listed, hashes: dict | None = None, unlisted: str = "which the manifest does not list"
) -> str | None:
    """Why ``folder`` is not an output folder of ours (None if it is).

    Parameters
    ----------
    folder : path-like
        An existing folder.
    listed : set of str
        Relative paths of the files our record lists (the record itself included).
    hashes : dict of str to str, optional
        Their sha256: a listed file whose bytes changed since is the user's.
    unlisted : str
        What the message says of a file not in ``listed``.
    """
    folder = Path(folder)
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if folder.is_symlink():
        return "it is a symbolic link"
    if not folder.is_dir():
        return "it is not a folder"
    for rel, st in [("", folder.lstat()), *walk_entries(folder)]:
        if uid is not None and st.st_uid != uid:
            return f"{quote(rel or '.')} belongs to another user (uid {st.st_uid})"
        if stat.S_ISDIR(st.st_mode):
            continue
        if not stat.S_ISREG(st.st_mode):
            return f"{quote(rel)} is a link or a special file"
        rel = os.path.normpath(rel)
        if rel not in listed:
            return f"it holds {quote(rel)}, {unlisted}"
        if hashes and rel in hashes and sha256_file(folder / rel) != hashes[rel]:
            return f"{quote(rel)} was changed after PROFET wrote it"
    return None


def marker_not_ours(folder, command: str) -> str | None:
    """:func:`folder_not_ours` for a folder that ``command`` records in :data:`MARKER`; an
    empty folder is fine (nothing in it to lose)."""
    folder = Path(folder)
    if folder.is_symlink():
        return "it is a symbolic link"
    if not folder.is_dir():
        return "it is not a folder"
    if not any(walk_entries(folder)):
        return None
    record = read_record(folder / MARKER)
    files = record.get("files") if record else None
    if not isinstance(files, dict) or record.get("command") != command:
        return f"no record that `profet {command}` wrote it ({MARKER})"
    names = {os.path.normpath(str(f)) for f in files} | {MARKER}
    return folder_not_ours(folder, names, {os.path.normpath(str(k)): v for k, v in files.items()})


def write_marker(folder, command: str) -> None:
    """Record every file of ``folder`` (with its sha256) as written by ``command``."""
    folder = Path(folder)
    files = {
        rel: sha256_file(folder / rel)
        for rel, st in walk_entries(folder)
        if stat.S_ISREG(st.st_mode) and rel != MARKER
    }
    record = {"profet": "output folder", "command": command, "files": files}
    (folder / MARKER).write_text(json.dumps(record, indent=1, sort_keys=True))


def refuse_overlap(out, inputs, what: str = "output folder") -> None:
    """Refuse an output path equal to, inside or containing any of ``inputs``."""
    where = Path(os.path.abspath(out)).resolve()
    for given in inputs:
        if given is None or str(given) == "":
            continue
        d = Path(os.path.abspath(given)).resolve()
        if where == d or d in where.parents or where in d.parents:
            raise ProfetValueError(
                f"{what} {quote(str(out))} overlaps the input {quote(str(given))}; write "
                "elsewhere (nothing was changed)"
            )


def inside_artifacts(out) -> Path | None:
    """The artifacts folder (one with PROFET's ``manifest.json``) that ``out`` lies inside."""
    where = Path(os.path.abspath(out)).resolve()
    for parent in where.parents:
        record = read_record(parent / "manifest.json")
        if record and isinstance(record.get("files"), dict) and "format" in record:
            return parent
    return None


def check_path_name(out, what: str = "output folder") -> None:
    """Refuse paths no folder can be swapped in at: empty, ``.``/``..``, a name over 255 bytes,
    a mount point, a symlink loop on the way."""
    raw = os.fspath(out)
    shown = quote(str(raw))
    if raw == "":
        raise ProfetValueError(f"{what} path is empty; give a folder")
    if os.path.basename(os.path.normpath(raw)) in (".", "..", "") or os.path.normpath(raw) in (
        ".",
        "..",
        os.sep,
    ):
        raise ProfetValueError(
            f"{what} {shown} is the current folder, a parent of it or the root; name a new "
            "folder (nothing was changed)"
        )
    if any(len(os.fsencode(p)) > _NAME_MAX for p in str(raw).split(os.sep)):
        raise ProfetValueError(f"{what} {shown}: a name in it is longer than {_NAME_MAX} bytes")
    if str(raw).startswith("~") and os.path.expanduser(str(raw)) != str(raw):
        # quoted, the shell left it as it is: a folder named '~' would be made here
        raise ProfetValueError(
            f"{what} {shown} starts with '~', which the shell did not expand (it was quoted); "
            f"give the folder's path, e.g. {os.path.expanduser(str(raw))!r} (nothing was changed)"
        )
    try:
        os.stat(raw)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ProfetValueError(f"{what} {shown} is a symlink loop") from None
        if exc.errno not in (errno.ENOENT,):
            raise ProfetValueError(f"cannot write the {what} {shown}: {exc.strerror}") from None
    if os.path.ismount(raw):
        raise ProfetValueError(
            f"{what} {shown} is a mount point, which cannot be replaced; give a folder inside it"
        )
    cwd = Path.cwd().resolve()
    where = Path(os.path.abspath(raw)).resolve()
    if where == cwd or where in cwd.parents:
        raise ProfetValueError(
            f"{what} {shown} is the current folder or holds it; name a new folder"
        )


def temp_path(target) -> Path:
    """A temporary name beside ``target`` that no user's file has (random, PROFET prefix)."""
    target = Path(target)
    return target.with_name(f"{TEMP_PREFIX}{secrets.token_hex(6)}-{target.name}"[:_NAME_MAX])


def write_atomic(target, data: bytes) -> None:
    """Write ``data`` to a new temporary file beside ``target`` (created exclusively: it never
    opens a user's file) and rename it over ``target``."""
    target = Path(target)
    tmp = temp_path(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def lock_path(folder) -> Path:
    """The lock file beside ``folder``."""
    folder = Path(os.path.abspath(folder))
    return folder.with_name(f"{LOCK_PREFIX}{folder.name}"[:_NAME_MAX])


def _wait_s() -> float:
    try:
        return max(0.0, float(os.environ.get("PROFET_LOCK_WAIT_S", "60")))
    except ValueError:
        return 60.0


@contextlib.contextmanager
def folder_lock(folder, wait_s: float | None = None):
    """Hold the advisory lock of ``folder`` (another PROFET writer of it waits or is refused).

    Parameters
    ----------
    folder : path-like
        The folder a command rewrites.
    wait_s : float, optional
        Seconds to wait for the holder (default ``$PROFET_LOCK_WAIT_S`` or 60).

    Raises
    ------
    ProfetValueError
        Another process held the lock for ``wait_s`` seconds, or a file that is not a lock of
        ours has the lock's name.
    """
    import fcntl

    path = lock_path(folder)
    deadline = time.monotonic() + (_wait_s() if wait_s is None else wait_s)
    while True:
        fd = _open_lock(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                raise ProfetValueError(
                    f"{quote(str(folder))} is being rewritten by another PROFET process (pid "
                    f"{holder}, lock {quote(str(path))}); try again when it has finished"
                ) from None
            time.sleep(0.1)
            continue
        try:  # the file may have been removed by the holder between our open and lock
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except OSError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"profet-lock pid {os.getpid()}\n".encode())
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def _open_lock(path: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise ProfetValueError(
            f"cannot make the lock file {quote(str(path))}: {exc.strerror or exc}"
        ) from None
    st = os.fstat(fd)
    head = os.pread(fd, 64, 0) if stat.S_ISREG(st.st_mode) else b"?"
    if not stat.S_ISREG(st.st_mode) or (head and not head.startswith(b"profet-lock")):
        os.close(fd)
        raise ProfetValueError(
            f"{quote(str(path))} is not a lock file of PROFET; move it away (nothing was changed)"
        )
    return fd


def _holder(fd: int) -> str:
    head = os.pread(fd, 64, 0).decode("ascii", "replace").split()
    return head[2] if len(head) > 2 and head[2].isdigit() else "unknown"


def file_not_ours(path, record: dict | None) -> str | None:
    """Why an existing output file may not be replaced (None: absent, or one PROFET wrote and
    nobody changed since: ``record["profet_files"]`` lists its name with its sha256)."""
    path = Path(path)
    if not os.path.lexists(path):
        return None
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return "it is a link, a folder or a special file"
    files = record.get("profet_files") if record else None
    if not isinstance(files, dict) or path.name not in files:
        return "PROFET did not write it"
    if sha256_file(path) != files[path.name]:
        return "it was changed after PROFET wrote it"
    return None


def moved_aside(folder) -> Path | None:
    """Where a killed ``profet train`` left ``folder`` moved aside (the portable swap's moment
    between its two renames), or None: a ``.profet-train-*.old`` folder whose owner record of
    ours names ``folder``. The next ``profet train`` beside it puts it back."""
    where = Path(os.path.abspath(folder))
    try:
        owners = sorted(where.parent.glob(".profet-train-*.owner"))[:100]
    except OSError:
        return None
    for owner in owners:
        record = read_record(owner)
        old = owner.with_name(owner.name[: -len(".owner")] + ".old")
        if record and record.get("out") == str(where) and old.is_dir() and not old.is_symlink():
            return old
    return None


def remove_stale_locks(parent) -> None:
    """Remove the lock files a killed writer left in ``parent`` (a lock of ours that no process
    holds); a file of the name that is not a PROFET lock is left alone."""
    import fcntl

    for path in sorted(Path(parent).glob(f"{LOCK_PREFIX}*"))[:100]:
        try:
            fd = _open_lock(path)
        except ProfetValueError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                os.unlink(path)
        except OSError:
            pass  # held by a running writer, or gone already
        finally:
            os.close(fd)
