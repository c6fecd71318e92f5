"""A file index kept current by inotify: the files under one root with their modification
times, so a tree listed newest first again is answered from memory instead of a walk that
stats every file.

It lists what ``walk_files`` lists (regular files, dotfiles, no symlinks, no VCS
directories, ignore files when asked) and orders as ``newest_first`` does. Correctness
comes before speed: a directory is watched before it is listed, pending events are read
(without blocking) at the start of every query, and any doubt (a lost event queue, a
replaced root, a changed ignore file above the root, a directory seen twice) drops the
index, which is built again. What inotify cannot promise (no Linux, no free watches or
instances, a filesystem whose changes it may not see, a tree past the bounds) makes the
index decline, and the caller walks as before.

Changes inotify does not report are outside the promise: writes through a memory map, and
changes made on a network filesystem (those are not indexed). Files with several hard
links are stat'ed on every query, since a write through another link reports nothing here.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import struct
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pegboard_toolkit.walk import IGNORE_FILES, VCS_DIRS, WalkTimeout, _IgnoreLayer, _Walker, ancestors

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_EXCL_UNLINK = 0x04000000
WATCH_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK
)
_EVENT = struct.Struct("iIII")

#: filesystems whose changes made on this machine inotify reports (network and FUSE ones are not here)
LOCAL_FILESYSTEMS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "f2fs", "zfs", "bcachefs", "jfs",
    "reiserfs", "ramfs", "nilfs2", "hfsplus", "vfat", "exfat", "ntfs3",
})

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
AFTER_WAIT = 0.05
MAX_TREES = 8
MAX_DIRS = 16_384
MAX_FILES = 250_000
MAX_EVENTS = 65_536
MAX_LIVE = 16
_RESULTS_KEPT = 16


class IndexUnavailable(Exception):
    """The index cannot answer for this tree; ``lasting`` when trying again would not help."""

    def __init__(self, reason: str, *, lasting: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.lasting = lasting


class _Stale(Exception):
    """The index may no longer match the tree: build it again."""


@lru_cache(maxsize=1)
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        raise IndexUnavailable("inotify needs Linux", lasting=True)
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init, add, rm = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
    except (OSError, AttributeError) as exc:
        raise IndexUnavailable(f"no inotify in the C library: {exc}", lasting=True) from None
    init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
    add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
    rm.argtypes, rm.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return libc


class Inotify:
    """One inotify instance, non-blocking: ``add(path)`` a watch, ``events()`` what is queued;
    ``mounts_changed()`` whether a filesystem was mounted or unmounted since it was made (a
    mount over a watched directory changes what is there without an event)."""

    def __init__(self) -> None:
        import ctypes

        self._libc = _libc()
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise IndexUnavailable(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        self.fd = fd
        self._errno = ctypes.get_errno
        self._mounts: Any = None
        with contextlib.suppress(OSError):
            import select

            self._mountinfo = open("/proc/self/mountinfo", "rb")  # noqa: SIM115 (lives as long as the watch)
            self._mountinfo.read()
            self._mounts = select.poll()
            self._mounts.register(self._mountinfo.fileno(), select.POLLPRI | select.POLLERR)
        self._finalizer = weakref.finalize(self, _close_all, fd, getattr(self, "_mountinfo", None))

    def mounts_changed(self) -> bool:
        return self._mounts is None or bool(self._mounts.poll(0))

    def add(self, path: str) -> int:
        """The watch descriptor of ``path`` (a directory); ``OSError`` with the errno when refused."""
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), WATCH_MASK)
        if wd < 0:
            err = self._errno()
            raise OSError(err, os.strerror(err), path)
        return int(wd)

    def remove(self, wd: int) -> None:
        self._libc.inotify_rm_watch(self.fd, wd)

    def events(self, limit: int) -> list[tuple[int, int, bytes]] | None:
        """Every queued event as ``(wd, mask, name)``; ``None`` past ``limit`` events (as an overflow)."""
        found: list[tuple[int, int, bytes]] = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return found
            except InterruptedError:
                continue
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                start = offset + _EVENT.size
                found.append((wd, mask, data[start : start + length].rstrip(b"\0")))
                offset = start + length
            if len(found) > limit:
                return None

    def close(self) -> None:
        self._finalizer()


def _close_all(fd: int, mountinfo: Any) -> None:
    os.close(fd)
    if mountinfo is not None:
        mountinfo.close()


def _mount_types() -> dict[int, str]:
    """Device number -> filesystem type, from ``/proc/self/mountinfo``."""
    found: dict[int, str] = {}
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                if "-" not in fields:
                    continue
                major, _, minor = fields[2].partition(":")
                with contextlib.suppress(ValueError, IndexError):
                    found[os.makedev(int(major), int(minor))] = fields[fields.index("-") + 1]
    except OSError:
        pass
    return found


def _signature(path: str, content: bool = True) -> tuple[int, int, int, int] | None:
    """What a file that decides ignore rules looks like now; for a ``.git`` marker
    (``content=False``) only that it is there, and which one, counts."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not content:
        return (st.st_ino, st.st_mode, 0, 0)
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


