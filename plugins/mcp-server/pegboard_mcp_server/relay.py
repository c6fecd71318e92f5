"""Progress and log events of running calls, relayed to the MCP client that made each call.

An ``on_event`` hook sees each event where it is emitted, so a call pays one dict entry for
its senders and nothing more unless its tool reports something: no ``events()`` reader, no
queue and no task per call. The notifications of one call go out in the order its tool
emitted them, every one of them before the call's result.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from pegboard import Session, SessionEvent, event_kinds, hookimpl

log = logging.getLogger("pegboard.mcp.serve")

#: ``progress(done, total, message)``: send an MCP progress notification for the running call.
Progress = Callable[[float, "float | None", "str | None"], Awaitable[None]]
#: ``log_message(level, data, logger)``: send an MCP ``notifications/message`` for the running call.
LogSender = Callable[[str, Any, "str | None"], Awaitable[None]]
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
RELAYED_KINDS = frozenset({"progress", "log"})
FLUSH_TIMEOUT = 5.0


def log_fields(data: Any) -> tuple[str, Any, str | None]:
    """A ``log`` event's data as (level, data, logger): a dict may name ``level`` and
    ``logger``; anything else is an ``info`` message."""
    if isinstance(data, dict):
        level = str(data.get("level", "info")).lower()
        level = level if level in LOG_LEVELS else "info"
        body = data.get("message", data.get("data", data))
        logger = data.get("logger")
        return level, body, str(logger) if logger is not None else None
    return "info", data, None


class _Relayed:
    """One running call's senders and the events waiting for them, sent in order by one task."""

    def __init__(self, progress: Progress | None, log_message: LogSender | None) -> None:
        self.progress = progress
        self.log_message = log_message
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.waiting: deque[SessionEvent] = deque()
        self.sender: asyncio.Task[None] | None = None
        self.open = True

    def queue(self, event: SessionEvent) -> None:
        if not self.open:
            return
        self.waiting.append(event)
        if self.sender is None or self.sender.done():
            self.sender = self.loop.create_task(self._send())

    async def _send(self) -> None:
        while self.waiting:
            event = self.waiting.popleft()
            try:
                if event.kind == "progress" and self.progress is not None and isinstance(event.data, dict):
                    done = float(event.data.get("done") or 0)
                    await self.progress(done, event.data.get("total"), event.data.get("message"))
                elif event.kind == "log" and self.log_message is not None:
                    await self.log_message(*log_fields(event.data))
            except Exception as exc:
                log.debug("notification failed: %s", exc)

    async def close(self) -> None:
        """Stop taking events; wait (a bounded time) until those taken are sent."""
        self.open = False
        sender = self.sender
        if sender is not None and not sender.done():
            await asyncio.wait([sender], timeout=FLUSH_TIMEOUT)


class _Senders:
    """A running call's senders, until its tool first reports something."""

    __slots__ = ("log_message", "loop", "progress", "thread")

    def __init__(
        self, progress: Progress | None, log_message: LogSender | None, loop: asyncio.AbstractEventLoop, thread: int
    ) -> None:
        self.progress = progress
        self.log_message = log_message
        self.loop = loop
        self.thread = thread


class EventRelay:
    """The plugin that hands each call's ``progress`` and ``log`` events to that call's senders.

    A call registers its senders only; the queue and the task that sends in order are made
    when its tool first reports something, so a call that reports nothing costs a dict entry.
    """

    def __init__(self) -> None:
        self._calls: dict[tuple[str, str], _Senders | _Relayed] = {}

    @hookimpl
    @event_kinds(*RELAYED_KINDS)
    def on_event(self, event: SessionEvent, session: Session) -> None:
        if event.tool_use_id is None:
            return
        key = (session.id, event.tool_use_id)
        entry = self._calls.get(key)
        if entry is None:
            return
        if threading.get_ident() == entry.thread:
            self._deliver(key, event)
        else:  # a tool's worker thread: the loop takes it before it sees the tool finish
            entry.loop.call_soon_threadsafe(self._deliver, key, event)

    def _deliver(self, key: tuple[str, str], event: SessionEvent) -> None:
        """On the call's loop: queue ``event`` for sending, starting the call's sender."""
        entry = self._calls.get(key)
        if entry is None:
            return
        if isinstance(entry, _Senders):
            entry = self._calls[key] = _Relayed(entry.progress, entry.log_message)
        entry.queue(event)

    async def call(
        self,
        session: Session,
        name: str,
        arguments: Any,
        tool_use_id: str,
        progress: Progress | None,
        log_message: LogSender | None,
    ) -> Any:
        """``session.call`` with its events relayed, each sent before this returns."""
        key = (session.id, tool_use_id)
        if key in self._calls:  # the same id twice at once: its events would be ambiguous
            return await session.call(name, arguments, tool_use_id=tool_use_id)
        self._calls[key] = _Senders(progress, log_message, asyncio.get_running_loop(), threading.get_ident())
        try:
            return await session.call(name, arguments, tool_use_id=tool_use_id)
        finally:
            relayed = self._calls.pop(key)
            if isinstance(relayed, _Relayed):
                await relayed.close()
