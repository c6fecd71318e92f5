"""Where sessions live: the ``SessionStore`` protocol, an in-memory store and the SQLite store.

The protocol is small and speaks only strings (JSON text) and plain records, so a store
backed by a database server can serve several ``pegboard serve`` replicas: nothing here
assumes one process. Every state change is one transaction on one record; ``update``
runs the caller's function inside that transaction (SQLite: ``BEGIN IMMEDIATE``), so two
processes changing one session lose no update.

``pegboard.testing`` ships the contract suite every store must pass
(``SessionStoreContract``). The SQLite store is in ``pegboard.core.sqlitestore``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

DEFAULT_RESULT_QUOTA = 64 * 1024 * 1024
DATA_DIR_ENV = "PEGBOARD_DATA_DIR"
STORE_FILE = "sessions.sqlite3"


class SessionStoreError(RuntimeError):
    """A store that cannot be used; the message names the file and what to do."""


@dataclass(frozen=True)
class SessionRecord:
    """What the store keeps about a session besides its slots and results."""

    id: str
    owner: str | None = None
    created: float = 0.0
    updated: float = 0.0
    agent: str | None = None
    provider: str | None = None
    model: str | None = None
    profile: str | None = None
    subagent: str | None = None
    cwd: str | None = None
    mode: str | None = None
    additional_dirs: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["additional_dirs"] = list(self.additional_dirs)
        data["meta"] = dict(self.meta)
        return data


@dataclass(frozen=True)
class StoredResult:
    """One kept tool result: the whole text (``inspectable``), a bounded projection
    (``projected``) or a pointer at a file of the session (``artifact``)."""

    ref: str
    tool: str
    text: str
    created: float = 0.0
    storage_kind: str = "inspectable"
    content_type: str = "text/plain"
    complete: bool = True
    raw: str | None = None
    run: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8", "surrogatepass")) + len((self.raw or "").encode("utf-8", "surrogatepass"))


@runtime_checkable
class SessionStore(Protocol):
    """The storage behind sessions. Values are JSON text; ``entry=""`` is a whole-value slot."""

    def create(self, record: SessionRecord) -> SessionRecord:
        """Insert ``record`` unless a session with its id exists; return the stored record."""
        ...

    def load(self, session_id: str) -> SessionRecord | None: ...

    def save(self, record: SessionRecord) -> None:
        """Replace the record's fields (not its slots or results) and mark it touched."""
        ...

    def sessions(self) -> list[SessionRecord]:
        """Every stored session, most recently updated first.

        ``updated`` advances on ``save``, on every write to the session's slots or results
        and on ``touch`` (an optional method: ``touch(session_id, when)`` sets ``updated`` to
        ``when`` without rewriting the record; a store without it gets ``save`` instead).
        """
        ...

    def delete(self, session_id: str) -> bool: ...

    def get(self, session_id: str, slot: str, entry: str = "") -> str | None: ...

    def put(self, session_id: str, slot: str, value: str | None, entry: str = "") -> None:
        """Store ``value`` (``None`` deletes it)."""
        ...

    def update(
        self, session_id: str, slot: str, fn: Callable[[str | None], str | None], entry: str = ""
    ) -> str | None:
        """Run ``fn(current)`` and store its answer, atomically; return the answer.

        ``fn`` must be pure: a store may call it again when another process changed the value
        while it ran, and need not write an answer equal to what is stored.
        """
        ...

    def entries(self, session_id: str, slot: str) -> dict[str, str]:
        """Every entry of a map slot (``entry != ""``)."""
        ...

    def clear_slot(self, session_id: str, slot: str) -> None: ...

    def slot_names(self, session_id: str) -> list[str]: ...

    def put_result(self, session_id: str, result: StoredResult, quota: int = DEFAULT_RESULT_QUOTA) -> list[str]:
        """Keep ``result``; drop the oldest results past ``quota`` bytes; return the dropped refs."""
        ...

    def get_result(self, session_id: str, ref: str) -> StoredResult | None: ...

    def find_result(self, ref: str) -> tuple[str, StoredResult] | None:
        """The session that holds ``ref`` and the result (for telling "another session's")."""
        ...

    def results(self, session_id: str) -> list[StoredResult]:
        """Kept results, oldest first, with their text (callers page it)."""
        ...

    def close(self) -> None: ...


def _now() -> float:
    return time.time()


