"""A time-limited, size-bounded LRU cache for web results, with concurrent fetches coalesced.

The web tools keep fetched pages and search answers for 15 minutes, so a model that asks
twice gets the answer at once and the site sees one request. Entries are bounded by count
and by total size (least recently used go first). Callers asking for a key that is being
fetched at that moment wait for that fetch instead of starting their own. The clock is
injectable, so expiry is tested without sleeping.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import asyncio

V = TypeVar("V")

DEFAULT_TTL_SECONDS = 15 * 60


@dataclass
class _Entry(Generic[V]):
    value: V
    expires: float
    size: int


class WebCache(Generic[V]):
    """``await cache.get_or_fetch(key, fetch)``: the cached value, or one fetch shared by all waiters.

    ``size_of(value)`` measures an entry (characters, bytes); ``max_size`` bounds their sum.
    A fetch that raises is not cached, and every waiter sees its exception.
    """

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL_SECONDS,
        max_entries: int = 256,
        max_size: int = 64 * 1024 * 1024,
        size_of: Callable[[V], int] = lambda _v: 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl <= 0 or max_entries <= 0 or max_size <= 0:
            raise ValueError("WebCache needs a positive ttl, max_entries and max_size")
        self.ttl = ttl
        self.max_entries = max_entries
        self.max_size = max_size
        self.size_of = size_of
        self.clock = clock
        self._entries: OrderedDict[Hashable, _Entry[V]] = OrderedDict()
        self._size = 0
        self._inflight: dict[Hashable, tuple[asyncio.AbstractEventLoop, asyncio.Future[V]]] = {}
        self.fetches = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        return self._size

    def get(self, key: Hashable) -> V | None:
        """The live value for ``key`` (marked recently used), or ``None``."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires <= self.clock():
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry.value

    def put(self, key: Hashable, value: V) -> None:
        size = self.size_of(value)
        self._drop(key)
        if size > self.max_size:
            return
        self._entries[key] = _Entry(value, self.clock() + self.ttl, size)
        self._size += size
        while len(self._entries) > self.max_entries or self._size > self.max_size:
            oldest = next(iter(self._entries))
            self._drop(oldest)

    def _drop(self, key: Hashable) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._size -= entry.size

    def clear(self) -> None:
        self._entries.clear()
        self._size = 0

    async def get_or_fetch(self, key: Hashable, fetch: Callable[[], Awaitable[V]]) -> tuple[V, bool]:
        """``(value, from_cache)``. Concurrent callers of one key on one event loop share one fetch."""
        cached = self.get(key)
        if cached is not None:
            return cached, True
        import asyncio

        loop = asyncio.get_running_loop()
        running = self._inflight.get(key)
        if running is not None and running[0] is loop:
            return await asyncio.shield(running[1]), True
        future: asyncio.Future[V] = loop.create_future()
        self._inflight[key] = (loop, future)
        try:
            self.fetches += 1
            value = await fetch()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
            future.exception()  # retrieved here, so an unawaited failure is not logged
            raise
        else:
            self.put(key, value)
            if not future.done():
                future.set_result(value)
            return value, False
        finally:
            if self._inflight.get(key, (None, None))[1] is future:
                del self._inflight[key]
