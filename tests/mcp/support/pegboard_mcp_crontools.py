"""A host for the ``pegboard serve`` cron tests: delivered prompts are appended to a file, and the
scheduler's clock runs fast (``CRON_TEST_SPEED`` times real time, counted from ``CRON_TEST_EPOCH``)
so that minutes pass in milliseconds. Put on ``PYTHONPATH`` by the tests; nothing installs it."""

from __future__ import annotations

import asyncio
import json
import os
import time
from datetime import UTC

import pegboard_cron
from pegboard import MessageDelivery, Pegboard, hookimpl


class FastClock:
    def __init__(self, epoch: float, speed: float) -> None:
        self.epoch = epoch
        self.speed = speed

    def now(self) -> float:
        return self.epoch + (time.time() - self.epoch) * self.speed

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.speed)


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    found = pegboard_cron.scheduler(pegboard)
    found.clock = FastClock(float(os.environ["CRON_TEST_EPOCH"]), float(os.environ["CRON_TEST_SPEED"]))
    found.tz = UTC


@hookimpl
def deliver_message(request: MessageDelivery) -> bool:
    line = {"session": request.session_id, "text": request.text, "kind": request.kind,
            "late": request.metadata.get("late"), "job": request.metadata.get("job_id")}
    with open(os.environ["CRON_TEST_INBOX"], "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
    return True
