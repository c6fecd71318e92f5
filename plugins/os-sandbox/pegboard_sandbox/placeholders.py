"""Mount points for protected paths that do not exist yet, removed again when no command needs them.

bubblewrap can only bind over something, and a bind is the only way to keep a name in a
writable directory from being created. So before a command starts, every missing protected
path (``.envrc``, ``.pegboard``) gets an empty read-only placeholder on the host, which the
namespace binds over itself read-only. The :class:`Ledger`, a file in the user's data
directory (never in a project), records each placeholder before it is made, with its inode
and the processes holding it; a placeholder goes once its last holder has ended, and only
while it is still the empty file or directory that was made. A holder is the bubblewrap
process of a command (Pegboard's own process until bubblewrap has started), so what a
crash left behind is removed by the next ledger sweep: when a sandboxed command or a
Pegboard with the sandbox enabled starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LEDGER_FILE = "placeholders.json"
LOCK_FILE = "placeholders.lock"
FILE_MODE = 0o444
DIR_MODE = 0o555


@dataclass(frozen=True)
class Spot:
    """A protected path; ``directory`` is what its placeholder is when it is missing."""

    path: Path
    directory: bool


def process_id(pid: int) -> str | None:
    """``pid:start-time`` of a running process (so a reused pid is not mistaken for it), else ``None``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in ("Z", "X"):
        return None
    return f"{pid}:{fields[19]}"


def _alive(holder: str) -> bool:
    pid, _, _ = holder.partition(":")
    return pid.isdigit() and process_id(int(pid)) == holder


def _ours(path: Path, entry: dict[str, Any]) -> bool:
    """Whether ``path`` is still the empty placeholder the entry records (its inode once known,
    else its kind and a mode no larger than a placeholder's)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if entry.get("ino") is not None and [st.st_dev, st.st_ino] != [entry.get("dev"), entry.get("ino")]:
        return False
    mode = stat.S_IMODE(st.st_mode)
    if entry.get("directory"):
        return stat.S_ISDIR(st.st_mode) and mode & ~DIR_MODE == 0
    return stat.S_ISREG(st.st_mode) and st.st_size == 0 and mode & ~FILE_MODE == 0


def _remove(path: Path, entry: dict[str, Any]) -> None:
    if not _ours(path, entry):
        return
    with contextlib.suppress(OSError):
        if entry.get("directory"):
            path.rmdir()
        else:
            path.unlink()


def _make(spot: Spot) -> tuple[int, int]:
    """Create the placeholder (never over anything that exists); its device and inode."""
    if spot.directory:
        os.mkdir(spot.path, DIR_MODE)
        st = os.lstat(spot.path)
    else:
        fd = os.open(spot.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
    return st.st_dev, st.st_ino


@dataclass
class Hold:
    """The placeholders one command needs; :meth:`release` (idempotent) when it has ended."""

    ledger: Ledger
    token: str
    created: list[Path] = field(default_factory=list)
    released: bool = False

    def transfer(self, pid: int) -> None:
        """From now on the process ``pid`` holds them (its end releases them at the next sweep).
        A ledger that cannot be written leaves them with this process, which is safe."""
        holder = process_id(pid)
        if holder is None:
            self.release()
            return
        with contextlib.suppress(OSError):
            self.ledger.retag(self.token, holder)

    def release(self) -> None:
        """Give them up; one that cannot be recorded now goes at the next sweep, its holder gone."""
        if not self.released:
            self.released = True
            with contextlib.suppress(OSError):
                self.ledger.release(self.token)


class Ledger:
    """The placeholder record in ``directory``, changed under an exclusive lock and replaced atomically."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / LEDGER_FILE

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, dict[str, Any]]]:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            entries = self._load()
            before = json.dumps(entries, sort_keys=True)
            yield entries
            if json.dumps(entries, sort_keys=True) != before:
                self._save(entries)
        finally:
            os.close(fd)

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        entries = data.get("placeholders") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if isinstance(v, dict) and isinstance(v.get("holders"), dict)}

    def _save(self, entries: dict[str, dict[str, Any]]) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".placeholders-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"placeholders": entries}, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @staticmethod
    def _sweep(entries: dict[str, dict[str, Any]]) -> list[Path]:
        removed: list[Path] = []
        for key, entry in list(entries.items()):
            entry["holders"] = {t: h for t, h in entry["holders"].items() if isinstance(h, str) and _alive(h)}
            if not entry["holders"]:
                path = Path(key)
                if _ours(path, entry):
                    _remove(path, entry)
                    removed.append(path)
                del entries[key]
        return removed

    def sweep(self) -> list[Path]:
        """Remove the placeholders no running process holds; the paths removed."""
        if not self.path.exists():
            return []
        with self._locked() as entries:
            return self._sweep(entries)

    def hold(self, spots: Sequence[Spot]) -> Hold:
        """Hold every spot: adopt a placeholder already there, make one where nothing is.

        A spot that cannot be made (its parent is gone or not writable) is left missing: the
        namespace cannot create it either. Raises ``OSError`` when the ledger cannot be written.
        """
        me = process_id(os.getpid()) or f"{os.getpid()}:0"
        hold = Hold(self, uuid.uuid4().hex)
        with self._locked() as entries:
            self._sweep(entries)
            new: list[Spot] = []
            parents: dict[Path, bool] = {}
            for spot in spots:
                entry = entries.get(str(spot.path))
                if entry is not None and _ours(spot.path, entry):
                    entry["holders"][hold.token] = me
                elif not os.path.lexists(spot.path) and parents.setdefault(spot.path.parent, spot.path.parent.is_dir()):
                    entries[str(spot.path)] = {"directory": spot.directory, "holders": {hold.token: me}}
                    new.append(spot)
            if not new:
                return hold
            self._save(entries)  # the intent first: a crash from here on leaves a record behind
            for spot in new:
                try:
                    dev, ino = _make(spot)
                except OSError:
                    del entries[str(spot.path)]
                    continue
                entries[str(spot.path)].update(dev=dev, ino=ino)
                hold.created.append(spot.path)
        return hold

    def retag(self, token: str, holder: str) -> None:
        with self._locked() as entries:
            for entry in entries.values():
                if token in entry["holders"]:
                    entry["holders"][token] = holder

    def release(self, token: str) -> None:
        with self._locked() as entries:
            for key, entry in list(entries.items()):
                if entry["holders"].pop(token, None) is not None and not entry["holders"]:
                    _remove(Path(key), entry)
                    del entries[key]


__all__ = ["Hold", "Ledger", "Spot", "process_id"]
