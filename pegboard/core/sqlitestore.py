"""The default session store: one SQLite file (stdlib ``sqlite3``) in WAL mode."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from pegboard.core.store import (
    DATA_DIR_ENV,
    DEFAULT_RESULT_QUOTA,
    SessionRecord,
    SessionStoreError,
    StoredResult,
)

SCHEMA_VERSION = 1


def _now() -> float:
    return time.time()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    owner TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS slots (
    session_id TEXT NOT NULL,
    slot TEXT NOT NULL,
    entry TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, slot, entry)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    session_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    seq INTEGER NOT NULL,
    size INTEGER NOT NULL,
    tool TEXT NOT NULL,
    record TEXT NOT NULL,
    text TEXT NOT NULL,
    raw TEXT,
    PRIMARY KEY (session_id, ref)
);
CREATE UNIQUE INDEX IF NOT EXISTS results_ref ON results (ref);
CREATE INDEX IF NOT EXISTS results_seq ON results (session_id, seq);
"""


def _record_to_row(record: SessionRecord) -> str:
    return json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":"))


def _row_to_record(text: str, updated: float | None = None) -> SessionRecord:
    """The record a row keeps; ``updated`` from its column, which ``touch`` and slot writes advance."""
    data = json.loads(text)
    if updated is not None:
        data["updated"] = updated
    data["additional_dirs"] = tuple(data.get("additional_dirs") or ())
    data["meta"] = dict(data.get("meta") or {})
    known = {f for f in SessionRecord.__dataclass_fields__}
    return SessionRecord(**{k: v for k, v in data.items() if k in known})


