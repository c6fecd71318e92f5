"""What to tell a model that named a file that is not there: where it is, and a near miss."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

#: a directory with more entries than this is not searched for a near match
MAX_SIBLINGS = 5_000


def near_match(path: str | os.PathLike[str]) -> Path | None:
    """An existing file whose name is close to ``path``'s (same directory, or the same name in
    the nearest existing parent), or ``None``."""
    target = Path(path)
    parent = target.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent
    try:
        with os.scandir(parent) as it:
            names = [e.name for _, e in zip(range(MAX_SIBLINGS), it, strict=False)]
    except OSError:
        return None
    if target.name in names and parent != target.parent:
        return parent / target.name
    close = difflib.get_close_matches(target.name, names, n=1, cutoff=0.7)
    if close:
        return parent / close[0]
    stem = target.stem.casefold()
    same_stem = [n for n in names if Path(n).stem.casefold() == stem]
    return parent / same_stem[0] if same_stem else None


def missing_file_message(path: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> str:
    """``File does not exist.`` with the working directory and, when there is one, a near match."""
    text = f"File does not exist: {path}. Current working directory: {cwd}."
    found = near_match(path)
    if found is not None:
        text += f" Did you mean {found}?"
    return text


__all__ = ["missing_file_message", "near_match"]
