"""A real HTTP server on 127.0.0.1 for the web tool tests: routes are functions of the request."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int = 200
    body: bytes | Iterator[bytes] = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "text/html; charset=utf-8"
    delay: float = 0.0


Route = Callable[[Seen], Reply]


class _Handler(BaseHTTPRequestHandler):
    server: LocalServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def handle(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            super().handle()

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        seen = Seen(self.command, parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length) if length else b"")
        srv = self.server
        with srv.lock:
            srv.seen.append(seen)
            srv.active += 1
            srv.max_active = max(srv.max_active, srv.active)
        try:
            route = srv.routes.get(parts.path)
            reply = route(seen) if route else Reply(404, b"<h1>Not found</h1>")
            if reply.delay:
                time.sleep(reply.delay)
            self.send_response(reply.status)
            if reply.content_type:
                self.send_header("Content-Type", reply.content_type)
            for k, v in reply.headers.items():
                self.send_header(k, v)
            if isinstance(reply.body, bytes):
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            else:
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in reply.body:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            with srv.lock:
                srv.active -= 1

    do_GET = _serve
    do_POST = _serve


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.active = 0
        self.max_active = 0
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early (the tools stop reading at their caps) is not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def hits(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path == path)

    def route(self, path: str, reply: Reply | Route) -> None:
        if isinstance(reply, Reply):
            fixed = reply
            self.routes[path] = lambda _seen: fixed
        else:
            self.routes[path] = reply

    def json_route(self, path: str, fn: Callable[[Seen], Any]) -> None:
        self.routes[path] = lambda seen: Reply(body=json.dumps(fn(seen)).encode(), content_type="application/json")

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
