"""The filtering HTTP/HTTPS proxy sandboxed commands reach the network through.

It listens on a unix socket (bound into the namespace, where a bridge turns it into a
loopback TCP port for ``HTTP_PROXY``/``HTTPS_PROXY``). ``CONNECT host:port`` tunnels and
plain ``http://`` requests in absolute form are let through only for the allowed domains,
and only to addresses the network guard accepts (private ones refused unless its
private-host allowance names them). Every connection goes to the address the guard checked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path

from pegboard_toolkit.netguard import GuardPolicy, HostLookupError, NetworkGuard, NetworkRefused, Resolver

MAX_HEAD = 64 * 1024
ALLOWED_SETTING = "sandbox.network.allowedDomains"
PRIVATE_SETTING = "sandbox.network.allowPrivateHosts"


def make_guard(
    allowed_domains: Sequence[str],
    allow_private_hosts: Sequence[str] = (),
    resolver: Resolver | None = None,
    denied_domains: Sequence[str] = (),
) -> NetworkGuard:
    """The guard of the proxy: only ``allowed_domains``, never ``denied_domains``, no private
    address unless ``allow_private_hosts`` names it."""
    policy = GuardPolicy(
        allow_private_hosts=tuple(allow_private_hosts),
        denied_domains=tuple(denied_domains),
        allowed_domains=tuple(allowed_domains),
        private_hosts_setting=PRIVATE_SETTING,
        allowed_domains_setting=ALLOWED_SETTING,
    )
    return NetworkGuard(policy, resolver)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


class FilteringProxy:
    """One proxy per sandboxed Pegboard instance; ``start`` it, hand ``path`` to the backend."""

    def __init__(self, path: Path, guard: NetworkGuard) -> None:
        self.path = path
        self.guard = guard
        self._server: asyncio.Server | None = None
        self.refusals: list[str] = []

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=MAX_HEAD)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        first, _, rest = head.partition(b"\r\n")
        parts = first.decode("latin-1").split()
        if len(parts) != 3:
            await self._reply(writer, 400, "not an HTTP request")
            return
        method, target, version = parts
        if method.upper() == "CONNECT":
            url, tunnel = f"https://{target}/", True
        elif target.lower().startswith("http://"):
            url, tunnel = target, False
        else:
            await self._reply(writer, 400, "the proxy takes CONNECT or absolute http:// requests")
            return
        try:
            checked = await self.guard.acheck_url(url)
            sock = await asyncio.to_thread(self.guard.connect, checked, 10.0)
        except NetworkRefused as exc:
            why = str(exc)
            if exc.setting == ALLOWED_SETTING:
                why = (f"refused host {exc.host}: sandboxed commands may reach only the hosts in "
                       f"{ALLOWED_SETTING}; add it there to allow it")
            self.refusals.append(why)
            await self._reply(writer, 403, why)
            return
        except (HostLookupError, ValueError, OSError) as exc:
            self.refusals.append(str(exc))
            await self._reply(writer, 502, str(exc))
            return
        up_reader, up_writer = await asyncio.open_connection(sock=sock)
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
        else:
            path = checked.url.href.split(checked.host, 1)[-1]
            path = path[path.index("/"):] if "/" in path else "/"
            up_writer.write(f"{method} {path} {version}\r\n".encode("latin-1") + rest)
            await up_writer.drain()
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, status: int, why: str) -> None:
        body = (why + "\n").encode()
        reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}.get(status, "Error")
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n".encode() + body
        )
        with contextlib.suppress(Exception):
            await writer.drain()
            writer.close()
