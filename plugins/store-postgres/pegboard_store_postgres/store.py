"""``PostgresSessionStore``: sessions in PostgreSQL, shared by every process that opens the same DSN.

Each change is one transaction. ``update`` runs the caller's function inside a
``SERIALIZABLE`` transaction and runs it again when PostgreSQL reports a serialization
failure, so concurrent writers on several replicas lose no update. Results (spilled
command output included, which the shell tools keep as results) live in the database
within the session's quota, so ``tool_result_read`` works from every replica.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, replace
from typing import Any, TypeVar

import psycopg
import psycopg_pool
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict

from pegboard import SessionRecord, SessionStoreError, StoredResult
from pegboard_store_postgres.bus import PG_CHANNEL, PRESENCE_NAMESPACE, Bus, envelope
from pegboard_store_postgres.loop import BackgroundLoop
from pegboard_store_postgres.schema import (
    CREATE_VERSION_TABLE,
    MIGRATION_LOCK,
    MIGRATIONS,
    SCHEMA_VERSION,
    VERSION_TABLE,
)

T = TypeVar("T")

DEFAULT_RESULT_QUOTA = 64 * 1024 * 1024
RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def describe_dsn(dsn: str) -> str:
    """``user@host:port/dbname`` of a DSN, never its password (for messages and logs)."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "the configured PostgreSQL database (the DSN does not parse)"
    host = str(parts.get("host") or parts.get("hostaddr") or "localhost")
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"postgresql://{user}{host}:{parts.get('port') or 5432}/{parts.get('dbname') or ''}"


def _now() -> float:
    return time.time()


def _record_json(record: SessionRecord) -> str:
    return json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":"))


def _record(data: dict[str, Any], updated: float) -> SessionRecord:
    known = set(SessionRecord.__dataclass_fields__)
    fields = {k: v for k, v in data.items() if k in known}
    fields["updated"] = updated
    fields["additional_dirs"] = tuple(fields.get("additional_dirs") or ())
    fields["meta"] = dict(fields.get("meta") or {})
    return SessionRecord(**fields)


def _result(meta: dict[str, Any], text: str, raw: str | None) -> StoredResult:
    known = set(StoredResult.__dataclass_fields__) - {"text", "raw"}
    return StoredResult(text=text, raw=raw, **{k: v for k, v in meta.items() if k in known})


