"""``pegboard serve`` keeps its config current while clients stay connected.

One task per server process polls the config files of every scope (``pegboard.ConfigWatcher``)
every ``PEGBOARD_CONFIG_POLL`` seconds (default 1; ``0`` turns watching off). A change is in
force for the next call of every session; each client that listed or called tools hears
``notifications/tools/list_changed``. What the watcher reports is logged: the files applied
(``INFO``), widening changes with their file, new config warnings and files that do not load
(``WARNING``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pegboard import ConfigChange, ConfigWatcher, Pegboard

log = logging.getLogger("pegboard.mcp.serve")

POLL_ENV = "PEGBOARD_CONFIG_POLL"
DEFAULT_POLL = 1.0
#: a client that does not take a notification within this long is skipped this time
NOTIFY_TIMEOUT = 5.0

#: ``send()`` tells one client that its tool list changed
Notify = Callable[[], Awaitable[None]]


def poll_interval(env: Mapping[str, str]) -> float:
    """Seconds between polls from ``PEGBOARD_CONFIG_POLL``; a value that is not a number
    keeps the default (and says so), a negative one is ``0``, off."""
    raw = env.get(POLL_ENV, "").strip()
    if not raw:
        return DEFAULT_POLL
    try:
        value = float(raw)
    except ValueError:
        log.warning("%s=%r is not a number of seconds; polling config files every %g s", POLL_ENV, raw, DEFAULT_POLL)
        return DEFAULT_POLL
    return max(0.0, value) if value == value else DEFAULT_POLL


def log_change(change: ConfigChange) -> None:
    for problem in change.problems:
        log.warning("config: %s", problem)
    for notice in change.notices:
        log.warning("config: %s", notice)
    for widened in change.widened:
        log.warning("config change widens what the agent may do: %s", widened)
    if change.applied:
        log.info("config changed in %s: in force from the next call", ", ".join(str(p) for p in change.applied))


class ConfigReload:
    """The config watcher of one served ``Pegboard`` and the clients to tell of a change."""

    def __init__(self, pegboard: Pegboard, interval: float) -> None:
        self.pegboard = pegboard
        self.watcher = ConfigWatcher(pegboard, interval=interval)
        self.listeners: dict[Any, Notify] = {}
        self.task: asyncio.Task[None] | None = None

    @classmethod
    def for_pegboard(cls, pegboard: Pegboard) -> ConfigReload | None:
        """A reloader for ``pegboard``; ``None`` when watching is off or it has no config files."""
        interval = poll_interval(pegboard.env)
        if interval <= 0:
            return None
        reload = cls(pegboard, interval)
        return reload if reload.watcher.watching else None

    def start(self) -> None:
        """Start polling on the running loop, once (nothing without a running loop)."""
        if self.task is not None and not self.task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.task = loop.create_task(self._run())

    def listen(self, key: Any, notify: Notify | None) -> None:
        if notify is not None:
            self.listeners[key] = notify

    def forget(self, key: Any) -> None:
        self.listeners.pop(key, None)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.watcher.interval)
            try:
                await self.tick()
            except Exception:  # a watcher that fails must not end the server
                log.exception("checking the config files failed")

    async def tick(self) -> ConfigChange | None:
        """Poll once; log what was found; tell every client when a new config is in force."""
        before = self.pegboard.tool_set_version
        change = self.watcher.poll()
        if change is None:
            return None
        log_change(change)
        if self.pegboard.tool_set_version != before:
            await self.notify_all()
        return change

    async def notify_all(self) -> None:
        listeners = list(self.listeners.items())
        results = await asyncio.gather(
            *(asyncio.wait_for(notify(), NOTIFY_TIMEOUT) for _key, notify in listeners), return_exceptions=True
        )
        for (key, _notify), result in zip(listeners, results, strict=True):
            if isinstance(result, BaseException):  # the client is gone, or cannot take it now
                log.debug("tools/list_changed not sent: %s", result)
                if not isinstance(result, TimeoutError):
                    self.listeners.pop(key, None)


__all__ = ["POLL_ENV", "ConfigReload", "log_change", "poll_interval"]
