"""Time limits of calls: one timer per loop, expiry as a TimeoutError of the call that expired."""

from __future__ import annotations

import asyncio
from typing import Any

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


async def test_run_returns_a_coroutine_that_never_waits_without_starting_a_limit() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()

    async def quick() -> str:
        return "done"

    assert await deadlines.run(quick(), 0.01) == "done"
    assert loop not in deadlines._timers and deadlines._running == {}
    assert await deadlines.run(asyncio.sleep(0, "later"), 30) == "later"
    assert loop in deadlines._timers and deadlines._running == {}


async def test_run_times_out_a_coroutine_that_waits_past_its_limit() -> None:
    deadlines = Deadlines()

    async def slow() -> str:
        await asyncio.sleep(5)
        return "woke"

    with pytest.raises(TimeoutError):
        await deadlines.run(slow(), 0.01)
    assert deadlines._running == {}


async def test_run_hands_values_and_exceptions_through_every_wait() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()

    async def steps() -> list[Any]:
        seen: list[Any] = []
        for value in ("a", "b"):
            future = loop.create_future()
            loop.call_soon(future.set_result, value)
            seen.append(await future)
        failing = loop.create_future()
        loop.call_soon(failing.set_exception, KeyError("k"))
        try:
            await failing
        except KeyError as exc:
            seen.append(repr(exc))
        await asyncio.sleep(0)
        return seen

    assert await deadlines.run(steps(), 30) == ["a", "b", "KeyError('k')"]

    async def raises_at_once() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        await deadlines.run(raises_at_once(), 30)


async def test_run_keeps_a_cancellation_from_outside_a_cancellation() -> None:
    deadlines = Deadlines()
    caught: list[str] = []

    async def waits() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            caught.append("cancelled")
            raise

    task = asyncio.create_task(deadlines.run(waits(), 30))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert caught == ["cancelled"] and deadlines._running == {}


async def test_run_takes_any_awaitable() -> None:
    deadlines = Deadlines()
    future = asyncio.get_running_loop().create_future()
    future.set_result(7)
    assert await deadlines.run(future, 30) == 7
