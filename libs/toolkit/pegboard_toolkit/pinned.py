"""httpx transports pinned to the addresses a ``NetworkGuard`` checked (kept apart: httpx is heavy)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from pegboard_toolkit.netguard import CheckedUrl, IPAddress, NetworkGuard

_MAX_POOLS = 32


def _pinned_request(request: httpx.Request, checked: CheckedUrl, ip: IPAddress) -> httpx.Request:
    """``request`` sent to ``ip``: the Host header and TLS name stay those of the URL's host."""
    extensions = dict(request.extensions)
    if checked.url.ip is None:
        extensions["sni_hostname"] = checked.host
    return httpx.Request(
        request.method,
        request.url.copy_with(host=ip.compressed),
        headers=request.headers,
        stream=request.stream,
        extensions=extensions,
    )


class PinnedTransport(httpx.AsyncBaseTransport):
    """Checks each request's URL with the guard and connects to the address it checked.

    One connection pool per host name, so a TLS connection verified for one name is never
    reused for another name that happens to share its address. Options go to
    ``httpx.AsyncHTTPTransport`` (``verify``, ``retries``, ...).
    """

    def __init__(self, guard: NetworkGuard, **options: object) -> None:
        self.guard = guard
        self._options = options
        self._pools: OrderedDict[str, httpx.AsyncHTTPTransport] = OrderedDict()

    async def _pool(self, host: str) -> httpx.AsyncHTTPTransport:
        pool = self._pools.pop(host, None)
        if pool is None:
            pool = httpx.AsyncHTTPTransport(**self._options)  # type: ignore[arg-type]
        self._pools[host] = pool
        while len(self._pools) > _MAX_POOLS:
            _, old = self._pools.popitem(last=False)
            await old.aclose()
        return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        checked = await self.guard.acheck_url(str(request.url))
        pool = await self._pool(checked.host)
        error: httpx.ConnectError | None = None
        for ip in checked.addresses:
            try:
                return await pool.handle_async_request(_pinned_request(request, checked, ip))
            except httpx.ConnectError as exc:
                error = exc
        assert error is not None
        raise error

    async def aclose(self) -> None:
        while self._pools:
            await self._pools.popitem()[1].aclose()


class SyncPinnedTransport(httpx.BaseTransport):
    """``PinnedTransport`` for ``httpx.Client``."""

    def __init__(self, guard: NetworkGuard, **options: object) -> None:
        self.guard = guard
        self._options = options
        self._pools: OrderedDict[str, httpx.HTTPTransport] = OrderedDict()

    def _pool(self, host: str) -> httpx.HTTPTransport:
        pool = self._pools.pop(host, None)
        if pool is None:
            pool = httpx.HTTPTransport(**self._options)  # type: ignore[arg-type]
        self._pools[host] = pool
        while len(self._pools) > _MAX_POOLS:
            self._pools.popitem(last=False)[1].close()
        return pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        checked = self.guard.check_url(str(request.url))
        pool = self._pool(checked.host)
        error: httpx.ConnectError | None = None
        for ip in checked.addresses:
            try:
                return pool.handle_request(_pinned_request(request, checked, ip))
            except httpx.ConnectError as exc:
                error = exc
        assert error is not None
        raise error

    def close(self) -> None:
        while self._pools:
            self._pools.popitem()[1].close()
