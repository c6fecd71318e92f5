"""Time limits of running calls, watched by one timer per event loop.

``asyncio.timeout`` schedules a timer for every call and cancels it when the call returns; the
cancelled timers stay in the loop's heap until the loop next runs, so a run of short calls
pays for a growing heap. Here starting and ending a limit are two dictionary operations, and a
loop has a timer only for its earliest deadline. Expiry works as with ``asyncio.timeout``: the
call's task is cancelled, and the cancellation it caused becomes a ``TimeoutError``.

:meth:`Deadlines.run` starts a limit only once the call first waits: a call that finishes
without waiting cannot be cancelled (cancellation lands at a wait), so it needs none; the
limit still counts from the start of the call.
"""

from __future__ import annotations

import asyncio
import types
import weakref
from collections.abc import Awaitable, Coroutine, Generator
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

    async def run(self, awaitable: Awaitable[Any], seconds: float) -> Any:
        """Await ``awaitable`` within ``seconds``; past them it is cancelled and this raises
        ``TimeoutError``. A coroutine is stepped here until it first waits: one that never
        does returns without a limit being started."""
        if type(awaitable) is not types.CoroutineType:
            return await self._limited(awaitable, seconds, None)
        loop = asyncio.get_running_loop()
        at = loop.time() + seconds
        try:
            waiting_on = awaitable.send(None)
        except StopIteration as done:
            return done.value
        return await self._limited(_resumed(awaitable, waiting_on), seconds, at)

    async def _limited(self, awaitable: Awaitable[Any], seconds: float, at: float | None) -> Any:
        limit = self.start(seconds, at=at)
        try:
            value = await awaitable
        except asyncio.CancelledError:
            if self.end(limit):
                raise TimeoutError from None
            raise
        except BaseException:
            self.end(limit)
            raise
        self.end(limit)
        return value

    def start(self, seconds: float, *, at: float | None = None) -> Limit:
        """A limit ``seconds`` from now (or at loop time ``at``) for the running task."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:  # pragma: no cover - a coroutine always runs in a task here
            raise RuntimeError("a time limit needs a running task")
        limit = Limit(loop, task, loop.time() + seconds if at is None else at)
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


@types.coroutine
def _resumed(coro: Coroutine[Any, Any, Any], waiting_on: Any) -> Generator[Any, Any, Any]:
    """Go on with a coroutine stepped once by hand: hand its task what it waits on, and every
    value or exception (a cancellation) the task sends back to it, as ``await`` would."""
    while True:
        try:
            sent = yield waiting_on
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                waiting_on = coro.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                waiting_on = coro.send(sent)
            except StopIteration as done:
                return done.value


__all__ = ["Deadlines", "Limit"]
