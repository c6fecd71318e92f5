"""Throttled progress of one tool call, through the public ``ToolContext.progress``.

A tool calls :meth:`Progress.update` as often as it likes; a report goes out at most once
per interval (and never for a call that ends before the first interval passed), so a
client hears about a long command without a notification per output line. The MCP server
relays the reports as ``notifications/progress`` to a client that gave a ``progressToken``;
``pegboard call`` shows the latest one on a terminal.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pegboard import ToolContext

#: Milliseconds between two reports of one call, unless a setting says otherwise.
DEFAULT_INTERVAL_MS = 1000


class Progress:
    """The progress reporter of one call; ``interval_ms`` 0 turns it off."""

    def __init__(self, ctx: ToolContext, interval_ms: int = DEFAULT_INTERVAL_MS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ctx = ctx
        self.interval = max(0, interval_ms) / 1000
        self.clock = clock
        self.started = clock()
        self.last = self.started
        self.sent = 0

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    def update(self, done: float, total: float | None = None, message: str | None = None) -> bool:
        """Report ``done`` (of ``total``) if an interval passed since the last report; says whether it did."""
        if not self.interval:
            return False
        now = self.clock()
        if now - self.last < self.interval:
            return False
        self.last = now
        self.sent += 1
        self.ctx.progress(done, total, message)
        return True


__all__ = ["DEFAULT_INTERVAL_MS", "Progress"]
