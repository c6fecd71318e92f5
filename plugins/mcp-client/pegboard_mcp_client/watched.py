"""A transport that notices the server's stream end, through the SDK's public protocols.

The ``mcp`` SDK has no public "closed" state on ``Client`` or ``ClientSession``; the end of
the server's stream is seen only by whoever reads it. So the read stream is wrapped: the
SDK reads through :class:`WatchedReadStream`, which records the end as it passes, and the
supervisor asks :attr:`WatchedTransport.ended` instead of reaching into the SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

#: What ends a stream: anyio's end-of-stream and closed-resource errors, by name, so this
#: module need not import anyio before a server is started.
_END_ERRORS = frozenset({"EndOfStream", "ClosedResourceError", "BrokenResourceError", "StopAsyncIteration"})


class WatchedReadStream:
    """A read stream (the SDK's ``ReadStream`` protocol) that records when it ended."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.ended = False

    async def receive(self) -> Any:
        return await self._watched(self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        return await self._watched(self._inner.__anext__())

    async def _watched(self, step: Awaitable[Any]) -> Any:
        try:
            return await step
        except BaseException as exc:
            if type(exc).__name__ in _END_ERRORS:
                self.ended = True
            raise

    async def __aenter__(self) -> WatchedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc, tb)
        return result

    def __getattr__(self, name: str) -> Any:  # ``last_context`` and whatever a later SDK reads
        return getattr(self._inner, name)


class WatchedTransport:
    """Wraps an SDK transport (``stdio_client(...)``, ``streamable_http_client(...)``): the same
    streams, with the read side watched. ``ended`` is true once the server's stream ended."""

    def __init__(self, inner: AbstractAsyncContextManager[Any]) -> None:
        self._inner = inner
        self._read: WatchedReadStream | None = None
        self._left = False

    @property
    def ended(self) -> bool:
        """Whether the server's stream has ended (or the transport was left)."""
        return self._left or (self._read is not None and self._read.ended)

    async def __aenter__(self) -> tuple[WatchedReadStream, Any]:
        read, write = await self._inner.__aenter__()
        self._read = WatchedReadStream(read)
        return self._read, write

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self._left = True
        return await self._inner.__aexit__(exc_type, exc, tb)


__all__ = ["WatchedReadStream", "WatchedTransport"]