class SQLiteSessionStore:
    """The default store: one SQLite file in WAL mode, a transaction per change.

    A file that is not a database is moved aside (``<name>.corrupt-<time>``) and a new one
    created; a file from a newer Pegboard, or one that cannot be opened or written, is a
    ``SessionStoreError`` naming the file and what to do.
    """

    def __init__(self, path: Path | str, *, clock: Callable[[], float] = _now, busy_timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.clock = clock
        self.busy_timeout = busy_timeout
        self.notices: list[str] = []
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        try:
            self._migrate(self._connection())
        except sqlite3.DatabaseError as exc:
            if not self._is_corrupt(exc):
                raise self._error(exc) from None
            self._move_aside(exc)
            self._migrate(self._connection())

    # -- connections -----------------------------------------------------------------------
    def _error(self, exc: BaseException) -> SessionStoreError:
        text = str(exc)
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            how = f"make {self.path.parent} writable or point {DATA_DIR_ENV} at a writable directory"
        else:
            how = f"move {self.path} aside, or point {DATA_DIR_ENV} at another directory"
        return SessionStoreError(f"cannot use the session store {self.path}: {text}; {how}")

    @staticmethod
    def _is_corrupt(exc: BaseException) -> bool:
        text = str(exc).lower()
        return "not a database" in text or "malformed" in text or "file is encrypted" in text

    def _move_aside(self, exc: BaseException) -> None:
        self._close_all()
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                os.replace(src, Path(str(aside) + suffix))
        self.notices.append(f"the session store {self.path} was unreadable ({exc}); it was moved to {aside}")

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except OSError as exc:
            raise self._error(exc) from None
        except sqlite3.OperationalError as exc:
            raise self._error(exc) from None
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SessionStoreError(
                f"the session store {self.path} was written by a newer Pegboard (schema {version}, this one "
                f"knows {SCHEMA_VERSION}); upgrade Pegboard or point {DATA_DIR_ENV} at another directory"
            )
        if version < SCHEMA_VERSION:
            script = f"BEGIN IMMEDIATE;\n{_SCHEMA}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;"
            try:
                conn.executescript(script)
            except sqlite3.OperationalError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise self._error(exc) from None

    def _tx(self) -> _Transaction:
        return _Transaction(self._connection(), self)

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        try:
            return self._connection().execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def _close_all(self) -> None:
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._connections.clear()
        self._local = threading.local()

    def close(self) -> None:
        self._close_all()

    # -- records ---------------------------------------------------------------------------
    def create(self, record: SessionRecord) -> SessionRecord:
        now = self.clock()
        stored = replace(record, created=record.created or now, updated=now)
        with self._tx() as conn:
            row = conn.execute("SELECT record, updated FROM sessions WHERE id = ?", (record.id,)).fetchone()
            if row is not None:
                return _row_to_record(*row)
            conn.execute(
                "INSERT INTO sessions (id, owner, created, updated, record) VALUES (?, ?, ?, ?, ?)",
                (stored.id, stored.owner, stored.created, stored.updated, _record_to_row(stored)),
            )
        return stored

    def load(self, session_id: str) -> SessionRecord | None:
        rows = self._read("SELECT record, updated FROM sessions WHERE id = ?", (session_id,))
        return _row_to_record(*rows[0]) if rows else None

    def save(self, record: SessionRecord) -> None:
        stored = replace(record, updated=self.clock())
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO sessions (id, owner, created, updated, record) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, updated = excluded.updated, "
                "record = excluded.record",
                (stored.id, stored.owner, stored.created or stored.updated, stored.updated, _record_to_row(stored)),
            )

    def touch(self, session_id: str, when: float | None = None) -> None:
        """Mark the session used at ``when`` (now by default): one statement, the record stays."""
        stamp = self.clock() if when is None else when
        self._read("UPDATE sessions SET updated = ? WHERE id = ? AND updated < ?", (stamp, session_id, stamp))

    def _touch(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Advance ``updated`` inside the transaction that changed the session's slots or results."""
        stamp = self.clock()
        conn.execute("UPDATE sessions SET updated = ? WHERE id = ? AND updated < ?", (stamp, session_id, stamp))

    def sessions(self) -> list[SessionRecord]:
        rows = self._read("SELECT record, updated FROM sessions ORDER BY updated DESC, created DESC", ())
        return [_row_to_record(*r) for r in rows]

    def delete(self, session_id: str) -> bool:
        with self._tx() as conn:
            found = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0
            found |= conn.execute("DELETE FROM slots WHERE session_id = ?", (session_id,)).rowcount > 0
            found |= conn.execute("DELETE FROM results WHERE session_id = ?", (session_id,)).rowcount > 0
        return found

    # -- slots -----------------------------------------------------------------------------
    def get(self, session_id: str, slot: str, entry: str = "") -> str | None:
        rows = self._read(
            "SELECT value FROM slots WHERE session_id = ? AND slot = ? AND entry = ?", (session_id, slot, entry)
        )
        return rows[0][0] if rows else None

    def put(self, session_id: str, slot: str, value: str | None, entry: str = "") -> None:
        with self._tx() as conn:
            self._put(conn, session_id, slot, value, entry)
            self._touch(conn, session_id)

    @staticmethod
    def _put(conn: sqlite3.Connection, session_id: str, slot: str, value: str | None, entry: str) -> None:
        if value is None:
            conn.execute(
                "DELETE FROM slots WHERE session_id = ? AND slot = ? AND entry = ?", (session_id, slot, entry)
            )
        else:
            conn.execute(
                "INSERT INTO slots (session_id, slot, entry, value) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(session_id, slot, entry) DO UPDATE SET value = excluded.value",
                (session_id, slot, entry, value),
            )

    def update(
        self, session_id: str, slot: str, fn: Callable[[str | None], str | None], entry: str = ""
    ) -> str | None:
        select = "SELECT value FROM slots WHERE session_id = ? AND slot = ? AND entry = ?"
        rows = self._read(select, (session_id, slot, entry))
        seen = rows[0][0] if rows else None
        new = fn(seen)
        if new == seen:  # nothing to write: the same as an update made when it was read
            return new
        with self._tx() as conn:
            row = conn.execute(select, (session_id, slot, entry)).fetchone()
            current = row[0] if row else None
            if current != seen:  # another process wrote in between: work it out again
                new = fn(current)
            self._put(conn, session_id, slot, new, entry)
            self._touch(conn, session_id)
        return new

    def entries(self, session_id: str, slot: str) -> dict[str, str]:
        rows = self._read(
            "SELECT entry, value FROM slots WHERE session_id = ? AND slot = ? AND entry != '' ORDER BY entry",
            (session_id, slot),
        )
        return {r[0]: r[1] for r in rows}

    def clear_slot(self, session_id: str, slot: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM slots WHERE session_id = ? AND slot = ?", (session_id, slot))
            self._touch(conn, session_id)

    def slot_names(self, session_id: str) -> list[str]:
        rows = self._read("SELECT DISTINCT slot FROM slots WHERE session_id = ? ORDER BY slot", (session_id,))
        return [r[0] for r in rows]

    # -- results ---------------------------------------------------------------------------
    def put_result(self, session_id: str, result: StoredResult, quota: int = DEFAULT_RESULT_QUOTA) -> list[str]:
        stored = replace(result, created=result.created or self.clock())
        meta = {k: v for k, v in asdict(stored).items() if k not in ("text", "raw")}
        meta["meta"] = dict(stored.meta)
        dropped: list[str] = []
        with self._tx() as conn:
            seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM results WHERE session_id = ?", (session_id,))
            conn.execute(
                "INSERT OR REPLACE INTO results (session_id, ref, seq, size, tool, record, text, raw) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    stored.ref,
                    seq.fetchone()[0],
                    stored.size,
                    stored.tool,
                    json.dumps(meta, default=str),
                    stored.text,
                    stored.raw,
                ),
            )
            total = conn.execute("SELECT COALESCE(SUM(size), 0) FROM results WHERE session_id = ?", (session_id,))
            excess = total.fetchone()[0] - quota
            if excess > 0:
                for ref, size in conn.execute(
                    "SELECT ref, size FROM results WHERE session_id = ? AND ref != ? ORDER BY seq",
                    (session_id, stored.ref),
                ).fetchall():
                    if excess <= 0:
                        break
                    conn.execute("DELETE FROM results WHERE session_id = ? AND ref = ?", (session_id, ref))
                    dropped.append(ref)
                    excess -= size
            self._touch(conn, session_id)
        return dropped

    @staticmethod
    def _result(row: tuple[Any, ...]) -> StoredResult:
        meta = json.loads(row[0])
        known = set(StoredResult.__dataclass_fields__)
        fields = {k: v for k, v in meta.items() if k in known and k not in ("text", "raw")}
        return StoredResult(text=row[1], raw=row[2], **fields)

    def get_result(self, session_id: str, ref: str) -> StoredResult | None:
        rows = self._read(
            "SELECT record, text, raw FROM results WHERE session_id = ? AND ref = ?", (session_id, ref)
        )
        return self._result(rows[0]) if rows else None

    def find_result(self, ref: str) -> tuple[str, StoredResult] | None:
        rows = self._read("SELECT session_id, record, text, raw FROM results WHERE ref = ?", (ref,))
        return (rows[0][0], self._result(rows[0][1:])) if rows else None

    def results(self, session_id: str) -> list[StoredResult]:
        rows = self._read("SELECT record, text, raw FROM results WHERE session_id = ? ORDER BY seq", (session_id,))
        return [self._result(r) for r in rows]


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error), errors as ``SessionStoreError``."""

    def __init__(self, conn: sqlite3.Connection, store: SQLiteSessionStore) -> None:
        self.conn = conn
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self.store._error(exc) from None
        return self.conn

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            try:
                self.conn.execute("COMMIT")
                return
            except sqlite3.Error as commit_error:
                self.conn.execute("ROLLBACK")
                raise self.store._error(commit_error) from None
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise self.store._error(exc) from None



__all__ = ["SCHEMA_VERSION", "SQLiteSessionStore"]
