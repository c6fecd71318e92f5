"""Every name of a denied file, so a mask covers all of them.

The permission engine matches deny patterns case-insensitively and NFKC-folded (``.ENV``
and ``.env`` are one name on macOS and Windows), and judges a hard link by the file it names.
bubblewrap masks paths, so both come back here as paths: spellings are found by folding
each name on disk the way the engine folds it, hard links by walking the working
directories for files with the inode of a masked one. A masked file with a name this walk
cannot reach (a hard link outside the working directories) cannot be masked there, and
the sandbox refuses to start, naming it.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path


class MaskRefused(Exception):
    """A denied file the sandbox cannot mask; the message names it and says what to do."""


def fold(text: str) -> str:
    """A name as deny patterns compare it: lower-cased and, beyond ASCII, NFKC-normalised."""
    low = text.lower()
    return low if low.isascii() else unicodedata.normalize("NFKC", low).lower()


def name_matches(name: str, pattern: str) -> bool:
    """Whether ``name`` matches the glob ``pattern`` as a deny pattern does (folded)."""
    return fnmatchcase(fold(name), fold(pattern))


def spellings(base: Path, relative: str) -> list[Path]:
    """The existing paths under ``base`` that spell ``relative`` (no wildcards) the way a
    deny pattern matches it: each component compared folded."""
    found = [base]
    for part in [p for p in relative.split("/") if p and p != "."]:
        want = fold(part)
        step: list[Path] = []
        for here in found:
            exact = here / part
            if os.path.lexists(exact):
                step.append(exact)
            try:
                names = os.listdir(here)
            except OSError:
                continue
            step += [here / n for n in names if n != part and fold(n) == want]
        found = step
    return found


def _identities(paths: Iterable[Path], limit: int) -> dict[tuple[int, int], tuple[Path, int]]:
    """``(dev, ino) -> (a masked path, its link count)`` for masked files with several links,
    and for such files inside masked directories (a tmpfs hides the directory, not a link
    to a file in it)."""
    out: dict[tuple[int, int], tuple[Path, int]] = {}

    def note(path: Path) -> os.stat_result | None:
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            out.setdefault((st.st_dev, st.st_ino), (path, st.st_nlink))
        return st

    seen = 0
    for path in paths:
        st = note(path)
        if st is None or not stat.S_ISDIR(st.st_mode):
            continue
        for dirpath, _dirs, files in os.walk(path):
            for name in files:
                seen += 1
                if seen > limit:
                    raise MaskRefused(
                        f"the sandbox cannot start: the masked directory {path} holds more than {limit} files "
                        "to look for hard links of (sandbox.maxExpandedPaths); raise the bound")
                note(Path(dirpath, name))
    return out


def every_name(masked: Sequence[Path], roots: Sequence[Path], limit: int, *, strict: bool = True) -> list[Path]:
    """``masked`` and every other name (hard link) under ``roots`` of the files it holds.

    ``strict``: a file with a name outside ``roots`` raises :class:`MaskRefused` (for
    masks: the rest of the filesystem stays readable). Paths are resolved."""
    wanted = _identities(masked, limit)
    out = list(dict.fromkeys(masked))
    if not wanted:
        return out
    names: dict[tuple[int, int], set[Path]] = {ident: set() for ident in wanted}
    hidden = [Path(os.path.realpath(p)) for p in masked if os.path.isdir(p)]
    seen = 0
    for root in dict.fromkeys([*roots, *hidden]):
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                seen += 1
                if seen > limit:
                    first = next(iter(wanted.values()))[0]
                    raise MaskRefused(
                        f"the sandbox cannot start: {first} has several hard links, and looking for them visits "
                        f"more than {limit} files (sandbox.maxExpandedPaths); raise the bound or remove the links")
                path = Path(dirpath, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if st.st_nlink > 1 and (ident := (st.st_dev, st.st_ino)) in names:
                    names[ident].add(Path(os.path.realpath(path)))
    for ident, (path, links) in wanted.items():
        found = names[ident]
        if strict and len(found) < links:
            raise MaskRefused(
                f"the sandbox cannot start: the denied file {path} has {links} hard links and only {len(found)} "
                "are under the working directories, so the others cannot be masked; remove them "
                f"(find / -xdev -samefile {path}) or make the file a copy")
        out += sorted(p for p in found if not any(p.is_relative_to(d) for d in hidden))
    return list(dict.fromkeys(out))
