"""``within``: deadlines on an injected clock's sleep, so nothing here waits for real time."""

from __future__ import annotations

import asyncio

import pytest

from pegboard_toolkit.deadline import within


async def instant(seconds: float) -> None:
    await asyncio.sleep(0)


async def never(seconds: float) -> None:
    await asyncio.Event().wait()


async def test_work_that_ends_first_wins() -> None:
    async def work() -> str:
        return "done"

    assert await within(work(), 5, never) == "done"
    assert await within(work(), None, instant) == "done"


async def test_the_clock_ending_first_cancels_the_work() -> None:
    cancelled: list[bool] = []

    async def work() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    with pytest.raises(TimeoutError):
        await within(work(), 3600, instant)
    assert cancelled == [True]


async def test_an_error_of_the_work_is_raised() -> None:
    async def work() -> str:
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        await within(work(), 5, never)


async def test_cancelling_the_caller_cancels_the_work() -> None:
    started = asyncio.Event()
    cancelled: list[bool] = []

    async def work() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    waiter = asyncio.ensure_future(within(work(), 5, never))
    await started.wait()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await asyncio.sleep(0)
    assert cancelled == [True]
