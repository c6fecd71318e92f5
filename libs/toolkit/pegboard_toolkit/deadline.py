"""Deadlines on an injectable clock: a wait ends when the work does or when ``sleep`` returns.

``asyncio.wait_for`` times out on the event loop's clock, which a test cannot move; tools that
wait for a host (a reply, a background run) take the ``sleep`` of a ``pegboard.Clock`` instead,
so their tests run in milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def within(work: Awaitable[T], seconds: float | None, sleep: Callable[[float], Awaitable[None]]) -> T:
    """``work``'s result, or ``TimeoutError`` once ``sleep(seconds)`` returns first (``work`` is
    then cancelled and awaited). ``seconds`` of ``None`` waits for ever; cancelling the caller
    cancels ``work`` too."""
    job = asyncio.ensure_future(work)
    if seconds is None:
        return await job
    timer = asyncio.ensure_future(sleep(seconds))
    try:
        await asyncio.wait({job, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        job.cancel()
        raise
    finally:
        timer.cancel()
    if not job.done():
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await job
        raise TimeoutError
    return job.result()


__all__ = ["within"]
