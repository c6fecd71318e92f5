"""The read ledger: which files this session has read, and whether they changed since.

Write, Edit and NotebookEdit refuse to change an existing file the model has not seen, or
has seen only in part, or that changed on disk after it was read: the model would be
editing from a stale picture. The ledger is a persisted map slot of the session (one record
per path), so a read in one process counts for an edit in another.

What counts as a read: a whole-file Read, or an explicit offset/limit range, with the file
unchanged since; the automatic first page of a whole-file Read that hit its size budget (a
``PARTIAL view``) does not; Bash's single-file views (``cat``, ``head`` ...) do. A write
through Write/Edit records the new content as read, so consecutive edits need no re-read.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pegboard import MapKey

if TYPE_CHECKING:
    from pegboard import Session, ToolContext

StaleKind = Literal["not_read", "partial_read", "stale_read"]

NOT_READ = "File has not been read yet. Read it first before writing to it."
PARTIAL_READ = (
    "File has only been read partially (the first page of a PARTIAL view). Read the part you want to "
    "change with offset and limit, or the whole file, before writing to it."
)
STALE_READ = (
    "File has been modified since it was read, either by the user or by a linter. Read it again before "
    "attempting to write it."
)


@dataclass
class LedgerEntry:
    """What the session knows about one file from its last read or write; ``time`` is when
    this version of the file was first seen, so reading it again changes nothing to store."""

    path: str
    size: int
    mtime_ns: int
    sha256: str | None = None
    whole: bool = False
    partial_view: bool = False
    ranges: list[list[int]] = field(default_factory=list)
    time: float = 0.0


@dataclass(frozen=True)
class Staleness:
    """Why a file may not be changed yet: ``kind`` is a stable code, ``message`` tells the model."""

    kind: StaleKind
    message: str


LEDGER: MapKey[LedgerEntry] = MapKey("pegboard-read-ledger", LedgerEntry, persist=True)


def file_digest(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _key(path: Path | str) -> str:
    """One key per file: a read through a symlink counts for an edit through its target."""
    return os.path.realpath(os.path.abspath(str(path)))


class ReadLedger:
    """The ledger of one session: ``ReadLedger.of(ctx)`` inside a tool."""

    def __init__(self, session: Session) -> None:
        self._entries = session.state.map(LEDGER)

    @classmethod
    def of(cls, ctx: ToolContext) -> ReadLedger:
        if ctx.session is None:
            raise RuntimeError("the read ledger needs a session; run the tool through Pegboard")
        return cls(ctx.session)

    def entry(self, path: Path | str) -> LedgerEntry | None:
        found: LedgerEntry | None = self._entries.get(_key(path))
        return found

    def entries(self) -> list[LedgerEntry]:
        return [e for _k, e in self._entries.items()]

    def record_read(
        self,
        path: Path | str,
        *,
        whole: bool,
        first_line: int | None = None,
        last_line: int | None = None,
        partial_view: bool = False,
        digest: str | None = None,
        resolved: bool = False,
        seen: os.stat_result | None = None,
    ) -> LedgerEntry | None:
        """Note a read of ``path``: the whole file, or lines ``first_line``..``last_line``.

        ``partial_view=True`` is the first page of a whole-file read cut by its budget: it is
        kept (so Edit can say "read partially") but does not count as a read. A range read
        adds to what was read before, while the file is unchanged. ``resolved=True`` says
        ``path`` comes from ``pegboard.resolve_path`` for a file that exists, so it is its
        own key already. ``seen`` is the file's ``os.stat`` taken before its content was
        read (by default the file is looked at now): a change between that look and the read
        then makes the entry stale, never an old picture look current.
        """
        key = str(path) if resolved else _key(path)
        if seen is not None:
            st = seen
        else:
            try:
                st = os.stat(key)
            except OSError:
                return None

        def merge(old: LedgerEntry | None) -> LedgerEntry:
            same = old is not None and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns
            ranges = list(old.ranges) if same and old is not None else []
            if not whole and not partial_view and first_line is not None:
                span = [first_line, last_line if last_line is not None else first_line]
                if span not in ranges:
                    ranges.append(span)
            return LedgerEntry(
                path=key,
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
                sha256=digest or (old.sha256 if same and old is not None else None),
                whole=whole or (same and old is not None and old.whole),
                partial_view=partial_view and not ranges and not (same and old is not None and old.whole),
                ranges=ranges,
                time=old.time if same and old is not None and old.time else time.time(),
            )

        known = self._entries.get(key)
        if known is not None and merge(known) == known:  # read again, unchanged: nothing to store
            return known
        return self._entries.update(key, merge)

    def record_write(self, path: Path | str, digest: str | None = None) -> None:
        """After the tool wrote ``path``: its new content is what the model knows."""
        self.record_read(path, whole=True, digest=digest)

    def forget(self, path: Path | str) -> None:
        del self._entries[_key(path)]

    def require_fresh(self, path: Path | str) -> Staleness | None:
        """``None`` when ``path`` was read (whole or a range) and is unchanged since; else why not."""
        entry = self.entry(path)
        if entry is None:
            return Staleness("not_read", NOT_READ)
        if not entry.whole and not entry.ranges:
            return Staleness("partial_read", PARTIAL_READ)
        try:
            st = os.stat(_key(path))
        except OSError:
            return Staleness("stale_read", STALE_READ)
        if st.st_size == entry.size and st.st_mtime_ns == entry.mtime_ns:
            return None
        if entry.sha256 is not None and st.st_size == entry.size:
            try:
                if file_digest(Path(_key(path))) == entry.sha256:
                    return None
            except OSError:
                pass
        return Staleness("stale_read", STALE_READ)


__all__ = [
    "LEDGER",
    "NOT_READ",
    "PARTIAL_READ",
    "STALE_READ",
    "LedgerEntry",
    "ReadLedger",
    "StaleKind",
    "Staleness",
    "file_digest",
]
