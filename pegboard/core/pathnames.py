"""One way to turn a path a model wrote into the file it names: ``resolve_path``.

The permission engine, the toolkit and the file tools all go through the functions here,
so a rule and the tool it guards never disagree about which file a call touches. Tilde
forms follow bash: ``~`` and ``~/x`` the home directory, ``~user`` that user's home from
the password database, ``~+`` (and ``~0``, ``~+0``, ``~-0``) the working directory, ``~-``
the previous working directory when it is known; any other tilde prefix (an unknown user,
``~-`` without a previous directory, ``~2``) stays a literal name, as bash leaves it.
"""

from __future__ import annotations

import os
import pwd
import stat
from contextvars import ContextVar
from pathlib import Path
from typing import Any

#: The kernel's limit on symbolic links followed while resolving one path (Linux's own).
MAX_SYMLINKS = 40


class InvalidPathError(ValueError):
    """A path that names no file: empty, or holding a NUL byte or an unencodable character."""


def _text(value: object, what: str) -> str:
    if isinstance(value, bytes):
        raise InvalidPathError(f"{what} must be text, not bytes")
    try:
        text = os.fspath(value)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidPathError(f"{what} must be a string or path, not {type(value).__name__}") from None
    if isinstance(text, bytes):
        raise InvalidPathError(f"{what} must be text, not bytes")
    if "\x00" in text:
        raise InvalidPathError(f"{what} {text!r} contains a NUL byte")
    if not text.isascii():  # ASCII always encodes
        try:
            text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raise InvalidPathError(f"{what} {text!r} contains a character no file name can hold") from None
    return text


def split_tilde(path: str) -> tuple[str, str] | None:
    """``("~user", "/rest")`` for a path starting with a tilde prefix, else ``None``."""
    if not path.startswith("~"):
        return None
    cut = path.find("/")
    if cut < 0:
        return path, ""
    return path[:cut], path[cut:]


def user_home(user: str) -> str | None:
    """The home directory of ``user`` in the password database, or ``None`` for an unknown user."""
    if not user or "\x00" in user:
        return None
    try:
        entry = pwd.getpwnam(user)
    except (KeyError, ValueError, UnicodeError, OSError):
        return None
    return entry.pw_dir or None


def default_home() -> str:
    """``$HOME``, or the current user's entry in the password database when it is unset."""
    home = os.environ.get("HOME")
    if home is not None:
        return home
    try:
        return pwd.getpwuid(os.getuid()).pw_dir or "/"
    except (KeyError, OSError):
        return "/"


def expand_tilde(path: str, home: str, cwd: str, oldpwd: str | None = None) -> str | None:
    """``path`` with its tilde prefix expanded as bash does, or ``None`` when bash leaves it literal.

    An empty ``home`` leaves ``~`` literal, as bash does with ``HOME=""``.
    """
    parts = split_tilde(path)
    if parts is None:
        return None
    prefix, rest = parts
    name = prefix[1:]
    if name == "":
        base: str | None = home or None
    elif name in ("+", "0", "+0", "-0"):
        base = cwd
    elif name == "-":
        base = oldpwd or None
    elif name.isdigit() or (name[:1] in "+-" and name[1:].isdigit()):
        base = None  # a directory-stack entry beyond the first: there is no stack here
    else:
        base = user_home(name)
    if base is None:
        return None
    return base.rstrip("/") + rest if rest else base


def collapse(path: str) -> str:
    """Lexically normalise an absolute path: drop ``.`` and empty parts, apply ``..``.

    ``..`` at the root stays at the root, so the result never escapes ``/``.
    """
    if path[:1] == "/" and "//" not in path and "/." not in path and path[-1:] != "/":
        return path  # already normal: every part is a plain name
    parts: list[str] = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts:
                parts.pop()
            continue
        parts.append(seg)
    return "/" + "/".join(parts)


class SymlinkLoopError(OSError):
    """Links nested deeper than ``MAX_SYMLINKS``, or too many links in one path."""


#: Links followed in resolving one path, all nesting levels together: bounds the work a
#: pathological tree can cause (Linux's own limit per nesting level is ``MAX_SYMLINKS``).
MAX_LINKS_PER_PATH = 1000


class CallPaths:
    """The paths one tool call has resolved, so each existing path is resolved once per call.

    The pipeline opens one for each call of a tool that declares path fields or permission
    subjects (``CALL_PATHS``): the path fields made absolute, the
    permission rules and the tool itself then act on the same file, and a link swapped
    between the check and the tool's own resolution cannot move the tool elsewhere. Only
    paths that exist whole are kept (the kernel resolved them). Closed when the call ends,
    so a task the call started and that outlives it resolves afresh.
    """

    __slots__ = ("known", "open")

    def __init__(self) -> None:
        self.known: dict[Any, Any] = {}
        self.open = True

    def close(self) -> None:
        self.open = False
        self.known.clear()


CALL_PATHS: ContextVar[CallPaths | None] = ContextVar("pegboard_call_paths", default=None)


def _call_paths() -> dict[Any, Any] | None:
    paths = CALL_PATHS.get()
    return paths.known if paths is not None and paths.open else None