@dataclass(eq=False)
class _Dir:
    prefix: str
    name: str
    parent: _Dir | None
    layers: list[_IgnoreLayer]
    wd: int | None = None
    files: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    #: names seen not to be listed (links, ignored ...): a write to one changes nothing here
    skipped: set[str] = field(default_factory=set)


class FileIndex:
    """The files under ``root`` (``ignore``: honouring ignore files as ``walk_files`` does),
    built on the first query and kept current by inotify. Not thread-safe by itself: the
    registry (``FileIndexes``) serialises queries."""

    def __init__(
        self,
        root: str,
        *,
        ignore: bool,
        max_dirs: int = MAX_DIRS,
        max_files: int = MAX_FILES,
        max_events: int = MAX_EVENTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = os.path.abspath(root)
        self.ignore = ignore
        self.max_dirs, self.max_files, self.max_events = max_dirs, max_files, max_events
        self.clock = clock
        self.version = 0
        self.builds = 0
        self.lock = threading.Lock()
        self._prefix = self.root.rstrip("/") + "/"
        self._inotify: Inotify | None = None
        self._deadline: float | None = None
        self._want: Callable[[str], object] | None = None
        self._wanted: list[str] | None = None
        self._reset()

    def _reset(self) -> None:
        self._dirs: dict[str, _Dir] = {}
        self._by_wd: dict[int, _Dir] = {}
        self._mtimes: dict[str, int] = {}
        self._volatile: set[str] = set()
        self._unknown: set[str] = set()
        self._results: OrderedDict[tuple[str, int], tuple[int, list[str]]] = OrderedDict()
        self._sentinels: list[tuple[str, tuple[int, int, int, int] | None]] = []
        self._identity: tuple[int, int] | None = None
        self._mounts: dict[int, str] | None = None
        self._devices: set[int] = set()
        self._walker = _Walker(self.root, self.ignore, None)
        self._ticks = 0
        self.version += 1

    @property
    def live(self) -> bool:
        return self._inotify is not None

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
        self._reset()

    # ---------------------------------------------------------------- queries

    def newest_first(self, pattern: re.Pattern[str], deadline: float | None = None) -> tuple[list[str], str]:
        """The relative paths that ``pattern`` matches in full, newest first then by path, and
        how the answer was had: ``built`` (this query walked), ``served`` (from memory),
        ``rebuilt`` (the index was dropped and walked again). Raises ``IndexUnavailable`` (walk
        instead) or ``WalkTimeout``."""
        self._deadline = deadline
        how = "served"
        if self._inotify is None:
            found = self._build(pattern)
            how = "built"
        else:
            try:
                self._refresh()
            except _Stale:
                self.close()
                found = self._build(pattern)
                how = "rebuilt"
            except BaseException:
                self.close()
                raise
        key = (pattern.pattern, pattern.flags)
        if how == "served":
            kept = self._results.get(key)
            if kept is not None and kept[0] == self.version:
                self._results.move_to_end(key)
                return kept[1], how
            found = list(filter(pattern.match, self._mtimes))
        mtimes, prefix, unknown, volatile = self._mtimes, self._prefix, self._unknown, self._volatile
        changing = False
        if unknown or volatile:
            vanished: set[str] = set()
            for rel in [r for r in found if r in unknown or r in volatile]:
                try:
                    st = os.lstat(prefix + rel)
                except OSError:
                    vanished.add(rel)
                    continue
                mtimes[rel] = st.st_mtime_ns
                unknown.discard(rel)
                if st.st_nlink > 1:
                    volatile.add(rel)
                    changing = True
                else:
                    volatile.discard(rel)
            if vanished:
                found = [r for r in found if r not in vanished]
        found.sort()
        found.sort(key=mtimes.__getitem__, reverse=True)
        if not changing:
            self._results[key] = (self.version, found)
            while len(self._results) > _RESULTS_KEPT:
                self._results.popitem(last=False)
        return found, how

    def files(self, deadline: float | None = None) -> list[str]:
        """Every indexed relative path (for listings that filter on their own)."""
        return self.newest_first(re.compile(r"(?s:.*)\Z"), deadline)[0]

    # ---------------------------------------------------------------- building

    def _tick(self) -> None:
        self._ticks += 1
        if self._deadline is not None and self._ticks % 256 == 0 and self.clock() > self._deadline:
            raise WalkTimeout("the index build ran past its time limit")

    def _build(self, want: re.Pattern[str]) -> list[str]:
        """Watch and list the whole tree; stat only the files ``want`` matches (the others
        when a query first needs them), and return those."""
        self._reset()
        self._want, self._wanted = want.match, []
        self.builds += 1
        self._inotify = Inotify()
        try:
            st = os.stat(self.root)
            self._identity = (st.st_dev, st.st_ino)
            self._check_device(st.st_dev)
            outer = self._walker.outer_layers()
            if self.ignore:
                self._sentinels = self._ignore_sentinels()
            self._scan(None, "", outer, root=True)
        except BaseException:
            self.close()
            raise
        finally:
            wanted, self._want, self._wanted = self._wanted, None, None
        return wanted

    def _ignore_sentinels(self) -> list[tuple[str, tuple[int, int, int, int] | None]]:
        """Files above the root (and in ``.git``) that decide what is ignored: checked each query."""
        paths = [os.path.join(self.root, ".git")]
        for parent in ancestors(self.root):
            paths.append(os.path.join(parent, ".git"))
            paths += [os.path.join(parent, name) for name in IGNORE_FILES]
        repo = self._walker.repo
        if repo is not None:
            paths.append(os.path.join(repo, ".git", "info", "exclude"))
        return [(p, _signature(p, not p.endswith("/.git"))) for p in paths]

    def _check_device(self, dev: int) -> None:
        if dev in self._devices:
            return
        if self._mounts is None:
            self._mounts = _mount_types()
        kind = self._mounts.get(dev)
        if kind not in LOCAL_FILESYSTEMS:
            raise IndexUnavailable(f"filesystem {kind or 'unknown'} is not indexed", lasting=True)
        self._devices.add(dev)

    def _watch(self, path: str, fd: int) -> int:
        assert self._inotify is not None
        if len(self._by_wd) >= self.max_dirs:
            raise IndexUnavailable(f"more than {self.max_dirs} directories", lasting=True)
        try:
            return self._inotify.add(f"/proc/self/fd/{fd}" if _proc_fd() else path)
        except OSError as exc:
            lasting = exc.errno == 28  # ENOSPC: the system's watch limit
            raise IndexUnavailable(f"inotify_add_watch: {exc.strerror}", lasting=lasting) from None

    def _scan(self, parent: _Dir | None, name: str, layers: list[_IgnoreLayer], *, root: bool = False) -> None:
        """Watch, then list, the directory ``name`` of ``parent`` (the root when ``root``) and
        every directory below it."""
        stack: list[tuple[_Dir | None, str, list[_IgnoreLayer]]] = [(parent, name, layers)]
        ignore, walker, prefix_root = self.ignore, self._walker, self._prefix
        while stack:
            up, name, layers = stack.pop()
            self._tick()
            prefix = "" if up is None else f"{up.prefix}{name}/"
            path = self.root if up is None else prefix_root + prefix[:-1]
            node = _Dir(prefix, name, up, layers)
            self._dirs[prefix] = node
            if up is not None:
                up.dirs.add(name)
            try:
                fd = os.open(path, _OPEN_DIR if up is None else _OPEN_DIR | os.O_NOFOLLOW)
            except OSError:
                if up is None:
                    raise IndexUnavailable(f"cannot open {path}") from None
                continue
            try:
                wd = self._watch(path, fd)
                if wd in self._by_wd:
                    raise _Stale if not root else IndexUnavailable("a directory is reachable twice")
                node.wd = wd
                self._by_wd[wd] = node
                self._check_device(os.fstat(fd).st_dev)
                if ignore:
                    node.layers = layers = layers + walker.layers_for(path)
                    self._watch_ignore_links(path)
                files, mtimes, volatile, unknown = node.files, self._mtimes, self._volatile, self._unknown
                want, wanted = self._want, self._wanted
                with os.scandir(fd) as it:
                    for entry in it:
                        entry_name = entry.name
                        try:
                            if entry.is_file(follow_symlinks=False):
                                if entry_name in VCS_DIRS or (
                                    ignore and walker.ignored(f"{path}/{entry_name}", False, layers)
                                ):
                                    continue
                                files.add(entry_name)
                                rel = prefix + entry_name
                                if want is not None and wanted is not None and not want(rel):
                                    mtimes[rel] = 0
                                    unknown.add(rel)
                                    continue
                                st = entry.stat(follow_symlinks=False)
                                mtimes[rel] = st.st_mtime_ns
                                if wanted is not None:
                                    wanted.append(rel)
                                if st.st_nlink > 1:
                                    volatile.add(rel)
                            elif entry.is_dir(follow_symlinks=False):
                                if entry_name in VCS_DIRS or (
                                    ignore and walker.ignored(f"{path}/{entry_name}", True, layers)
                                ):
                                    continue
                                stack.append((node, entry_name, layers))
                        except OSError:
                            continue
                if len(mtimes) > self.max_files:
                    raise IndexUnavailable(f"more than {self.max_files} files", lasting=True)
            except OSError:
                continue
            finally:
                os.close(fd)

    def _watch_ignore_links(self, path: str) -> None:
        """An ignore file that is a link (or has other names) can change without an event here."""
        for name in IGNORE_FILES:
            candidate = os.path.join(path, name)
            try:
                st = os.lstat(candidate)
            except OSError:
                continue
            if os.path.islink(candidate) or st.st_nlink > 1:
                self._sentinels.append((candidate, _signature(candidate)))

    def _add_file(self, node: _Dir, name: str, st: os.stat_result) -> None:
        rel = node.prefix + name
        if rel not in self._mtimes and len(self._mtimes) >= self.max_files:
            raise IndexUnavailable(f"more than {self.max_files} files", lasting=True)
        node.files.add(name)
        self._mtimes[rel] = st.st_mtime_ns
        self._unknown.discard(rel)
        if st.st_nlink > 1:
            self._volatile.add(rel)
        else:
            self._volatile.discard(rel)

    # ---------------------------------------------------------------- keeping current

    def _refresh(self) -> None:
        try:
            st = os.stat(self.root)
        except OSError:
            raise _Stale from None
        if (st.st_dev, st.st_ino) != self._identity:
            raise _Stale
        for path, signature in self._sentinels:
            if _signature(path, not path.endswith("/.git")) != signature:
                raise _Stale
        assert self._inotify is not None
        if self._inotify.mounts_changed():
            raise _Stale
        events = self._inotify.events(self.max_events)
        if events is None:
            raise _Stale
        rescan: set[str] = set()
        for wd, mask, raw in events:
            if mask & IN_Q_OVERFLOW:
                raise _Stale
            node = self._by_wd.get(wd)
            if node is None:
                continue
            self.version += 1
            if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
                if node.parent is None or mask & IN_UNMOUNT:
                    raise _Stale
                if mask & IN_IGNORED:
                    self._by_wd.pop(wd, None)
                    node.wd = None
                continue
            if not raw:
                if node.parent is None and mask & IN_ATTRIB:
                    raise _Stale
                continue
            self._tick()
            self._changed(node, os.fsdecode(raw), mask, rescan)
        for prefix in sorted(rescan, key=len):
            node = self._dirs.get(prefix)
            if node is None or any(prefix.startswith(p) and p != prefix for p in rescan if p in self._dirs):
                continue
            if node.parent is None:
                raise _Stale
            self._forget(node.parent, node.name)
            self._learn(node.parent, node.name)

    def _changed(self, node: _Dir, name: str, mask: int, rescan: set[str]) -> None:
        if self.ignore and name in IGNORE_FILES:
            rescan.add(node.prefix)
        if mask & (IN_DELETE | IN_MOVED_FROM):
            self._forget(node, name)
        elif mask & (IN_CREATE | IN_MOVED_TO):
            self._forget(node, name)
            self._learn(node, name)
        elif name in node.files:
            self._unknown.add(node.prefix + name)
        elif name in node.skipped:
            return
        elif name in node.dirs:
            child = self._dirs.get(f"{node.prefix}{name}/")
            path = f"{self._prefix}{node.prefix}{name}"
            if child is None or child.wd is None or not os.access(path, os.R_OK | os.X_OK):
                self._forget(node, name)
                self._learn(node, name)
        else:
            self._learn(node, name)

    def _forget(self, node: _Dir, name: str) -> None:
        node.skipped.discard(name)
        if name in node.files:
            node.files.discard(name)
            rel = node.prefix + name
            self._mtimes.pop(rel, None)
            self._volatile.discard(rel)
            self._unknown.discard(rel)
        if name not in node.dirs:
            return
        node.dirs.discard(name)
        stack = [self._dirs.get(f"{node.prefix}{name}/")]
        while stack:
            gone = stack.pop()
            if gone is None:
                continue
            self._dirs.pop(gone.prefix, None)
            if gone.wd is not None:
                self._by_wd.pop(gone.wd, None)
                assert self._inotify is not None
                self._inotify.remove(gone.wd)
            for file in gone.files:
                self._mtimes.pop(gone.prefix + file, None)
                self._volatile.discard(gone.prefix + file)
                self._unknown.discard(gone.prefix + file)
            stack += [self._dirs.get(f"{gone.prefix}{sub}/") for sub in gone.dirs]

    def _learn(self, node: _Dir, name: str) -> None:
        path = f"{self._prefix}{node.prefix}{name}"
        try:
            st = os.lstat(path)
        except OSError:
            return
        listed = name not in VCS_DIRS and (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode))
        if listed and self.ignore and self._walker.ignored(path, stat.S_ISDIR(st.st_mode), node.layers):
            listed = False
        if not listed:
            node.skipped.add(name)
        elif stat.S_ISDIR(st.st_mode):
            self._scan(node, name, node.layers)
        else:
            self._add_file(node, name, st)


