"""Connections to MCP servers, kept alive on a background event loop of their own.

Each ``Pegboard`` with configured servers gets one ``McpManager``: a daemon thread running an
asyncio loop, with one supervisor task per server that connects, lists the tools, watches
the connection and reconnects with backoff when it drops. Tools run on any loop in any
thread: their calls hop onto the manager's loop and back.

The SDK (about a second to import) is imported on the manager's thread only, so a Pegboard
without MCP servers never pays for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pegboard import ImageBlock, TextBlock, ToolResult
from pegboard_mcp_client.settings import McpServerConfig, float_env, server_cwd
from pegboard_mcp_client.watched import WatchedTransport

log = logging.getLogger("pegboard.mcp.client")
T = TypeVar("T")

CONNECT_TIMEOUT = 30.0
WATCH_INTERVAL = 0.1
PING_INTERVAL = 15.0
KEEPALIVE_ENV = "PEGBOARD_MCP_KEEPALIVE"  # seconds between keep-alive pings (legacy protocols only)
#: The first protocol version without ``ping``: from it on, the watch relies on the transport.
PING_REMOVED_IN = "2026-07-28"
BACKOFF_START = 0.25
BACKOFF_MAX = 30.0
CONNECTION_CLOSED = -32000

SETTLED = ("connected", "failed")
CONNECTING = ("pending", "connecting")  # never connected yet, no answer yet either
# A stdio server gets its stdin closed, then this long to exit before the SDK kills it; close()
# waits that long plus the kill, so no server outlives the Pegboard that started it.
STOP_GRACE = 5.0
DEPTH_ENV = "PEGBOARD_MCP_DEPTH"  # how deep in a chain of Pegboards serving each other we are
MAX_DEPTH = 2


@dataclass
class ServerState:
    """What is known about one server; read from any thread, written on the manager's loop."""

    name: str
    config: McpServerConfig
    status: str = "pending"  # pending, connecting, connected, reconnecting, failed
    error: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    tools_version: int = 0
    has_resources: bool = False
    server_name: str | None = None
    attempts: int = 0
    connected_since: float | None = None
    client: Any = None
    settled: threading.Event = field(default_factory=threading.Event)
    lost: asyncio.Event | None = None
    stop: Any = None  # the anyio cancel scope of the live connection attempt

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": "http" if self.config.url else "stdio",
            "status": self.status,
            "error": self.error,
            "tools": [t["name"] for t in self.tools],
            "resources": self.has_resources,
            "attempts": self.attempts,
        }

    def unavailable_reason(self) -> str | None:
        if self.status == "connected":
            return None
        if self.status in CONNECTING:
            return f"MCP server {self.name!r} is still connecting"
        why = f": {self.error}" if self.error else ""
        return f"MCP server {self.name!r} is {self.status}{why}"


def _text(block: Any) -> TextBlock:
    return TextBlock(text=block if isinstance(block, str) else str(block))


def convert_content(blocks: Iterable[Any]) -> list[TextBlock | ImageBlock]:
    """MCP content blocks as Pegboard blocks; kinds Pegboard has no block for become a text note."""
    out: list[TextBlock | ImageBlock] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            out.append(TextBlock(text=block.text))
        elif kind == "image":
            out.append(ImageBlock(data=block.data, mime_type=block.mime_type))
        elif kind == "audio":
            out.append(_text(f"[audio {block.mime_type}, {len(block.data)} base64 characters]"))
        elif kind == "resource_link":
            out.append(_text(f"[resource {block.uri}" + (f" ({block.name})" if block.name else "") + "]"))
        elif kind == "resource":
            out.extend(convert_resource_contents([block.resource]))
        else:
            out.append(_text(f"[{kind or type(block).__name__} content]"))
    return out


def convert_resource_contents(contents: Iterable[Any]) -> list[TextBlock | ImageBlock]:
    out: list[TextBlock | ImageBlock] = []
    for item in contents:
        mime = getattr(item, "mime_type", None)
        text = getattr(item, "text", None)
        blob = getattr(item, "blob", None)
        if text is not None:
            out.append(TextBlock(text=text))
        elif blob is not None and mime and mime.startswith("image/"):
            out.append(ImageBlock(data=blob, mime_type=mime))
        elif blob is not None:
            out.append(_text(f"[binary resource {item.uri} ({mime or 'unknown type'}), {len(blob)} base64 characters]"))
    return out


