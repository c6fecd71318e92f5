"""Per-connection limits of ``pegboard serve --http``: a deadline for the request head, one for
silence inside a request body, and a cap on open connections.

uvicorn's own knobs do not cover these: its keep-alive timer only runs between requests, so a
connection that never finishes its head is held for as long as the client likes, and its
``limit_concurrency`` answers a plain-text 503 that counts the connection asking. So the
server speaks HTTP/1.1 through a subclass of uvicorn's h11 protocol that adds them.
"""

from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from pegboard_mcp_server.guard import CLOSED_KEY, TRANSPORT_REFUSED, Refusal, Scope, send_refusal
from pegboard_mcp_server.limits import HttpLimits

log = logging.getLogger("pegboard.mcp.serve")


def refusal_bytes(refusal: Refusal) -> bytes:
    """A whole ``Connection: close`` HTTP/1.1 response for ``refusal``, for a connection whose
    request never reached the application."""
    body = refusal.body()
    head = [
        f"HTTP/1.1 {refusal.status} {HTTPStatus(refusal.status).phrase}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
        *(f"{name}: {value}" for name, value in refusal.headers),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def header_timeout_refusal(limits: HttpLimits) -> Refusal:
    return Refusal(
        408,
        TRANSPORT_REFUSED,
        f"The request head did not arrive within {limits.header_timeout:g} s; the connection is closed. "
        "Send the whole head at once, or start pegboard serve with a larger --header-timeout.",
        "header",
    )


def body_timeout_refusal(limits: HttpLimits) -> Refusal:
    return Refusal(
        408,
        TRANSPORT_REFUSED,
        f"No bytes of the request body arrived for {limits.body_timeout:g} s; the connection is closed. "
        "Send the body without pauses, or start pegboard serve with a larger --body-timeout.",
        "body",
    )


def too_many_connections(limits: HttpLimits) -> Refusal:
    return Refusal(
        503,
        TRANSPORT_REFUSED,
        f"pegboard serve already has {limits.max_connections} connections open, its --max-connections limit; "
        "retry when one has closed, reuse an open connection, or start pegboard serve with a larger "
        "--max-connections.",
        "connections",
        limit=limits.max_connections,
        headers=(("retry-after", "1"), ("connection", "close")),
    )


def protocol_for(limits: HttpLimits) -> type[asyncio.Protocol]:
    """The HTTP/1.1 protocol class for uvicorn's ``Config(http=...)`` that applies ``limits``."""
    return type("LimitedH11Protocol", (LimitedH11Protocol,), {"limits": limits})


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a head deadline, a body idle deadline and a connection cap."""

    limits: HttpLimits = HttpLimits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            refusal = too_many_connections(self.limits)
            log.warning("refused a connection from %s: %s", _peer(self.client), refusal.refused)
            self.app = _Refuse(refusal)
        self._arm("head", self.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._follow()

    def _follow(self) -> None:
        """Arm the deadline that fits where the request stands: the head's (kept, not renewed, as
        its bytes trickle in), the body's (renewed by every byte), or none once it is all read."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if not self.conn.trailing_data[0]:
                if self._waiting_for == "body":  # that request ended; the next has not begun
                    self._disarm()
            elif self._waiting_for != "head":
                self._arm("head", self.limits.header_timeout)
        elif state is h11.SEND_BODY:
            self._arm("body", self.limits.body_timeout)
        else:
            self._disarm()

    def _arm(self, what: str, seconds: float) -> None:
        self._disarm()
        self._waiting_for = what
        self._deadline = self.loop.call_later(seconds, self._expired, what)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._waiting_for = None

    def _expired(self, what: str) -> None:
        self._deadline = None
        self._waiting_for = None
        if self.transport.is_closing():
            return
        if what == "body":
            if self.flow.read_paused:  # the server stopped reading, not the client sending
                self._arm("body", self.limits.body_timeout)
                return
            refusal = body_timeout_refusal(self.limits)
            cycle = self.cycle
            answered = cycle is not None and cycle.response_started
            if cycle is not None:
                cycle.scope[CLOSED_KEY] = f"no body bytes for {self.limits.body_timeout:g} s (--body-timeout)"  # type: ignore[literal-required]
                cycle.disconnected = True
                cycle.message_event.set()
            if not answered:  # the application logs the request it drops, with the reason above
                self.transport.write(refusal_bytes(refusal))
        else:
            started = bool(self.conn.trailing_data[0])
            if started:
                self.transport.write(refusal_bytes(header_timeout_refusal(self.limits)))
            log.info(
                "closed a connection from %s: %s within %g s (--header-timeout)",
                _peer(self.client),
                "its request head did not arrive" if started else "no request",
                self.limits.header_timeout,
            )
        self.transport.close()


class _Refuse:
    """The application of a connection over the cap: every request gets the same 503."""

    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send_refusal(self.refusal, send)


def _peer(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "an unknown peer"