@lru_cache(maxsize=1)
def _proc_fd() -> bool:
    """Whether watches can name the open directory itself (so the watched and the listed
    directory are one, even if its path is replaced in between)."""
    return os.path.isdir("/proc/self/fd")


# -------------------------------------------------------------------- the registry

_live_lock = threading.Lock()
_live: OrderedDict[int, weakref.ref[FileIndex]] = OrderedDict()


def _make_room(keep: FileIndex, limit: int) -> None:
    """Keep at most ``limit`` inotify instances open in this process: close the least
    recently used indexes of any registry (they rebuild when asked again)."""
    with _live_lock:
        _live.pop(id(keep), None)
        for key, ref in list(_live.items()):
            index = ref()
            if index is None or not index.live:
                _live.pop(key, None)
        while len(_live) >= limit:
            _key, ref = _live.popitem(last=False)
            index = ref()
            if index is not None and index.lock.acquire(blocking=False):
                try:
                    index.close()
                finally:
                    index.lock.release()
        _live[id(keep)] = weakref.ref(keep)


class FileIndexes:
    """The indexes of one ``Pegboard``: one per (root, ignore), at most ``max_trees``, least
    recently used dropped first. ``newest_first`` answers from an index or returns ``None``
    with the reason in ``last_reason`` (then the caller walks)."""

    def __init__(
        self,
        *,
        max_trees: int = MAX_TREES,
        max_live: int = MAX_LIVE,
        **limits: Any,
    ) -> None:
        self.max_trees, self.max_live = max_trees, max_live
        self._limits = limits
        self._lock = threading.Lock()
        self._indexes: OrderedDict[tuple[str, bool], FileIndex] = OrderedDict()
        self._declined: OrderedDict[tuple[str, bool], str] = OrderedDict()
        self._failures: dict[tuple[str, bool], int] = {}
        self.last_reason = ""

    def state(self, root: str, *, ignore: bool) -> str:
        """``live`` (an index answers from memory, or is being built), ``declined`` (the walk
        answers) or ``new``."""
        key = (os.path.abspath(root), ignore)
        with self._lock:
            if key in self._declined:
                return "declined"
            index = self._indexes.get(key)
        return "live" if index is not None and (index.live or index.lock.locked()) else "new"

    def _index_for(self, key: tuple[str, bool]) -> FileIndex | None:
        evicted: list[FileIndex] = []
        with self._lock:
            if key in self._declined:
                self.last_reason = self._declined[key]
                return None
            index = self._indexes.get(key)
            if index is None:
                index = self._indexes[key] = FileIndex(key[0], ignore=key[1], **self._limits)
                while len(self._indexes) > self.max_trees:
                    evicted.append(self._indexes.popitem(last=False)[1])
            self._indexes.move_to_end(key)
        for old in evicted:
            with old.lock:
                old.close()
        return index

    def newest_first(
        self, root: str, *, ignore: bool, pattern: re.Pattern[str], deadline: float | None = None
    ) -> tuple[list[str], str] | None:
        """The answer of the index of (``root``, ``ignore``), made on first use, or ``None``
        (see ``last_reason``)."""
        key = (os.path.abspath(root), ignore)
        index = self._index_for(key)
        if index is None:
            return None
        with index.lock:
            return self._answer(key, index, pattern, deadline)

    def build_aside(
        self,
        root: str,
        *,
        ignore: bool,
        pattern: re.Pattern[str],
        timeout: float,
        after: threading.Event | None = None,
    ) -> bool:
        """Build the index of (``root``, ``ignore``) in a thread of its own (stat'ing the files
        ``pattern`` matches first), once ``after`` is set (at most ``AFTER_WAIT`` s later); a
        query that comes meanwhile waits for it. False when there is nothing to build
        (declined, or being built or live already)."""
        key = (os.path.abspath(root), ignore)
        index = self._index_for(key)
        if index is None or not index.lock.acquire(blocking=False):
            return False
        if index.live:
            index.lock.release()
            return False

        def build() -> None:
            try:
                if after is not None:
                    after.wait(AFTER_WAIT)
                with contextlib.suppress(WalkTimeout):
                    self._answer(key, index, pattern, time.monotonic() + timeout)
            finally:
                index.lock.release()

        threading.Thread(target=build, name="pegboard-fileindex-build", daemon=True).start()
        return True

    def _answer(
        self, key: tuple[str, bool], index: FileIndex, pattern: re.Pattern[str], deadline: float | None
    ) -> tuple[list[str], str] | None:
        """``index.newest_first`` with ``index.lock`` held: declines recorded, room made."""
        if not index.live:
            _make_room(index, self.max_live)
        try:
            answer = index.newest_first(pattern, deadline)
        except IndexUnavailable as exc:
            self._decline(key, index, exc.reason, exc.lasting)
            return None
        except OSError as exc:
            self._decline(key, index, str(exc), False)
            return None
        except WalkTimeout:
            self._decline(key, index, "the tree took too long to index", True)
            raise
        self._failures.pop(key, None)
        return answer

    def _decline(self, key: tuple[str, bool], index: FileIndex, reason: str, lasting: bool) -> None:
        index.close()
        self.last_reason = reason
        with self._lock:
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            if lasting or failures >= 2:
                self._indexes.pop(key, None)
                self._declined[key] = reason
                while len(self._declined) > 256:
                    self._declined.popitem(last=False)

    def close(self) -> None:
        with self._lock:
            indexes = list(self._indexes.values())
            self._indexes.clear()
        for index in indexes:
            with index.lock:
                index.close()


__all__ = ["FileIndex", "FileIndexes", "IndexUnavailable", "Inotify"]
