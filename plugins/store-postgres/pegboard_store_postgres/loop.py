"""One asyncio loop on a thread of its own, so synchronous store calls can use psycopg's async pool.

The ``SessionStore`` protocol is synchronous (a tool's ``ctx.session.state`` is a plain
mapping), while the pool, LISTEN/NOTIFY and timeouts are async. Every store call is handed
to this loop and waited for, from any thread, inside or outside another event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """A daemon thread running an event loop until :meth:`stop`."""

    def __init__(self, name: str = "pegboard-store-postgres") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its answer (``TimeoutError`` past ``timeout``)."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a store call was made from the store's own loop; await the async method instead")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the database did not answer within {timeout:g} s") from None

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()
