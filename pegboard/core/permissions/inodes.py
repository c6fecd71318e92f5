"""Other names of a covered file: path rules see names, and a hard link is one more name.

A ``Read(.env)`` deny says nothing about ``src/notes.txt`` even when both name one file
(``ln .env src/notes.txt``). So a file with more than one link is also judged by identity:
its ``(st_dev, st_ino)`` is looked up among the files the Read/Edit deny and ask rules
cover. A file with a single link has no other name, so the usual cost is one ``stat``.

Those files are found on the first multi-link file an engine meets, by walking the working
directories (and a rule's own directory outside them, such as ``~/.ssh``), without
following symlinks. The set is kept current without watching: every directory's identity
and modification time is recorded, and before an answer (once per tool call) the
directories whose time moved, or that changed too recently to trust their time, are read
again, so a covered file created later is found; a link made later to a file already
known needs nothing (a new name keeps the inode). Past ``MAX_COVERED`` covered files or
``MAX_SCANNED`` entries the set is incomplete and every multi-link file asks.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pegboard.core.pathnames import CALL_PATHS
from pegboard.core.permissions.paths import PathMatcher, inside
from pegboard.core.permissions.rules import Rule

#: covered files the set holds before it gives up (then: every multi-link file asks)
MAX_COVERED = 10_000
#: directory entries the walks look at before they give up (as the toolkit's file index)
MAX_SCANNED = 250_000
#: a directory changed this recently may change again within its timestamp's granularity
RACY_NS = 2_000_000_000

Identity = tuple[int, int]
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class LinkHit:
    """Why a path is judged as another name of a covered file.

    ``name`` is the covered name it shares its inode with; ``None`` when the covered files
    are too many to compare, and ``rule`` is then a rule such a file could fall under."""

    lst: str  # "deny" or "ask"
    rule: Rule
    name: str | None
    reason: str


@dataclass
class _Cover:
    """The first deny and ask rule of each kind over the names of one file."""

    name: str
    read_deny: Rule | None = None
    read_ask: Rule | None = None
    edit_deny: Rule | None = None
    edit_ask: Rule | None = None

    def hit(self, kind: str) -> tuple[str, Rule] | None:
        deny, ask = (self.read_deny, self.read_ask) if kind == "read" else (self.edit_deny, self.edit_ask)
        if deny is not None:
            return "deny", deny
        return ("ask", ask) if ask is not None else None


def _first(matcher: PathMatcher, paths: Sequence[str]) -> Rule | None:
    hit = matcher.first(paths)
    return hit if isinstance(hit, Rule) else None


class CoveredInodes:
    """The identities of the files Read/Edit deny and ask rules cover under some roots."""

    def __init__(self, *, roots: Sequence[str], read: dict[str, PathMatcher], edit: dict[str, PathMatcher],
                 may_cover: Callable[[str], bool], clock: Callable[[], int] = time.time_ns) -> None:
        self.read, self.edit = read, edit
        self.active = any(m.combined is not None for m in (read["deny"], read["ask"], edit["deny"], edit["ask"]))
        self._may_cover = may_cover
        self.clock = clock
        self.roots = list(roots)
        #: (resolved, as configured) for each root, made on the first build: rules match either spelling
        self._aliases: list[tuple[str, str]] = []
        self.built = False
        self.complete = True
        self.walks = 0  # full builds, for tests and the benchmark
        self._dirs: dict[str, tuple[int, int, int]] = {}  # directory -> (inode, mtime, when it was read)
        self._names: dict[str, tuple[Identity, _Cover]] = {}  # covered path -> its identity and rules
        self._ids: dict[Identity, _Cover] | None = None
        self._scanned = 0  # entries in the directories recorded now
        self._counts: dict[str, int] = {}  # directory -> its entries when last read
        self._files: list[str] = []  # roots that name one file (``//etc/shadow``): looked at every time
        self._fresh_for: object = None
        self._lock = threading.Lock()

    # -- the check -------------------------------------------------------------------------
    def other_name(self, path: str, kind: str, st: os.stat_result | None = None) -> LinkHit | None:
        """The deny or ask rule ``path`` falls under as another name of a covered file.

        ``kind`` is ``read`` (Read rules) or ``edit`` (Edit and Read rules). ``None`` for a
        path that is not a regular file with several links, or no covered file shares."""
        if not self.active:
            return None
        if st is None:
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                return None
        if st.st_nlink < 2 or not stat.S_ISREG(st.st_mode):
            return None
        with self._lock:  # one engine may serve several sessions' threads
            return self._look_up(path, kind, st)

    def _look_up(self, path: str, kind: str, st: os.stat_result) -> LinkHit | None:
        self._current()
        if not self.complete:
            rule = self._any_rule(kind)
            if rule is None:
                return None
            return LinkHit("ask", rule, None,
                           f"{path} has {st.st_nlink} links and the files deny and ask rules cover are too "
                           f"many to compare (more than {MAX_COVERED:,} files or {MAX_SCANNED:,} entries "
                           "under the working directories): it may be another name of one")
        if self._ids is None:
            self._ids = {}
            for ident, cover in self._names.values():
                merged = self._ids.setdefault(ident, _Cover(cover.name))
                for attr in ("read_deny", "read_ask", "edit_deny", "edit_ask"):
                    if getattr(merged, attr) is None:
                        setattr(merged, attr, getattr(cover, attr))
        found = self._ids.get((st.st_dev, st.st_ino))
        hit = found.hit(kind) if found is not None else None
        if found is None or hit is None:
            return None
        lst, rule = hit
        return LinkHit(lst, rule, found.name, f"it is a hard link to {found.name}")

    def _any_rule(self, kind: str) -> Rule | None:
        matchers = self.read if kind == "read" else self.edit
        for lst in ("deny", "ask"):
            for _prefix, _rx, item in matchers[lst].entries:
                if isinstance(item, Rule):
                    return item
        return None

    # -- building and keeping current ------------------------------------------------------
    def _current(self) -> None:
        """Build the set, or bring it up to date once per tool call (every time outside one)."""
        paths = CALL_PATHS.get()
        token = paths if paths is not None and paths.open else None
        if self.built and token is not None and token is self._fresh_for:
            return
        if not self.built:
            self.built = True
            self.walks += 1
            self._aliases = [(os.path.realpath(r), r) for r in _outermost(self.roots)]
            for root in _outermost([real for real, _ in self._aliases]):
                if os.path.isdir(root):
                    self._walk(root)
                else:
                    self._files.append(root)
            for root in self._files:
                self._read_file(root)
        elif self.complete:
            self._refresh()
        self._fresh_for = token

    def _read_file(self, path: str) -> None:
        """(Re)record a root that names one file; it may have become a directory."""
        self._names.pop(path, None)
        self._ids = None
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            return
        if stat.S_ISDIR(st.st_mode):
            if path not in self._dirs:
                self._walk(path)
            return
        cover = self._cover(path, self._names_of(path)) if stat.S_ISREG(st.st_mode) else None
        if cover is not None:
            self._names[path] = ((st.st_dev, st.st_ino), cover)

    def _refresh(self) -> None:
        for path in self._files:
            self._read_file(path)
        for directory, (ino, mtime, seen) in list(self._dirs.items()):
            if directory not in self._dirs:
                continue  # dropped with a parent in this pass
            try:
                st = os.stat(directory, follow_symlinks=False)
            except OSError:
                self._forget(directory)
                continue
            if st.st_ino != ino or not stat.S_ISDIR(st.st_mode):
                self._forget(directory)
                if stat.S_ISDIR(st.st_mode):
                    self._walk(directory)
            elif st.st_mtime_ns != mtime or seen - mtime < RACY_NS:
                for sub in self._read_dir(directory):
                    self._walk(sub)
            if not self.complete:
                return

    def _forget(self, directory: str) -> None:
        """Drop a directory and everything recorded under it."""
        prefix = directory + "/"
        for d in [d for d in self._dirs if d == directory or d.startswith(prefix)]:
            del self._dirs[d]
            self._scanned -= self._counts.pop(d, 0)
        gone = [p for p in self._names if p.startswith(prefix)]
        for p in gone:
            del self._names[p]
        if gone:
            self._ids = None

    def _walk(self, root: str) -> None:
        stack = [root]
        while stack and self.complete:
            stack += self._read_dir(stack.pop())

    def _read_dir(self, directory: str) -> list[str]:
        """(Re)read one directory's covered files; its subdirectories not yet recorded."""
        try:
            fd = os.open(directory, _OPEN_DIR)
        except (OSError, ValueError):
            self._dirs.pop(directory, None)
            self._scanned -= self._counts.pop(directory, 0)
            return []
        try:
            st = os.fstat(fd)
            self._dirs[directory] = (st.st_ino, st.st_mtime_ns, self.clock())
            with os.scandir(fd) as it:
                return self._entries(directory, it)
        except OSError:
            return []
        finally:
            os.close(fd)

    def _entries(self, directory: str, entries: Iterable[os.DirEntry[str]]) -> list[str]:
        prefix = directory + "/"
        before = {p for p in self._names if p.startswith(prefix) and "/" not in p[len(prefix):]}
        now: set[str] = set()
        fresh: list[str] = []
        self._scanned -= self._counts.pop(directory, 0)
        count = 0
        for entry in entries:
            count += 1
            if self._scanned + count > MAX_SCANNED:
                self.complete = False
                return []
            path = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if path not in self._dirs:
                        fresh.append(path)
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                names = self._names_of(path)
                if not any(self._may_cover(n) for n in names):
                    continue
                cover = self._cover(path, names)
                if cover is None:
                    continue
                est = entry.stat(follow_symlinks=False)
                now.add(path)
                ident = (est.st_dev, est.st_ino)
                if self._names.get(path, (None,))[0] != ident:
                    self._names[path] = (ident, cover)
                    self._ids = None
            except OSError:
                continue
        self._counts[directory] = count
        self._scanned += count
        for path in before - now:
            del self._names[path]
            self._ids = None
        if len(self._names) > MAX_COVERED:
            self.complete = False
            return []
        return fresh

    def _names_of(self, path: str) -> list[str]:
        """``path`` (under a resolved root) and its spelling under the root as configured."""
        for real, lexical in self._aliases:
            if real != lexical and inside(path, real):
                return [path, lexical + path[len(real):]]
        return [path]

    def _cover(self, path: str, names: list[str]) -> _Cover | None:
        c = _Cover(path, _first(self.read["deny"], names), _first(self.read["ask"], names),
                   _first(self.edit["deny"], names), _first(self.edit["ask"], names))
        return c if (c.read_deny or c.read_ask or c.edit_deny or c.edit_ask) else None


def _outermost(roots: Sequence[str]) -> list[str]:
    """The roots that lie inside no other one (each tree is walked once)."""
    unique = list(dict.fromkeys(r for r in roots if r))
    return [r for r in unique if not any(o != r and inside(r, o) for o in unique)]
