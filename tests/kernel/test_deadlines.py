"""Time limits of calls: one timer per loop, expiry as a TimeoutError of the call that expired."""

from __future__ import annotations

import asyncio

import pytest

from pegboard.core.deadlines import Deadlines


async def limited(deadlines: Deadlines, seconds: float, work: float) -> str:
    limit = deadlines.start(seconds)
    try:
        await asyncio.sleep(work)
    except asyncio.CancelledError:
        if deadlines.end(limit):
            return "timed out"
        raise
    deadlines.end(limit)
    return "finished"


async def test_a_call_past_its_limit_times_out_and_one_within_it_finishes() -> None:
    deadlines = Deadlines()
    assert await limited(deadlines, 0.01, 5) == "timed out"
    assert await limited(deadlines, 5, 0) == "finished"
    assert deadlines._running == {}


async def test_a_shorter_limit_started_later_still_fires_first() -> None:
    deadlines = Deadlines()
    long = asyncio.create_task(limited(deadlines, 30, 0.2))
    await asyncio.sleep(0)
    assert await limited(deadlines, 0.01, 5) == "timed out"
    assert await long == "finished"


async def test_an_outer_limit_expiring_is_not_the_inner_calls_timeout() -> None:
    deadlines = Deadlines()

    async def outer() -> str:
        limit = deadlines.start(0.01)
        try:
            return await limited(deadlines, 30, 5)
        except asyncio.CancelledError:
            return "outer timed out" if deadlines.end(limit) else "cancelled"

    assert await outer() == "outer timed out"


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    deadlines = Deadlines()
    task = asyncio.create_task(limited(deadlines, 30, 5))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert deadlines._running == {}


def test_limits_work_on_loops_that_come_and_go() -> None:
    deadlines = Deadlines()
    for _ in range(3):
        assert asyncio.run(limited(deadlines, 0.01, 5)) == "timed out"
        assert asyncio.run(limited(deadlines, 5, 0)) == "finished"
