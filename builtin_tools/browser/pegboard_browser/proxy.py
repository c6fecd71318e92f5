"""The guard proxy: every connection Chromium opens goes through it, on 127.0.0.1.

Chromium is started with ``--proxy-server`` pointing here and ``--proxy-bypass-list=<-loopback>``,
so loopback traffic is proxied too. For each ``CONNECT host:port`` (HTTPS, WebSockets) and
each plain ``http://`` request the proxy asks ``refuse(host)`` (the Browser deny rules), then
resolves the host with the network guard, which refuses private, link-local and metadata
addresses unless the private-host setting names them, and connects to the address it
checked: a second DNS answer never gets a say. Plain requests are sent with
``Connection: close``, so one client connection never carries a second host's request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pegboard_toolkit.netguard import CheckedUrl, NetworkGuard

MAX_HEAD = 64 * 1024
#: Marks the proxy's own refusal page, so a navigation that ends on it is reported as blocked.
REFUSED_HEADER = "X-Pegboard-Refused"
HOP_HEADERS = frozenset({"proxy-connection", "connection", "keep-alive", "proxy-authorization", "te", "trailer",
                         "upgrade"})


@dataclass(frozen=True)
class Blocked:
    """One connection the proxy refused: what was asked for and why (shown by ``console``)."""

    target: str
    reason: str


class GuardProxy:
    """An asyncio HTTP proxy on 127.0.0.1 that lets through only what the guard checked."""

    def __init__(self, guard: NetworkGuard, refuse: Callable[[str], str | None],
                 on_block: Callable[[Blocked], None], connect_timeout: float = 10.0) -> None:
        self.guard = guard
        self.refuse = refuse
        self.on_block = on_block
        self.connect_timeout = connect_timeout
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.last_reason = ""

    @property
    def port(self) -> int:
        assert self._server is not None, "the proxy is not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:  # the proxy closes: the connection ends here, quietly
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD:
            return await _answer(writer, 431, "request head too large")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return await _answer(writer, 400, "malformed request line")
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, _, port = target.rpartition(":")
            url = f"https://{host}:{port}/" if port.isdigit() else ""
            shown = target
        else:
            url, shown = target, target
        checked = await self._check(url, shown)
        if checked is None:
            return await _answer(writer, 403, f"refused by Pegboard's browser guard: {self.last_reason}")
        try:
            upstream_r, upstream_w = await self._connect(checked)
        except OSError as exc:
            return await _answer(writer, 502, f"cannot connect to {shown}: {exc}")
        try:
            if method.upper() == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
            else:
                upstream_w.write(_origin_request(method, checked, version, lines[1:]))
                await upstream_w.drain()
            await _pipe_both(reader, writer, upstream_r, upstream_w)
        finally:
            with contextlib.suppress(Exception):
                upstream_w.close()

    async def _check(self, url: str, shown: str) -> CheckedUrl | None:
        from pegboard import InvalidUrlError
        from pegboard_toolkit.netguard import HostLookupError, NetworkRefused

        if not url:
            self.on_block(Blocked(shown, "not a host:port target"))
            return None
        try:
            checked = await self.guard.acheck_url(url)
        except (NetworkRefused, InvalidUrlError, HostLookupError, ValueError) as exc:
            self._block(shown, str(exc))
            return None
        reason = self.refuse(checked.host)
        if reason is not None:
            self._block(shown, reason)
            return None
        return checked

    def _block(self, shown: str, reason: str) -> None:
        self.last_reason = f"{shown}: {reason}"
        self.on_block(Blocked(shown, reason))

    async def _connect(self, checked: CheckedUrl) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        error: OSError | None = None
        for ip in checked.addresses:
            try:
                return await asyncio.wait_for(asyncio.open_connection(str(ip), checked.port), self.connect_timeout)
            except (OSError, TimeoutError) as exc:
                error = exc if isinstance(exc, OSError) else OSError(f"timed out connecting to {ip}")
        raise error or OSError(f"no address for {checked.host}")


def _origin_request(method: str, checked: CheckedUrl, version: str, header_lines: list[str]) -> bytes:
    """A proxy request (absolute URL) as the origin server expects it, closed after one answer."""
    parsed = checked.url
    path = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
    kept = [h for h in header_lines if h and h.split(":", 1)[0].strip().lower() not in HOP_HEADERS]
    out = [f"{method} {path} {version}", *kept, "Connection: close", "", ""]
    return "\r\n".join(out).encode("latin-1")


async def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = text.encode()
    flag = f"{REFUSED_HEADER}: 1\r\n" if status == 403 else ""
    writer.write(f"HTTP/1.1 {status} Refused\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 f"Content-Length: {len(body)}\r\n{flag}Connection: close\r\n\r\n".encode() + body)
    with contextlib.suppress(Exception):
        await writer.drain()


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    finally:
        with contextlib.suppress(Exception):
            if dst.can_write_eof():
                dst.write_eof()


async def _pipe_both(cr: asyncio.StreamReader, cw: asyncio.StreamWriter,
                     ur: asyncio.StreamReader, uw: asyncio.StreamWriter) -> None:
    up = asyncio.ensure_future(_pipe(cr, uw))
    down = asyncio.ensure_future(_pipe(ur, cw))
    try:
        await asyncio.wait({up, down}, return_when=asyncio.ALL_COMPLETED)
    finally:
        for t in (up, down):
            t.cancel()
            with contextlib.suppress(BaseException):
                await t


__all__ = ["Blocked", "GuardProxy"]
