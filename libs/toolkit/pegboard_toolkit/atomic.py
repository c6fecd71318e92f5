"""Atomic file writes: a reader, a crash or a ``kill -9`` sees the old file or the new one,
never a half-written one.

The new content goes to a temporary file in the target's own directory (a rename is atomic
only within one file system), is flushed and fsynced, takes the old file's mode and, where
the process may, its owner and group, and is renamed over the target; then the directory
is fsynced so the rename itself survives a power cut. A symlink is followed: the file it
points at is replaced and the link stays a link. On any error the temporary file is
removed and the target is untouched.

Encoding, BOM and line endings are the caller's: :func:`write_text` takes the
:class:`~pegboard_toolkit.text.TextFormat` that :func:`~pegboard_toolkit.text.decode`
returned for the old content, so they come back as they were.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from pegboard_toolkit.text import UTF8_LF, TextFormat, encode

_CHUNK = 1 << 24


class AtomicWriteError(OSError):
    """A write that could not be made; the target is unchanged. ``str()`` says why and where."""

    @property
    def kind(self) -> str:
        """``permission_denied`` (no right to write there, read-only file system) or ``io_error``."""
        return "permission_denied" if self.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else "io_error"


def _fsync_dir(directory: str) -> None:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(directory, flags)
    except OSError:
        return  # some platforms and file systems cannot open a directory; the rename stands
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def target_of(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: symlinks followed, even a dangling one."""
    return Path(os.path.realpath(os.fspath(path)))


def write_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    make_parents: bool = False,
    fsync: bool = True,
) -> Path:
    """Replace ``path`` with ``data`` atomically and return the real path written.

    A new file gets the mode the umask gives; an existing one keeps its permission bits and
    (when allowed) its owner and group. ``make_parents`` creates missing directories.
    Raises :class:`AtomicWriteError` (an ``OSError`` with the original ``errno``).
    """
    return write_chunks(path, [data], make_parents=make_parents, fsync=fsync)


def write_chunks(
    path: str | os.PathLike[str],
    chunks: Sequence[bytes | memoryview],
    *,
    make_parents: bool = False,
    fsync: bool = True,
) -> Path:
    """:func:`write_bytes` of the chunks one after the other: an edit of a big file writes
    the untouched head and tail as views of the old bytes, without joining them first.

    """
    target = target_of(path)
    directory = target.parent
    if make_parents:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AtomicWriteError(exc.errno, f"cannot create directory {directory}: {exc.strerror}") from None
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    except OSError as exc:
        raise AtomicWriteError(exc.errno, f"cannot inspect {target}: {exc.strerror}") from None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise AtomicWriteError(errno.EISDIR if stat.S_ISDIR(old.st_mode) else errno.EINVAL,
                               f"{target} is not a regular file")
    tmp = directory / f".{target.name[:200]}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        where = directory if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else tmp
        raise AtomicWriteError(exc.errno, f"cannot write in {where}: {exc.strerror}") from None
    try:
        try:
            for data in chunks:
                view = memoryview(data)
                for start in range(0, len(view), _CHUNK):
                    chunk = view[start:start + _CHUNK]
                    while chunk:
                        written = os.write(fd, chunk)
                        chunk = chunk[written:]
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):  # not ours to give away; the mode stays
                        os.fchown(fd, old.st_uid, old.st_gid)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise AtomicWriteError(exc.errno, f"cannot write {target}: {exc.strerror}") from None
        raise
    if fsync:
        _fsync_dir(str(directory))
    return target


def remove(path: str | os.PathLike[str], *, fsync: bool = True) -> None:
    """Delete ``path`` (a symlink itself, not its target) and make the deletion durable."""
    os.unlink(path)
    if fsync:
        _fsync_dir(os.path.dirname(os.path.abspath(os.fspath(path))))


def write_text(
    path: str | os.PathLike[str],
    text: str,
    fmt: TextFormat = UTF8_LF,
    *,
    make_parents: bool = False,
    fsync: bool = True,
) -> Path:
    """Replace ``path`` with ``text`` encoded as ``fmt`` says (encoding and BOM), atomically."""
    return write_bytes(path, encode(text, fmt), make_parents=make_parents, fsync=fsync)


__all__ = ["AtomicWriteError", "remove", "target_of", "write_bytes", "write_chunks", "write_text"]
