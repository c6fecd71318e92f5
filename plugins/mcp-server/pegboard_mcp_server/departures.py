"""Calls whose client went away: a session-bound call is ended after a grace period.

On the 2026-07-28 wire a request is an exchange of its own, and the SDK cancels its handler as
soon as the client closes the connection. A request of a handshake-era session (one with an
``Mcp-Session-Id``) runs in the session's task instead, and would go on with nobody left to
answer: a command it started would run to its end. So each such ``POST`` carries a
``Departure`` in its ASGI scope; the call it starts runs inside a cancel scope kept there, and
when the connection closes before the answer went out, the call is cancelled the same way
after ``--disconnect-grace`` seconds. A call that finishes within the grace is left alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from pegboard_mcp_server.guard import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("pegboard.mcp.serve")

DEPARTURE_KEY = "pegboard.departure"
T = TypeVar("T")


class Departure:
    """One session-bound request: the calls it runs, and whether its client has gone."""

    def __init__(self, grace: float, session: str) -> None:
        self.grace = grace
        self.session = session
        self.calls: set[anyio.CancelScope] = set()
        self.left = False
        self.ended = False
        self._timer: asyncio.TimerHandle | None = None

    @contextmanager
    def watching(self) -> Iterator[anyio.CancelScope]:
        """Run a call inside a cancel scope this departure may cancel."""
        with anyio.CancelScope() as scope:
            if self.ended:
                scope.cancel()
            self.calls.add(scope)
            try:
                yield scope
            finally:
                self.calls.discard(scope)
                if self.left and not self.calls and self._timer is not None:
                    self._timer.cancel()
                    self._timer = None

    def client_left(self) -> None:
        """The connection closed before the answer: end the calls once the grace has passed."""
        if self.left:
            return
        self.left = True
        if self.grace <= 0:
            self.end()
            return
        self._timer = asyncio.get_running_loop().call_later(self.grace, self.end)

    def end(self) -> None:
        self._timer = None
        self.ended = True
        if not self.calls:
            return
        log.info(
            "ended a call of session %s...: its client left %g s ago (--disconnect-grace)",
            self.session[:8],
            self.grace,
        )
        for scope in list(self.calls):
            scope.cancel()


def departure_of(ctx: Any) -> Departure | None:
    """The departure of the HTTP request behind an SDK request context, if it has one."""
    scope = getattr(getattr(ctx, "request", None), "scope", None)
    found = scope.get(DEPARTURE_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Departure) else None


async def unless_departed(departure: Departure | None, call: Awaitable[T]) -> T | None:
    """``await call``; None when the departure ended it."""
    if departure is None:
        return await call
    with departure.watching():
        return await call
    return None


@dataclass
class Departures:
    """ASGI middleware: gives every ``POST`` of an MCP session a ``Departure`` and tells it when
    the connection closed before the response was complete."""

    app: ASGIApp
    grace: float

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        session = next((v for k, v in scope.get("headers", ()) if k == b"mcp-session-id"), None)
        if session is None:
            await self.app(scope, receive, send)
            return
        departure = Departure(self.grace, session.decode("latin-1"))
        scope[DEPARTURE_KEY] = departure
        answered = False

        async def watched_send(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        async def watched_receive() -> Message:
            message = await receive()
            if message["type"] == "http.disconnect" and not answered:
                departure.client_left()
            return message

        try:
            await self.app(scope, watched_receive, watched_send)
        finally:
            if not answered:
                departure.client_left()
