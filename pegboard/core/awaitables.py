"""Hooks may return values or awaitables; these helpers resolve either."""

from __future__ import annotations

import inspect
import threading
from typing import Any


async def resolve(value: Any) -> Any:
    """Await ``value`` if it is awaitable, else return it."""
    while inspect.isawaitable(value):
        value = await value
    return value


def resolve_sync(value: Any) -> Any:
    """Resolve ``value`` from synchronous code, even when an event loop is already running."""
    if not inspect.isawaitable(value):
        return value
    import asyncio  # not needed (nor imported) on the purely synchronous path

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(resolve(value))
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["value"] = asyncio.run(resolve(value))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=runner, name="pegboard-resolve")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
