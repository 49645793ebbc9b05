"""Read a user-named file with a size bound, never blocking, saying what the path really is.

``Path.is_file()`` answers False for a folder, a FIFO, a device, a symlink loop and a name too
long alike; users then read "does not exist" about a file they can see. Here the path is
``os.stat``-ed first and each case gets its own message; only a regular file is opened, with
``O_NONBLOCK`` (a FIFO swapped in after the check cannot block) and re-checked on the open
descriptor, and at most ``limit + 1`` bytes are read.
"""

from __future__ import annotations

import errno
import os
import re
import stat

from .._messages import quote
from ..errors import ProfetError, ProfetFileNotFoundError, ProfetValueError

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_NAME_MAX = 255


def _kind(mode: int) -> str | None:
    """What a non-regular file is, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _os_error(exc: OSError, what: str, shown: str) -> ProfetError:
    """Turn an OSError from stat/open into a message that says what the path is."""
    code = exc.errno
    if code == errno.ENOENT:
        if exc.filename is not None and os.path.islink(str(exc.filename)):
            return ProfetFileNotFoundError(
                f"{what} {shown} is a symlink to a file that does not exist"
            )
        return ProfetFileNotFoundError(f"{what} {shown} does not exist")
    if code == errno.ELOOP:
        return ProfetValueError(f"{what} {shown} is a symlink loop (it points back to itself)")
    if code == errno.ENAMETOOLONG:
        return ProfetValueError(
            f"{what} {shown}: the name is too long (the limit is {_NAME_MAX} bytes per name)"
        )
    if code in (errno.EACCES, errno.EPERM):
        return ProfetValueError(f"{what} {shown} cannot be read: permission denied")
    if code == errno.ENOTDIR:
        return ProfetFileNotFoundError(f"{what} {shown}: a part of the path is not a folder")
    return ProfetValueError(f"{what} {shown} cannot be read: {exc.strerror or exc}")


def read_bounded(path, limit: int, what: str = "profile file") -> bytes:
    """Return the bytes of a regular file of at most ``limit`` bytes.

    Parameters
    ----------
    path : str or os.PathLike
        The file. Symlinks are followed.
    limit : int
        Largest size accepted (bytes).
    what : str
        What the file is, for messages.

    Raises
    ------
    ProfetFileNotFoundError
        The path (or a symlink's target) does not exist.
    ProfetValueError
        Empty path, a folder, FIFO, device or socket, a symlink loop, a name over 255 bytes,
        no permission, or a file larger than ``limit``.
    """
    from ._args import path_arg

    raw = os.fsdecode(path) if path_arg(path, f"the {what}") is not None else ""
    if raw == "":
        raise ProfetValueError(f"{what} path is empty; give the path of a file")
    shown = quote(raw)
    if any(len(os.fsencode(p)) > _NAME_MAX for p in raw.split(os.sep)):
        raise ProfetValueError(
            f"{what} {shown}: a name in the path is longer than {_NAME_MAX} bytes, the limit"
        )
    try:
        st = os.stat(raw)
    except OSError as exc:
        raise _os_error(exc, what, shown) from None
    except ValueError:  # e.g. an embedded NUL byte
        raise ProfetValueError(f"{what} {shown} is not a valid path") from None
    kind = _kind(st.st_mode)
    if kind:
        raise ProfetValueError(f"{what} {shown} is {kind}, not a regular file")
    _check_size(st.st_size, limit, what, shown)
    try:
        fd = os.open(raw, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _os_error(exc, what, shown) from None
    try:
        st = os.fstat(fd)  # the path may have been swapped since the stat above
        kind = _kind(st.st_mode)
        if kind:
            raise ProfetValueError(f"{what} {shown} is {kind}, not a regular file")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise _os_error(exc, what, shown) from None
    finally:
        os.close(fd)
    _check_size(total, limit, what, shown)
    return b"".join(chunks)


def _check_size(size: int, limit: int, what: str, shown: str) -> None:
    if size > limit:
        raise ProfetValueError(
            f"{what} {shown} is {size / 1e6:.1f} MB or more; the limit is {limit / 1e6:.0f} MB"
        )


#: Deepest nesting of a small JSON record PROFET reads (a folder's convention, an owner marker).
MAX_JSON_DEPTH = 32
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth(text: str) -> int:
    """How deeply ``text``'s arrays and objects nest (strings skipped), without parsing it."""
    bare = _JSON_STRING.sub("", text)
    steps = [1 if c in "[{" else -1 for c in bare if c in "[]{}"]
    depth = best = 0
    for s in steps:
        depth += s
        best = max(best, depth)
    return best


def read_json_bounded(path, limit: int, what: str, max_depth: int = MAX_JSON_DEPTH):
    """Parse a small JSON file: at most ``limit`` bytes and ``max_depth`` levels, both checked
    before parsing (a file nested 100,000 deep was a RecursionError); UTF-8.

    Raises
    ------
    ProfetFileNotFoundError, ProfetValueError
        As :func:`read_bounded`; not UTF-8, nested too deeply, or not valid JSON.
    """
    import json

    data = read_bounded(path, limit, what)
    shown = quote(os.fsdecode(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProfetValueError(f"{what} {shown} is not UTF-8 text") from None
    if json_depth(text) > max_depth:
        raise ProfetValueError(
            f"{what} {shown} nests deeper than {max_depth} levels; it is not a file PROFET wrote"
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProfetValueError(f"{what} {shown} is not valid JSON: {str(exc)[:120]}") from None