class MemorySessionStore:
    """A store in this process's memory: one-call sessions, tests, hosts that persist nothing."""

    #: Nothing outlives the process, so a session's files go to a temporary directory that
    #: closing the session removes (a store without this attribute counts as durable).
    durable = False

    def __init__(self, clock: Callable[[], float] = _now) -> None:
        self._records: dict[str, SessionRecord] = {}
        self._slots: dict[tuple[str, str, str], str] = {}
        self._results: dict[str, dict[str, StoredResult]] = {}
        self._lock = threading.RLock()
        self.clock = clock

    def create(self, record: SessionRecord) -> SessionRecord:
        with self._lock:
            if record.id in self._records:
                return self._records[record.id]
            now = self.clock()
            stored = replace(record, created=record.created or now, updated=now)
            self._records[record.id] = stored
            return stored

    def load(self, session_id: str) -> SessionRecord | None:
        with self._lock:
            return self._records.get(session_id)

    def save(self, record: SessionRecord) -> None:
        with self._lock:
            self._records[record.id] = replace(record, updated=self.clock())

    def touch(self, session_id: str, when: float | None = None) -> None:
        """Mark the session used at ``when`` (now by default) without rewriting its record."""
        with self._lock:
            found = self._records.get(session_id)
            if found is not None:
                stamp = self.clock() if when is None else when
                if stamp > found.updated:
                    self._records[session_id] = replace(found, updated=stamp)

    def sessions(self) -> list[SessionRecord]:
        with self._lock:
            return sorted(self._records.values(), key=lambda r: (r.updated, r.created), reverse=True)

    def delete(self, session_id: str) -> bool:
        with self._lock:
            found = self._records.pop(session_id, None) is not None
            for k in [k for k in self._slots if k[0] == session_id]:
                del self._slots[k]
            found |= self._results.pop(session_id, None) is not None
            return found

    def get(self, session_id: str, slot: str, entry: str = "") -> str | None:
        return self._slots.get((session_id, slot, entry))

    def put(self, session_id: str, slot: str, value: str | None, entry: str = "") -> None:
        with self._lock:
            if value is None:
                self._slots.pop((session_id, slot, entry), None)
            else:
                self._slots[(session_id, slot, entry)] = value
            self.touch(session_id)

    def update(
        self, session_id: str, slot: str, fn: Callable[[str | None], str | None], entry: str = ""
    ) -> str | None:
        with self._lock:
            new = fn(self._slots.get((session_id, slot, entry)))
            self.put(session_id, slot, new, entry)
            return new

    def entries(self, session_id: str, slot: str) -> dict[str, str]:
        with self._lock:
            return {k[2]: v for k, v in self._slots.items() if k[0] == session_id and k[1] == slot and k[2]}

    def clear_slot(self, session_id: str, slot: str) -> None:
        with self._lock:
            for k in [k for k in self._slots if k[0] == session_id and k[1] == slot]:
                del self._slots[k]
            self.touch(session_id)

    def slot_names(self, session_id: str) -> list[str]:
        with self._lock:
            return sorted({k[1] for k in self._slots if k[0] == session_id})

    def put_result(self, session_id: str, result: StoredResult, quota: int = DEFAULT_RESULT_QUOTA) -> list[str]:
        with self._lock:
            bucket = self._results.setdefault(session_id, {})
            bucket[result.ref] = replace(result, created=result.created or self.clock())
            self.touch(session_id)
            dropped: list[str] = []
            total = sum(r.size for r in bucket.values())
            for ref in list(bucket):
                if total <= quota or ref == result.ref:
                    break
                total -= bucket.pop(ref).size
                dropped.append(ref)
            return dropped

    def get_result(self, session_id: str, ref: str) -> StoredResult | None:
        with self._lock:
            return self._results.get(session_id, {}).get(ref)

    def find_result(self, ref: str) -> tuple[str, StoredResult] | None:
        with self._lock:
            for sid, bucket in self._results.items():
                if ref in bucket:
                    return sid, bucket[ref]
        return None

    def results(self, session_id: str) -> list[StoredResult]:
        with self._lock:
            return list(self._results.get(session_id, {}).values())

    def close(self) -> None:
        pass


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``PEGBOARD_DATA_DIR``, else the platform's user data directory for ``pegboard``."""
    env = os.environ if env is None else env
    if env.get(DATA_DIR_ENV):
        return Path(env[DATA_DIR_ENV]).expanduser()
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local") / "pegboard"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "pegboard"
    return Path(env.get("XDG_DATA_HOME") or home / ".local" / "share") / "pegboard"


__all__ = [
    "DEFAULT_RESULT_QUOTA",
    "MemorySessionStore",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "StoredResult",
    "default_data_dir",
]
