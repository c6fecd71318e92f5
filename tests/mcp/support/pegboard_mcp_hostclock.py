"""A served Pegboard whose AskUserQuestion idle clock passes a whole timeout at the first wait."""

from __future__ import annotations

import asyncio
from typing import Any

from pegboard import hookimpl


class LeapingClock:
    """Time moves only when the tool waits: each wait yields to the loop (so the question is
    sent to the client first), then jumps by the whole wait."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        for _ in range(20):
            await asyncio.sleep(0)
        self.t += seconds


@hookimpl
def pegboard_ready(pegboard: Any) -> None:
    from pegboard_ask_user import CLOCK

    pegboard.stash[CLOCK] = LeapingClock()
