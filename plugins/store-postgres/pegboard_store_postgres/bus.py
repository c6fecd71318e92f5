"""Messages between processes sharing the database, and which processes are still there.

One connection per process LISTENs on the ``pegboard`` channel and holds a session-level
advisory lock for every name the process declares present (``hold_presence``). PostgreSQL
releases those locks when the connection ends, however the process died, so another
replica asks ``present(name)`` and gets the truth without heartbeats. Messages carry a
channel of their own inside the JSON payload (at most ~7,900 bytes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

log = logging.getLogger("pegboard.store.postgres")

PG_CHANNEL = "pegboard"
#: the first key of presence advisory locks (the second is ``hashtext(name)``)
PRESENCE_NAMESPACE = 0x70656762
MAX_PAYLOAD = 7900
RECONNECT_SECONDS = 1.0
POLL_SECONDS = 0.2


class Bus:
    """The listening connection of one process, run on the store's loop."""

    def __init__(self, dsn: str, loop: asyncio.AbstractEventLoop) -> None:
        self.dsn = dsn
        self.loop = loop
        self._callbacks: dict[str, list[Callable[[str], None]]] = {}
        self._presences: set[str] = set()
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stopping = False

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Callable[[], None]:
        with self._lock:
            self._callbacks.setdefault(channel, []).append(callback)

        def unsubscribe() -> None:
            with self._lock:
                found = self._callbacks.get(channel, [])
                if callback in found:
                    found.remove(callback)

        return unsubscribe

    def hold(self, name: str) -> None:
        with self._lock:
            self._presences.add(name)

    async def start(self, timeout: float) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def wait_held(self, name: str, timeout: float) -> None:
        """Until the listening connection holds ``name``'s presence lock."""
        deadline = self.loop.time() + timeout
        while name not in self._held:
            if self.loop.time() > deadline:
                raise TimeoutError(f"presence {name!r} was not taken within {timeout:g} s")
            await asyncio.sleep(0.02)

    async def _run(self) -> None:
        while not self._stopping:
            try:
                async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {PG_CHANNEL}")
                    self._held.clear()
                    self._ready.set()
                    while not self._stopping:
                        with self._lock:
                            wanted = self._presences - self._held
                        for name in wanted:
                            await conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (PRESENCE_NAMESPACE, name))
                            self._held.add(name)
                        async for note in conn.notifies(timeout=POLL_SECONDS):
                            self._dispatch(note.payload)
            except (psycopg.Error, OSError) as exc:
                self._held.clear()
                if not self._stopping:
                    log.warning("the store's listening connection failed (%s); reconnecting", exc)
                    await asyncio.sleep(RECONNECT_SECONDS)

    def _dispatch(self, payload: str) -> None:
        try:
            message: Any = json.loads(payload)
            channel, body = str(message["c"]), str(message["p"])
        except (ValueError, KeyError, TypeError):
            return
        with self._lock:
            callbacks = list(self._callbacks.get(channel, ()))
        for callback in callbacks:
            try:
                callback(body)
            except Exception:
                log.exception("a subscriber of %r failed", channel)

    async def stop(self) -> None:
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task


def envelope(channel: str, payload: str) -> str:
    """The NOTIFY payload for ``payload`` on ``channel``; ``ValueError`` past PostgreSQL's limit."""
    text = json.dumps({"c": channel, "p": payload}, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) > MAX_PAYLOAD:
        raise ValueError(f"a message on {channel!r} is {len(text)} bytes; at most {MAX_PAYLOAD} fit in a NOTIFY")
    return text