def convert_result(result: Any) -> ToolResult:
    structured = getattr(result, "structured_content", None)
    content = convert_content(getattr(result, "content", []) or [])
    if getattr(result, "is_error", False):
        return ToolResult(content=content, is_error=True, reason="tool_error", metadata={"mcp_is_error": True})
    return ToolResult(content=content, structured=structured if isinstance(structured, dict) else None)


class ServerStderr:
    """The stderr of the stdio servers: a pipe copied to our stderr until the manager closes.

    After that their output is dropped, so a server that was still starting when Pegboard
    exited cannot print its broken-pipe traceback into the user's terminal.
    """

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.file = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self.muted = False
        self._reader = os.fdopen(read_fd, "rb", buffering=0)
        threading.Thread(target=self._copy, name="pegboard-mcp-stderr", daemon=True).start()

    def _copy(self) -> None:
        with contextlib.suppress(Exception), self._reader:
            while chunk := self._reader.read(65536):
                if not self.muted:
                    sys.stderr.write(chunk.decode("utf-8", errors="replace"))
                    sys.stderr.flush()

    def close(self) -> None:
        self.muted = True
        with contextlib.suppress(Exception):
            self.file.close()


def pings_allowed(client: Any) -> bool:
    """Whether the negotiated protocol still has ``ping``: 2026-07-28 removed it (the SDK warns
    on every use), so there the watch relies on the transport's end (a stdio server's exit; a
    stateless HTTP server has no connection to keep alive)."""
    try:
        version = str(client.protocol_version)
    except Exception:
        return False
    return version < PING_REMOVED_IN