def resolve_existing(path: str) -> str:
    """The physical form of an absolute path: symlinks followed as far as the path exists.

    ``..`` applies to the directory a link led to, as the operating system applies it; from
    the first component that does not exist (or cannot be examined) the rest is taken
    lexically, and a later ``..`` that climbs back into existing directories resumes the
    walk. A link that loops is kept as a name, like a missing component. The result is
    absolute and holds no ``.``, ``..`` or empty part, so resolving it again gives it back.
    Raises ``SymlinkLoopError`` only past ``MAX_LINKS_PER_PATH``.

    A path that exists whole is resolved by the kernel itself where it can say (Linux: one
    ``O_PATH`` open and one ``readlink`` of its descriptor), which gives the same answer as
    the walk without a system call per component.
    """
    known = _call_paths()
    if known is not None and isinstance(hit := known.get(path), str):
        return hit
    found = kernel_resolved(path)
    if found is None:
        return _walk(path, 0, [MAX_LINKS_PER_PATH])
    if known is not None:
        known[path] = known[found] = found
    return found


#: ``O_PATH`` opens a name without opening the file (no device is touched, no read right is
#: needed); ``/proc/self/fd`` then names what the kernel resolved. Linux only.
_O_PATH = getattr(os, "O_PATH", 0)
_FD_LINKS = "/proc/self/fd/"


def kernel_resolved(path: str) -> str | None:
    """The kernel's physical path for ``path`` when it exists whole, else ``None`` (a missing
    or unreadable component, a link loop, no ``/proc``: the walk decides those)."""
    if not _O_PATH or not path.startswith("/"):
        return None
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        real = os.readlink(_FD_LINKS + str(fd))
    except OSError:
        return None
    finally:
        os.close(fd)
    if not real.startswith("/") or real.endswith(" (deleted)"):
        return None
    return real


def _walk(path: str, depth: int, budget: list[int]) -> str:
    if depth > MAX_SYMLINKS:
        raise _NestedTooDeep
    todo = [p for p in reversed(path.split("/")) if p and p != "."]
    done: list[str] = []  # existing components with no link among them (or a link's result)
    missing: list[str] = []  # components from the first one that does not exist
    while todo:
        part = todo.pop()
        if part == "..":
            if missing:
                missing.pop()
            elif done:
                done.pop()
            continue
        if missing:
            missing.append(part)
            continue
        prefix = "/" + "/".join(done)
        candidate = prefix.rstrip("/") + "/" + part
        try:
            st = os.lstat(candidate)
        except (OSError, ValueError):
            missing.append(part)
            continue
        if not stat.S_ISLNK(st.st_mode):
            done.append(part)
            continue
        budget[0] -= 1
        if budget[0] < 0:
            raise SymlinkLoopError(f"more than {MAX_LINKS_PER_PATH} symbolic links in one path")
        try:
            target = os.readlink(candidate)
            resolved = _walk(target if target.startswith("/") else prefix + "/" + target, depth + 1, budget)
        except SymlinkLoopError:
            raise
        except (_NestedTooDeep, OSError):
            missing.append(part)
            continue
        done = [p for p in resolved.split("/") if p]
    return "/" + "/".join(done + missing)


class _NestedTooDeep(Exception):
    """A link chain deeper than ``MAX_SYMLINKS``: that link does not resolve (a loop)."""


def absolute_text(path: str, cwd: str, home: str, oldpwd: str | None = None) -> str:
    """``path`` made absolute (tilde forms, relative to ``cwd``) with ``..`` still in it."""
    expanded = expand_tilde(path, home, cwd, oldpwd)
    p = expanded if expanded is not None else path
    if not p.startswith("/"):
        p = cwd.rstrip("/") + "/" + p
    return p


def resolve_path(
    path: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
    home: str | os.PathLike[str] | None = None,
    *,
    oldpwd: str | os.PathLike[str] | None = None,
) -> Path:
    """The absolute, normalised path that ``path`` names when the working directory is ``cwd``.

    Tilde forms are expanded as bash expands them (see the module docstring); ``home``
    defaults to ``$HOME``. A relative ``cwd`` is taken relative to the process's directory.
    Symlinks are resolved for the longest prefix that exists; the rest is normalised
    lexically, and ``..`` never climbs above ``/``. Odd input (empty, a NUL byte, bytes,
    an unencodable character) raises ``InvalidPathError``, a ``ValueError``.
    """
    return Path(resolve_text(path, cwd, home, oldpwd=oldpwd))


def resolve_text(
    path: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
    home: str | os.PathLike[str] | None = None,
    *,
    oldpwd: str | os.PathLike[str] | None = None,
) -> str:
    """:func:`resolve_path` as a string, for the kernel's own use (no ``Path`` is built)."""
    known = _call_paths() if isinstance(path, str) else None
    key = (path, cwd, home, oldpwd)
    if known is not None and isinstance(hit := known.get(key), str):
        return hit
    p = _text(path, "path")
    if not p:
        raise InvalidPathError("the path is empty")
    base = _text(cwd, "cwd") or "/"
    if not base.startswith("/"):
        base = os.path.join(os.getcwd(), base)
    h = default_home() if home is None else _text(home, "home")
    if h and not h.startswith("/"):
        h = base.rstrip("/") + "/" + h
    old = None if oldpwd is None else _text(oldpwd, "oldpwd")
    if old and not old.startswith("/"):
        old = base.rstrip("/") + "/" + old
    full = absolute_text(p, collapse(base), h, old)
    try:
        resolved = resolve_existing(full)
    except SymlinkLoopError:
        return collapse(full)
    if known is not None and full in known:
        known[key] = resolved
    return resolved