class PostgresSessionStore:
    """The ``SessionStore`` protocol on PostgreSQL through a psycopg async connection pool.

    ``dsn`` is a libpq connection string or URI. The schema is created or migrated on
    first connect (see ``pegboard_store_postgres.schema``). ``clock`` stamps records, so
    retention can be tested without waiting.
    """

    def __init__(
        self,
        dsn: str,
        *,
        min_connections: int = 1,
        max_connections: int = 8,
        connect_timeout: float = 10.0,
        statement_timeout: float = 30.0,
        serialization_retries: int = 100,
        clock: Callable[[], float] = _now,
    ) -> None:
        self.where = describe_dsn(dsn)
        self._dsn = dsn
        self._bus: Bus | None = None
        self._bus_lock = threading.Lock()
        self.clock = clock
        self.statement_timeout = statement_timeout
        self.serialization_retries = serialization_retries
        self.notices: list[str] = []
        self._loop = BackgroundLoop()
        self._pool = psycopg_pool.AsyncConnectionPool(
            dsn,
            min_size=min_connections,
            max_size=max(min_connections, max_connections),
            kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout))},
            open=False,
            check=psycopg_pool.AsyncConnectionPool.check_connection,
            timeout=connect_timeout,
            name="pegboard-sessions",
        )
        try:
            self._loop.run(self._open(connect_timeout), timeout=connect_timeout + statement_timeout)
        except BaseException:
            self._loop.run(self._pool.close())
            self._loop.stop()
            raise

    # -- plumbing --------------------------------------------------------------------------
    def _error(self, exc: BaseException) -> SessionStoreError:
        if isinstance(exc, psycopg_pool.PoolTimeout | psycopg.OperationalError | TimeoutError):
            how = "check that the server is up and reachable and that the DSN (sessions.postgres.dsn) is right"
        elif isinstance(exc, pg_errors.InsufficientPrivilege):
            how = "grant the DSN's user CREATE on the database's schema, or run the migration once as its owner"
        else:
            how = "see the database server's log"
        text = str(exc).strip() or type(exc).__name__
        return SessionStoreError(f"cannot use the PostgreSQL session store {self.where}: {text}; {how}")

    def _run(self, coro: Awaitable[T]) -> T:
        async def guarded() -> T:
            try:
                return await coro
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                raise self._error(exc) from None

        try:
            return self._loop.run(guarded(), timeout=self.statement_timeout + 5)
        except TimeoutError as exc:
            raise self._error(exc) from None

    async def _open(self, connect_timeout: float) -> None:
        try:
            await self._pool.open(wait=True, timeout=connect_timeout)
            await self._migrate()
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise self._error(exc) from None

    async def _migrate(self) -> None:
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            await conn.execute(CREATE_VERSION_TABLE)
            row = await (await conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {VERSION_TABLE}")).fetchone()
            current = int(row[0]) if row else 0
            if current > SCHEMA_VERSION:
                raise SessionStoreError(
                    f"the PostgreSQL session store {self.where} has schema {current}, newer than this Pegboard "
                    f"knows ({SCHEMA_VERSION}); upgrade pegboard-store-postgres or use another database"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                await conn.execute(MIGRATIONS[version - 1])
                await conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)", (version,))
                self.notices.append(f"the session store {self.where} was migrated to schema {version}")

    @property
    def schema_version(self) -> int:
        async def read() -> int:
            async with self._pool.connection() as conn:
                row = await (await conn.execute(f"SELECT MAX(version) FROM {VERSION_TABLE}")).fetchone()
                return int(row[0]) if row and row[0] is not None else 0

        return self._run(read())

    async def _tx(self, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]) -> T:
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute(f"SET LOCAL statement_timeout = {int(self.statement_timeout * 1000)}")
            return await work(conn)

    async def _rows(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        async with self._pool.connection() as conn:
            return await (await conn.execute(sql, tuple(args))).fetchall()

    async def _touch(self, conn: psycopg.AsyncConnection[Any], session_id: str) -> None:
        stamp = self.clock()
        await conn.execute(
            "UPDATE pegboard_sessions SET updated = %s WHERE id = %s AND updated < %s", (stamp, session_id, stamp)
        )

    # -- between processes -----------------------------------------------------------------
    def _started_bus(self) -> Bus:
        with self._bus_lock:
            if self._bus is None:
                bus = Bus(self._dsn, self._loop.loop)
                self._run(bus.start(self.statement_timeout))
                self._bus = bus
            return self._bus

    def notify(self, channel: str, payload: str) -> None:
        """Send ``payload`` to every process subscribed to ``channel`` (``NOTIFY``, at commit)."""
        text = envelope(channel, payload)

        async def work(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute("SELECT pg_notify(%s, %s)", (PG_CHANNEL, text))

        self._run(self._tx(work))

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(payload)`` for each message on ``channel`` (on the store's thread: be
        quick); returns the function that unsubscribes."""
        return self._started_bus().subscribe(channel, callback)

    def hold_presence(self, name: str) -> None:
        """Declare ``name`` present while this process's listening connection lives."""
        bus = self._started_bus()
        bus.hold(name)
        self._run(bus.wait_held(name, self.statement_timeout))

    def present(self, name: str) -> bool:
        """Whether some process holds ``name``'s presence (its connection is alive)."""

        async def work(conn: psycopg.AsyncConnection[Any]) -> bool:
            row = await (await conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", (PRESENCE_NAMESPACE, name)
            )).fetchone()
            return not (row and row[0])

        return self._run(self._tx(work))

    def close(self) -> None:
        if self._loop.loop.is_closed():
            return
        try:
            if self._bus is not None:
                self._loop.run(self._bus.stop(), timeout=10)
            self._loop.run(self._pool.close(timeout=5), timeout=10)
        finally:
            self._loop.stop()

    # -- records ---------------------------------------------------------------------------
    def create(self, record: SessionRecord) -> SessionRecord:
        now = self.clock()
        stored = replace(record, created=record.created or now, updated=now)

        async def work(conn: psycopg.AsyncConnection[Any]) -> SessionRecord:
            inserted = await conn.execute(
                "INSERT INTO pegboard_sessions (id, owner, created, updated, record) "
                "VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT (id) DO NOTHING",
                (stored.id, stored.owner, stored.created, stored.updated, _record_json(stored)),
            )
            if inserted.rowcount:
                return stored
            row = await (
                await conn.execute("SELECT record, updated FROM pegboard_sessions WHERE id = %s", (record.id,))
            ).fetchone()
            return _record(row[0], row[1]) if row else stored

        return self._run(self._tx(work))

    def load(self, session_id: str) -> SessionRecord | None:
        rows = self._run(self._rows("SELECT record, updated FROM pegboard_sessions WHERE id = %s", (session_id,)))
        return _record(rows[0][0], rows[0][1]) if rows else None

    def save(self, record: SessionRecord) -> None:
        stored = replace(record, updated=self.clock())

        async def work(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(
                "INSERT INTO pegboard_sessions (id, owner, created, updated, record) "
                "VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, "
                "updated = excluded.updated, record = excluded.record",
                (stored.id, stored.owner, stored.created or stored.updated, stored.updated, _record_json(stored)),
            )

        self._run(self._tx(work))

    def touch(self, session_id: str, when: float | None = None) -> None:
        """Mark the session used at ``when`` (now by default) without rewriting its record."""
        stamp = self.clock() if when is None else when

        async def work(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(
                "UPDATE pegboard_sessions SET updated = %s WHERE id = %s AND updated < %s", (stamp, session_id, stamp)
            )

        self._run(self._tx(work))

    def sessions(self) -> list[SessionRecord]:
        rows = self._run(
            self._rows("SELECT record, updated FROM pegboard_sessions ORDER BY updated DESC, created DESC")
        )
        return [_record(r[0], r[1]) for r in rows]

    def delete(self, session_id: str) -> bool:
        async def work(conn: psycopg.AsyncConnection[Any]) -> bool:
            found = False
            for table, column in (("pegboard_sessions", "id"), ("pegboard_slots", "session_id"),
                                  ("pegboard_results", "session_id")):
                found |= (await conn.execute(f"DELETE FROM {table} WHERE {column} = %s", (session_id,))).rowcount > 0
            return found

        return self._run(self._tx(work))

    def prune(self, cutoff: float, keep: Iterable[str] = ()) -> list[str]:
        """Delete, in one transaction, every session untouched since ``cutoff`` but those in ``keep``."""
        kept = list(keep)

        async def work(conn: psycopg.AsyncConnection[Any]) -> list[str]:
            rows = await (
                await conn.execute(
                    "DELETE FROM pegboard_sessions WHERE updated < %s AND NOT (id = ANY(%s)) RETURNING id",
                    (cutoff, kept),
                )
            ).fetchall()
            ids = [r[0] for r in rows]
            if ids:
                await conn.execute("DELETE FROM pegboard_slots WHERE session_id = ANY(%s)", (ids,))
                await conn.execute("DELETE FROM pegboard_results WHERE session_id = ANY(%s)", (ids,))
            return ids

        return self._run(self._tx(work))

    # -- slots -----------------------------------------------------------------------------
    def get(self, session_id: str, slot: str, entry: str = "") -> str | None:
        rows = self._run(self._rows(
            "SELECT value FROM pegboard_slots WHERE session_id = %s AND slot = %s AND entry = %s",
            (session_id, slot, entry),
        ))
        return rows[0][0] if rows else None

    @staticmethod
    async def _put(conn: psycopg.AsyncConnection[Any], session_id: str, slot: str, value: str | None,
                   entry: str) -> None:
        if value is None:
            await conn.execute(
                "DELETE FROM pegboard_slots WHERE session_id = %s AND slot = %s AND entry = %s",
                (session_id, slot, entry),
            )
        else:
            await conn.execute(
                "INSERT INTO pegboard_slots (session_id, slot, entry, value) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (session_id, slot, entry) DO UPDATE SET value = excluded.value",
                (session_id, slot, entry, value),
            )

    def put(self, session_id: str, slot: str, value: str | None, entry: str = "") -> None:
        async def work(conn: psycopg.AsyncConnection[Any]) -> None:
            await self._put(conn, session_id, slot, value, entry)
            await self._touch(conn, session_id)

        self._run(self._tx(work))

    def update(
        self, session_id: str, slot: str, fn: Callable[[str | None], str | None], entry: str = ""
    ) -> str | None:
        """``fn(current)`` stored in one ``SERIALIZABLE`` transaction, retried on serialization failure."""
        return self._run(self._update(session_id, slot, fn, entry))

    async def _update(
        self, session_id: str, slot: str, fn: Callable[[str | None], str | None], entry: str
    ) -> str | None:
        for attempt in range(self.serialization_retries):
            try:
                async with self._pool.connection() as conn, conn.transaction():
                    await conn.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                    row = await (await conn.execute(
                        "SELECT value FROM pegboard_slots WHERE session_id = %s AND slot = %s AND entry = %s",
                        (session_id, slot, entry),
                    )).fetchone()
                    current = row[0] if row else None
                    new = fn(current)
                    if new != current:
                        await self._put(conn, session_id, slot, new, entry)
                        await self._touch(conn, session_id)
                return new
            except RETRYABLE:
                await asyncio.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
        raise SessionStoreError(
            f"the PostgreSQL session store {self.where} could not update {slot!r} of session {session_id!r}: "
            f"{self.serialization_retries} attempts met a concurrent change; raise "
            "sessions.postgres.serializationRetries or reduce writers of that slot"
        )

    def entries(self, session_id: str, slot: str) -> dict[str, str]:
        rows = self._run(self._rows(
            "SELECT entry, value FROM pegboard_slots WHERE session_id = %s AND slot = %s AND entry <> '' "
            "ORDER BY entry",
            (session_id, slot),
        ))
        return {r[0]: r[1] for r in rows}

    def clear_slot(self, session_id: str, slot: str) -> None:
        async def work(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute("DELETE FROM pegboard_slots WHERE session_id = %s AND slot = %s", (session_id, slot))
            await self._touch(conn, session_id)

        self._run(self._tx(work))

    def slot_names(self, session_id: str) -> list[str]:
        rows = self._run(self._rows(
            "SELECT DISTINCT slot FROM pegboard_slots WHERE session_id = %s ORDER BY slot", (session_id,)
        ))
        return [r[0] for r in rows]

    # -- results ---------------------------------------------------------------------------
    def put_result(self, session_id: str, result: StoredResult, quota: int = DEFAULT_RESULT_QUOTA) -> list[str]:
        stored = replace(result, created=result.created or self.clock())
        meta = {k: v for k, v in asdict(stored).items() if k not in ("text", "raw")}
        meta["meta"] = dict(stored.meta)
        record = json.dumps(meta, default=str)

        async def work(conn: psycopg.AsyncConnection[Any]) -> list[str]:
            # one writer of a session's results at a time: the order (seq) and the quota stay exact
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", (session_id,))
            await conn.execute("DELETE FROM pegboard_results WHERE ref = %s", (stored.ref,))
            await conn.execute(
                "INSERT INTO pegboard_results (session_id, ref, seq, size, tool, record, text, raw) "
                "SELECT %s, %s, COALESCE(MAX(seq), 0) + 1, %s, %s, %s::jsonb, %s, %s "
                "FROM pegboard_results WHERE session_id = %s",
                (session_id, stored.ref, stored.size, stored.tool, record, stored.text, stored.raw, session_id),
            )
            rows = await (await conn.execute(
                "SELECT ref, size FROM pegboard_results WHERE session_id = %s ORDER BY seq", (session_id,)
            )).fetchall()
            excess = sum(size for _, size in rows) - quota
            dropped: list[str] = []
            for ref, size in rows:
                if excess <= 0:
                    break
                if ref == stored.ref:
                    continue
                dropped.append(ref)
                excess -= size
            if dropped:
                await conn.execute(
                    "DELETE FROM pegboard_results WHERE session_id = %s AND ref = ANY(%s)", (session_id, dropped)
                )
            await self._touch(conn, session_id)
            return dropped

        return self._run(self._tx(work))

    def get_result(self, session_id: str, ref: str) -> StoredResult | None:
        rows = self._run(self._rows(
            "SELECT record, text, raw FROM pegboard_results WHERE session_id = %s AND ref = %s", (session_id, ref)
        ))
        return _result(*rows[0]) if rows else None

    def find_result(self, ref: str) -> tuple[str, StoredResult] | None:
        rows = self._run(self._rows(
            "SELECT session_id, record, text, raw FROM pegboard_results WHERE ref = %s", (ref,)
        ))
        return (rows[0][0], _result(*rows[0][1:])) if rows else None

    def results(self, session_id: str) -> list[StoredResult]:
        rows = self._run(self._rows(
            "SELECT record, text, raw FROM pegboard_results WHERE session_id = %s ORDER BY seq", (session_id,)
        ))
        return [_result(*r) for r in rows]


__all__ = ["DEFAULT_RESULT_QUOTA", "PostgresSessionStore", "describe_dsn"]