class McpManager:
    """Supervises the connections to a set of MCP servers on a private event loop."""

    def __init__(
        self, servers: Mapping[str, McpServerConfig], *, cwd: Path, env: Mapping[str, str] | None = None
    ) -> None:
        self.cwd = cwd
        self.env = dict(env or {})
        self.states: dict[str, ServerState] = {name: ServerState(name, cfg) for name, cfg in servers.items()}
        self.loop = asyncio.new_event_loop()
        self.closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self._thread = threading.Thread(target=self._run_loop, name="pegboard-mcp", daemon=True)
        self._stderr: ServerStderr | None = None
        self.ping_interval = float_env(self.env, KEEPALIVE_ENV, PING_INTERVAL)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        if any(not s.config.url for s in self.states.values()):
            self._stderr = ServerStderr()
        self._thread.start()
        for state in self.states.values():
            self.submit(self._start_supervisor(state))

    async def _start_supervisor(self, state: ServerState) -> None:
        self._tasks.append(asyncio.get_running_loop().create_task(self._supervise(state)))

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the manager's loop from any other loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def close(self, timeout: float = STOP_GRACE + 1.0) -> None:
        """Stop every connection and its server process, then the loop; idempotent."""
        if self.closing or not self._thread.is_alive():
            return
        self.closing = True
        if self._stderr is not None:
            self._stderr.muted = True
        with contextlib.suppress(Exception):
            self.submit(self._close()).result(timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if self._stderr is not None:
            self._stderr.close()

    async def _close(self) -> None:
        for state in self.states.values():
            self._stop(state)
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=STOP_GRACE)
        for task in self._tasks:  # a supervisor sleeping before a retry has nothing to stop
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=1.0)

    # -- waiting -----------------------------------------------------------------------------
    def wait(self, names: Iterable[str] | None = None, timeout: float = 30.0) -> dict[str, str]:
        """Block until the named servers (default: all) connected or failed once, or ``timeout``."""
        deadline = time.monotonic() + max(timeout, 0.0)
        chosen = [self.states[n] for n in (names or self.states) if n in self.states]
        for state in chosen:
            state.settled.wait(max(deadline - time.monotonic(), 0.0))
        return {s.name: s.status for s in chosen}

    async def wait_async(self, names: Iterable[str] | None = None, timeout: float = 30.0) -> dict[str, str]:
        chosen = list(names) if names is not None else None
        return await asyncio.get_running_loop().run_in_executor(None, self.wait, chosen, timeout)

    # -- one server ----------------------------------------------------------------------------
    async def _supervise(self, state: ServerState) -> None:
        backoff = BACKOFF_START
        while not self.closing:
            state.attempts += 1
            state.status = "connecting" if state.attempts == 1 else "reconnecting"
            connected = asyncio.Event()
            task = asyncio.get_running_loop().create_task(self._connection(state, connected))
            waiter = asyncio.get_running_loop().create_task(connected.wait())
            timeout = CONNECT_TIMEOUT
            await asyncio.wait({task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if not connected.is_set() and not task.done():
                self._stop(state)
                state.error = f"no answer within {timeout:g} s"
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            if exc := (task.exception() if task.done() and not task.cancelled() else None):
                state.error = _describe(exc)
            was_connected = connected.is_set()
            state.client = None
            state.connected_since = None
            if self.closing:
                break
            state.status = "failed"
            state.settled.set()
            if was_connected:
                backoff = BACKOFF_START
                log.warning("MCP server %s disconnected: %s; reconnecting", state.name, state.error or "closed")
            else:
                log.warning("MCP server %s failed: %s; retrying in %.2g s", state.name, state.error, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    def _client(self, transport: WatchedTransport) -> Any:
        """The SDK client over ``transport``, whose end the supervisor watches."""
        from mcp import Client

        return Client(transport, cache=None)

    def _transport(self, state: ServerState) -> WatchedTransport:
        """The transport to ``state``'s server (our stdio one, or the SDK's streamable HTTP), watched."""
        from pegboard_mcp_client.stdio import stdio_transport

        cfg = state.config
        if cfg.url:
            from mcp.client.streamable_http import streamable_http_client

            if cfg.headers:
                import httpx2

                http = httpx2.AsyncClient(headers=dict(cfg.headers), timeout=httpx2.Timeout(30.0, read=300.0))
                return WatchedTransport(streamable_http_client(cfg.url, http_client=http))
            return WatchedTransport(streamable_http_client(cfg.url))
        depth = int(self.env.get(DEPTH_ENV, "0") or 0) if self.env.get(DEPTH_ENV, "0").isdigit() else 0
        errlog = self._stderr.file if self._stderr is not None else sys.stderr
        return WatchedTransport(stdio_transport(
            cfg.command or "", list(cfg.args), env={**self.env, **cfg.env, DEPTH_ENV: str(depth + 1)},
            cwd=str(server_cwd(cfg, self.cwd)), errlog=errlog,
        ))

    async def _connection(self, state: ServerState, connected: asyncio.Event) -> None:
        import anyio

        # Stopped through this scope, not task.cancel(): the SDK's shielded shutdown (close
        # stdin, wait, kill the process group) only survives an anyio cancellation.
        with anyio.CancelScope() as scope:
            state.stop = scope
            try:
                await self._connected_session(state, connected)
            finally:
                state.stop = None

    def _stop(self, state: ServerState) -> None:
        if state.stop is not None:
            state.stop.cancel()

    async def _connected_session(self, state: ServerState, connected: asyncio.Event) -> None:
        transport = self._transport(state)
        async with self._client(transport) as client:
            tools: list[dict[str, Any]] = []
            cursor: str | None = None
            for _page in range(100):
                listed = await client.list_tools(cursor=cursor)
                tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools)
                cursor = listed.next_cursor
                if not cursor:
                    break
            caps = client.server_capabilities
            info = client.server_info
            if tools != state.tools:
                state.tools = tools
                state.tools_version += 1
            state.has_resources = getattr(caps, "resources", None) is not None
            state.server_name = info.name if info is not None else None
            state.client = client
            state.error = None
            state.status = "connected"
            state.connected_since = time.monotonic()
            state.lost = asyncio.Event()
            state.settled.set()
            connected.set()
            log.info("MCP server %s connected with %d tools", state.name, len(tools))
            await self._watch(state, client, transport)

    async def _watch(self, state: ServerState, client: Any, transport: WatchedTransport) -> None:
        """Return when the connection is gone: transport closed, a call saw it close, or no pong."""
        last_ping = time.monotonic()
        assert state.lost is not None
        pings = pings_allowed(client)
        while not state.lost.is_set():
            if transport.ended:
                state.error = "connection closed"
                return
            if pings and time.monotonic() - last_ping > self.ping_interval:
                last_ping = time.monotonic()
                try:
                    await asyncio.wait_for(client.send_ping(), self.ping_interval)
                except Exception as exc:
                    state.error = f"no answer to ping: {_describe(exc)}"
                    return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(state.lost.wait(), WATCH_INTERVAL)
        state.error = state.error or "connection lost"

    # -- calls ---------------------------------------------------------------------------------
    def _connected(self, server: str) -> tuple[ServerState | None, ToolResult | None]:
        state = self.states.get(server)
        if state is None:
            return None, ToolResult.refusal("unknown_tool", f"No MCP server named {server!r} is configured")
        if state.status != "connected" or state.client is None:
            return state, ToolResult.refusal("unavailable", state.unavailable_reason() or "not connected")
        return state, None

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        return await self.run(self._call_tool(server, tool, arguments))

    async def _call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        state, refusal = self._connected(server)
        if refusal is not None or state is None:
            return refusal or ToolResult.refusal("unavailable", "not connected")
        try:
            result = await state.client.call_tool(tool, arguments)
        except Exception as exc:
            return self._failure(state, f"{tool} on MCP server {server!r}", exc)
        return convert_result(result)

    def _failure(self, state: ServerState, what: str, exc: BaseException) -> ToolResult:
        code = getattr(getattr(exc, "error", None), "code", None)
        if code == CONNECTION_CLOSED or isinstance(exc, ConnectionError | EOFError):
            state.error = "connection closed during a call"
            if state.lost is not None:
                state.lost.set()
            return ToolResult.refusal(
                "tool_error", f"{what} failed: the server disconnected during the call; it is being reconnected"
            )
        return ToolResult.error(f"{what} failed: {_describe(exc)}")

    async def list_resources(self, server: str | None, cursor: str | None, templates: bool) -> ToolResult:
        return await self.run(self._list_resources(server, cursor, templates))

    async def _list_resources(self, server: str | None, cursor: str | None, templates: bool) -> ToolResult:
        names = [server] if server else [n for n, s in self.states.items() if s.status == "connected"]
        key = "resourceTemplates" if templates else "resources"
        items: list[dict[str, Any]] = []
        problems: list[str] = []
        next_cursor: str | None = None
        for name in names:
            state, refusal = self._connected(name)
            if refusal is not None or state is None:
                if server:
                    return refusal or ToolResult.refusal("unavailable", "not connected")
                continue
            if not state.has_resources:
                if server:
                    return ToolResult.error(f"MCP server {name!r} offers no resources")
                continue
            try:
                if templates:
                    listed: Any = await state.client.list_resource_templates(cursor=cursor if server else None)
                    found = listed.resource_templates
                else:
                    listed = await state.client.list_resources(cursor=cursor if server else None)
                    found = listed.resources
            except Exception as exc:
                if server:
                    return self._failure(state, f"listing resources of MCP server {name!r}", exc)
                problems.append(f"{name}: {_describe(exc)}")
                continue
            if server:
                next_cursor = listed.next_cursor
            for item in found:
                entry = item.model_dump(mode="json", by_alias=True, exclude_none=True)
                entry["server"] = name
                items.append(entry)
        structured: dict[str, Any] = {key: items}
        if next_cursor:
            structured["nextCursor"] = next_cursor
        if problems:
            structured["errors"] = problems
        lines = [
            f"{i['server']}: {i.get('uri') or i.get('uriTemplate')}"
            + (f" ({i['name']})" if i.get("name") else "")
            + (f" — {i['description']}" if i.get("description") else "")
            for i in items
        ]
        if not lines:
            lines = [f"No {'resource templates' if templates else 'resources'} found."]
        if next_cursor:
            lines.append(f"More: call again with cursor={next_cursor!r}")
        lines.extend(f"error: {p}" for p in problems)
        return ToolResult(content=[TextBlock(text="\n".join(lines))], structured=structured)

    async def read_resource(self, server: str, uri: str) -> ToolResult:
        return await self.run(self._read_resource(server, uri))

    async def _read_resource(self, server: str, uri: str) -> ToolResult:
        state, refusal = self._connected(server)
        if refusal is not None or state is None:
            return refusal or ToolResult.refusal("unavailable", "not connected")
        try:
            result = await state.client.read_resource(uri)
        except Exception as exc:
            return self._failure(state, f"reading {uri} from MCP server {server!r}", exc)
        blocks = convert_resource_contents(result.contents)
        return ToolResult(content=blocks or [TextBlock(text=f"{uri} is empty")])


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
