"""A host for the cron tests: an inbox behind deliver_message, and a Pegboard on a manual clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pegboard_cron as cron
from pegboard import MessageDelivery, Pegboard, hookimpl
from pegboard.testing import isolated_pegboard

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC).timestamp()  # a Monday


class Inbox:
    """The host: keeps every delivered prompt; ``answer`` is what the hook returns."""

    def __init__(self, answer: Any = True) -> None:
        self.answer = answer
        self.received: list[MessageDelivery] = []
        self.arrived = asyncio.Event()

    @hookimpl
    def deliver_message(self, request: MessageDelivery) -> Any:
        self.received.append(request)
        self.arrived.set()
        return self.answer


def board(tmp_path: Path, *plugins: object, config: dict[str, Any] | None = None, store: Any = None,
          env: dict[str, str] | None = None, autostart: bool = False) -> tuple[Pegboard, cron.ManualClock]:
    """A Pegboard whose scheduler runs on a manual clock in UTC; the tests call ``tick`` unless
    ``autostart`` lets the scheduler's own task run."""
    pb = isolated_pegboard(cron, *plugins, cwd=tmp_path, config=config, store=store, env=env)
    clock = cron.ManualClock(START)
    found = cron.scheduler(pb)
    found.clock = clock
    found.tz = UTC
    found.autostart = autostart
    return pb, clock
