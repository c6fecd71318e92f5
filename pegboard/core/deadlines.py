"""Time limits of running calls, watched by one timer per event loop.

``asyncio.timeout`` schedules a timer for every call and cancels it when the call returns; the
cancelled timers stay in the loop's heap until the loop next runs, so a run of short calls
pays for a growing heap. Here starting and ending a limit are two dictionary operations, and a
loop has a timer only for its earliest deadline. Expiry works as with ``asyncio.timeout``: the
call's task is cancelled, and the cancellation it caused becomes a ``TimeoutError``.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any


class Limit:
    """One call's deadline (loop time) in ``task``."""

    __slots__ = ("at", "cancelling", "expired", "loop", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any], at: float) -> None:
        self.loop = loop
        self.task = task
        self.at = at
        self.cancelling = task.cancelling()
        self.expired = False


class Deadlines:
    """The limits of every running call; :meth:`start` before the call, :meth:`end` after it."""

    def __init__(self) -> None:
        self._running: dict[int, Limit] = {}
        #: per loop: when its timer fires, and the timer (weakly: the loop's heap keeps it)
        self._timers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[float, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def start(self, seconds: float) -> Limit:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:  # pragma: no cover - a coroutine always runs in a task here
            raise RuntimeError("a time limit needs a running task")
        limit = Limit(loop, task, loop.time() + seconds)
        self._running[id(limit)] = limit
        timer = self._timers.get(loop)
        if timer is None or timer[0] > limit.at or timer[1]() is None:
            self._schedule(loop, limit.at)
        return limit

    def end(self, limit: Limit) -> bool:
        """Forget ``limit``; ``True`` when it expired and the cancellation it caused is the
        only one pending (the caller then raises ``TimeoutError`` instead)."""
        del self._running[id(limit)]
        return limit.expired and limit.task.uncancel() <= limit.cancelling

    def _schedule(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        old = self._timers.get(loop)
        if old is not None and (handle := old[1]()) is not None:
            handle.cancel()
        handle = loop.call_at(at, self._fire, loop)
        self._timers[loop] = (at, weakref.ref(handle))

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timers.pop(loop, None)
        now = loop.time()
        later = None
        for limit in list(self._running.values()):
            if limit.loop is not loop or limit.expired:
                continue
            if limit.at <= now:
                limit.expired = True
                limit.task.cancel()
            elif later is None or limit.at < later:
                later = limit.at
        if later is not None:
            self._schedule(loop, later)


__all__ = ["Deadlines", "Limit"]
