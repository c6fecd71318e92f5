"""Who may talk to ``pegboard serve --http``: Host, Origin, bearer token and body size.

A web page the user visits can make their browser send requests to any address, including
one on the user's own machine; with DNS rebinding the page's own name even resolves there.
So every request, whatever address the server is bound to, must name this server in its
``Host`` header, and a request from a browser (one with an ``Origin`` header) must come
from a page of this server or of an origin the user listed. A server reachable from other
machines also needs a bearer token. All of this runs before the MCP SDK sees a byte.

Refusals are JSON-RPC error bodies that name what was refused and the option that would
allow it: 421 (Misdirected Request) for the Host, 403 for the Origin, 401 (with
``WWW-Authenticate: Bearer``) for a missing or wrong token, 413 for a body over the cap.
A JSON-RPC batch gets 400 here too: the SDK's transport takes one message per request.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pegboard_mcp_server.limits import DEFAULT_MAX_BODY, too_large_message

log = logging.getLogger("pegboard.mcp.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Set in a request's scope when the server, not the client, cut its body short: why.
CLOSED_KEY = "pegboard.closed"
TRANSPORT_REFUSED = -32000
UNAUTHORIZED = -32001
INVALID_REQUEST = -32600
DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
MAX_SHOWN = 200


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (``localhost`` or a loopback IP)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_form(host: str) -> str:
    """How ``host`` appears in a Host header: IPv6 addresses in brackets, lower case."""
    name = host.strip("[]").lower()
    return f"[{name}]" if ":" in name else name


def split_authority(value: str) -> tuple[str, int | None]:
    """``name[:port]`` (or ``[v6][:port]``) as (lower-case name in Host form, port or None).

    Raises ``ValueError`` for anything that is not a host with an optional numeric port.
    """
    text = value.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError(f"unclosed '[' in {value!r}")
        name, rest = text[: end + 1], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError(f"unexpected text after ']' in {value!r}")
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text_raw = text.rpartition(":")
        if not sep:
            name, port_text = text, None
        else:
            port_text = port_text_raw
    if not name or any(c in name for c in "/@?#\\ \t") or (not name.startswith("[") and ":" in name):
        raise ValueError(f"not a host name: {value!r}")
    if port_text is None:
        return name, None
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"not a port: {port_text!r} in {value!r}")
    return name, int(port_text)


def parse_origin(value: str) -> tuple[str, str, int]:
    """An ``Origin`` (``scheme://host[:port]``) as (scheme, host, port) with the scheme's default port.

    Raises ``ValueError`` for anything else, including ``null`` and origins with a path.
    """
    text = value.strip().lower()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in DEFAULT_PORTS:
        raise ValueError(f"not an http(s) origin: {value!r}")
    rest = rest.removesuffix("/")
    name, port = split_authority(rest)
    return scheme, name, DEFAULT_PORTS[scheme] if port is None else port


def _shown(value: str) -> str:
    return value if len(value) <= MAX_SHOWN else value[:MAX_SHOWN] + "..."


@dataclass(frozen=True)
class Refusal:
    """An HTTP answer to a request that may not go on."""

    status: int
    code: int
    message: str
    refused: str
    value: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    limit: int | None = None

    def body(self) -> bytes:
        data: dict[str, Any] = {"refused": self.refused}
        if self.value is not None:
            data["value"] = self.value
        if self.limit is not None:
            data["limit"] = self.limit
        error = {"code": self.code, "message": self.message, "data": data}
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode("utf-8")


@dataclass(frozen=True)
class Access:
    """The rules one HTTP server applies to every request."""

    bind: str
    port: int
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    token: str | None = field(default=None, repr=False)
    max_body: int = DEFAULT_MAX_BODY

    def __post_init__(self) -> None:
        for value in self.allow_hosts:
            split_authority(value)
        for value in self.allow_origins:
            parse_origin(value)

    @property
    def loopback(self) -> bool:
        return is_loopback(self.bind)

    @cached_property
    def host_entries(self) -> frozenset[tuple[str, int | None]]:
        """Allowed (name, port) pairs; port None: any port, or none."""
        names = [host_form(self.bind)]
        if self.loopback:
            names += LOOPBACK_NAMES
        entries: set[tuple[str, int | None]] = {(name, self.port) for name in names}
        entries.update(split_authority(value) for value in self.allow_hosts)
        return frozenset(entries)

    def host_allowed(self, host: str | None) -> bool:
        if not host:
            return False
        try:
            name, port = split_authority(host)
        except ValueError:
            return False
        entries = self.host_entries
        return (name, DEFAULT_PORTS["http"] if port is None else port) in entries or (name, None) in entries

    def origin_allowed(self, origin: str | None) -> bool:
        """No Origin (not a browser) is fine; else a page of an allowed host on the served port, or a listed one."""
        if origin is None:
            return True
        try:
            parsed = parse_origin(origin)
        except ValueError:
            return False
        if parsed in self._origins:
            return True
        _scheme, name, port = parsed
        if port != self.port:
            return False
        return any(entry_name == name for entry_name, _ in self.host_entries)

    def token_ok(self, authorization: str | None) -> bool:
        """Without a token every request passes; with one, ``Bearer <token>`` (compared in constant time)."""
        if self.token is None:
            return True
        if not authorization:
            return False
        scheme, _, credentials = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(credentials.strip().encode("utf-8"), self.token.encode("utf-8"))

    def check_headers(self, headers: dict[str, str]) -> Refusal | None:
        """The first rule a request's headers break, or None."""
        host = headers.get("host")
        if not self.host_allowed(host):
            shown = _shown(host or "")
            try:
                name = split_authority(host or "")[0]
            except ValueError:
                name = "NAME"
            return Refusal(
                421,
                TRANSPORT_REFUSED,
                f"Host header {shown!r} is not allowed (DNS-rebinding protection); this server answers to "
                f"{', '.join(sorted(self._host_names()))}. Start pegboard serve with --allow-host "
                f"{name} to accept it.",
                "host",
                shown,
            )
        origin = headers.get("origin")
        if not self.origin_allowed(origin):
            shown = _shown(origin or "")
            return Refusal(
                403,
                TRANSPORT_REFUSED,
                f"Origin {shown!r} is not allowed (DNS-rebinding protection): only pages of this server on port "
                f"{self.port} may call it. Start pegboard serve with --allow-origin {shown} to accept it.",
                "origin",
                shown,
            )
        if not self.token_ok(headers.get("authorization")):
            given = "authorization" in headers
            return Refusal(
                401,
                UNAUTHORIZED,
                ("The bearer token is wrong" if given else "This server needs an Authorization: Bearer <token> header")
                + "; the token is the value of the environment variable named by pegboard serve's --token-env.",
                "authorization",
                None,
                (("www-authenticate", 'Bearer error="invalid_token"' if given else "Bearer"),),
            )
        return None

    @cached_property
    def _origins(self) -> frozenset[tuple[str, str, int]]:
        return frozenset(parse_origin(value) for value in self.allow_origins)

    def too_large(self, size: int | None) -> Refusal:
        return Refusal(413, INVALID_REQUEST, too_large_message(self.max_body, size), "body", limit=self.max_body)

    def _host_names(self) -> set[str]:
        return {name if port is None else f"{name}:{port}" for name, port in self.host_entries}


async def send_refusal(refusal: Refusal, send: Send) -> None:
    body = refusal.body()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((k.encode(), v.encode()) for k, v in refusal.headers),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _headers(scope: Scope) -> dict[str, str]:
    """Request headers by lower-case name; the first of repeated headers counts."""
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        out.setdefault(name, raw_value.decode("latin-1"))
    return out


NO_HTTP_BATCHES = Refusal(
    400,
    INVALID_REQUEST,
    "Invalid request: JSON-RPC batches are not accepted over HTTP; send one message per request.",
    "batch",
)


@dataclass
class Guard:
    """ASGI middleware applying an ``Access`` to every HTTP request before ``app`` sees it."""

    app: ASGIApp
    access: Access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self.access.check_headers(headers)
        if refusal is not None:
            log.warning("refused %s %s: %s", scope.get("method", ""), scope.get("path", ""), refusal.refused)
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await send_refusal(refusal, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > self.access.max_body:
            await send_refusal(self.access.too_large(int(declared)), send)
            return
        read = await self._read_body(scope, receive, send)
        if read is None:
            return
        body, replay = read
        if scope.get("method") == "POST" and body.lstrip()[:1] == b"[":
            await send_refusal(NO_HTTP_BATCHES, send)
            return
        await self.app(scope, replay, send)

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> tuple[bytes, Receive] | None:
        """Read the whole body within the cap, then hand it on; None when it was refused, or
        cut short (the request is dropped with one line in the log: nobody is left to answer)."""
        buffer = bytearray()
        body = b""
        queued: deque[Message] = deque()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                why = scope.get(CLOSED_KEY) or "the client closed the connection"
                declared = _headers(scope).get("content-length")
                path = "".join(c if c.isprintable() else "?" for c in _shown(str(scope.get("path", ""))))
                log.info(
                    "dropped %s %s: %s after %d of %s body bytes",
                    scope.get("method", ""),
                    path,
                    why,
                    len(buffer),
                    declared if declared is not None else "?",
                )
                return None
            if message["type"] != "http.request":
                queued.append(message)
                break
            chunk = message.get("body", b"")
            if len(buffer) + len(chunk) > self.access.max_body:
                await send_refusal(self.access.too_large(None), send)
                return None
            buffer += chunk
            if not message.get("more_body", False):
                body = bytes(buffer)
                queued.appendleft({"type": "http.request", "body": body, "more_body": False})
                break

        async def replay() -> Message:
            if queued:
                return queued.popleft()
            return await receive()

        return body, replay
