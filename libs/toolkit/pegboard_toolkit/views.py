"""Recognising a shell command that only shows one file (``cat f``, ``sed -n '3,9p' f`` ...).

Such a view counts as a read for the read ledger, like a Read call: the model has seen the
file (or those lines). Only the plain forms count: one of ``cat``, ``head``, ``tail``,
``sed -n 'X,Yp'``, ``grep``, ``egrep``, ``fgrep`` on exactly one file, with no pipes,
redirects, command lists, substitutions or globs.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

_SHELL_SYNTAX = re.compile(r"[|&;<>()`$\n*?\[\]{}~]")
_PROGRAMS = ("cat", "head", "tail", "sed", "grep")
_GREP_ARG_OPTIONS = {"-e", "-f", "-A", "-B", "-C", "-m", "--regexp", "--file", "--after-context",
                     "--before-context", "--context", "--max-count"}


@dataclass(frozen=True)
class FileView:
    """The file a command shows, and which lines (``whole`` or ``first``..``last``)."""

    path: Path
    whole: bool
    first: int | None = None
    last: int | None = None


def _count(value: str) -> int | None:
    return int(value) if value.isdigit() and int(value) > 0 else None


def _line_count(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


def single_file_view(command: str, cwd: Path) -> FileView | None:
    """The :class:`FileView` of ``command``, or ``None`` when it is not a plain one-file view."""
    if _SHELL_SYNTAX.search(command):
        return None
    # most commands name none of the programs (quotes and backslashes can only split a name)
    bare = command.replace("'", "").replace('"', "").replace("\\", "")
    if not any(prog in bare for prog in _PROGRAMS):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 2:
        return None
    prog, args = words[0], words[1:]
    view = _parse(prog, args)
    if view is None:
        return None
    raw, whole, first, last = view
    path = Path(os.path.expanduser(raw))
    path = path if path.is_absolute() else cwd / path
    if not path.is_file():
        return None
    if prog == "tail" and first is not None:
        total = _line_count(path)
        return FileView(path, total <= first, max(1, total - first + 1), max(total, 1))
    if prog == "head" and first is not None:
        return FileView(path, False, 1, first)
    return FileView(path, whole, first, last)


def _parse(prog: str, args: list[str]) -> tuple[str, bool, int | None, int | None] | None:
    if prog == "cat":
        return (args[0], True, None, None) if len(args) == 1 and not args[0].startswith("-") else None
    if prog in ("head", "tail"):
        count = 10
        files: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "-n" and i + 1 < len(args) and _count(args[i + 1]):
                count = int(args[i + 1])
                i += 2
                continue
            if re.fullmatch(r"-n?\d+", a):
                count = int(a.lstrip("-n"))
            elif a.startswith("-"):
                return None
            else:
                files.append(a)
            i += 1
        return (files[0], False, count, None) if len(files) == 1 and count > 0 else None
    if prog == "sed":
        if len(args) != 3 or args[0] != "-n":
            return None
        m = re.fullmatch(r"(\d+)(?:,(\d+))?p", args[1])
        if not m:
            return None
        first = int(m.group(1))
        last = int(m.group(2) or first)
        return (args[2], False, first, last) if 0 < first <= last else None
    if prog in ("grep", "egrep", "fgrep"):
        positional: list[str] = []
        pattern_given = False
        i = 0
        while i < len(args):
            a = args[i]
            if a in _GREP_ARG_OPTIONS:
                pattern_given = pattern_given or a in ("-e", "--regexp", "-f", "--file")
                i += 2
                continue
            if a.startswith("-") and len(a) > 1:
                recursive = "recursive" in a if a.startswith("--") else any(c in "rRd" for c in a[1:])
                if recursive:
                    return None
            else:
                positional.append(a)
            i += 1
        files = positional if pattern_given else positional[1:]
        return (files[0], True, None, None) if len(files) == 1 else None
    return None


__all__ = ["FileView", "single_file_view"]
