"""A lean MCP server loop over stdio: newline-delimited JSON-RPC 2.0 on stdin/stdout.

Why not the SDK's server here: importing ``mcp.server`` costs about a second (it pulls in
every protocol era's models, Starlette and the auth stack), which alone is three times the
cold start of the reference filesystem server. This loop speaks the handshake era of the
protocol (``initialize``; ``server/discover`` is answered "method not found", which makes
SDK clients in ``auto`` mode fall back to ``initialize``) with nothing but ``json`` and
``asyncio``; the HTTP transport uses the SDK. Tests drive this loop with the official client.

Methods: ``initialize``, ``ping``, ``tools/list``, ``tools/call``, ``prompts/list``,
``prompts/get`` and ``logging/setLevel``, the ones the declared capabilities (tools, prompts,
logging) promise. Anything else (``resources/list``, ``completion/complete``, ...) is "method
not found" (-32601, the method name as ``data``), as the SDK's HTTP transport answers it.

Robustness rules: a line that is not JSON gets a parse error (id null) and the loop goes
on; a line over the ``--max-body`` cap is dropped with an error; each request runs in its own task, so a
slow call never blocks others; closing stdin ends the loop and the process exits 0.
Protocol output goes to the original stdout only: fd 1 is pointed at stderr while serving,
so a stray ``print`` in a tool (or a child process) cannot corrupt the stream.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from pegboard_mcp_server.limits import DEFAULT_MAX_BODY, too_large_message
from pegboard_mcp_server.paging import CursorError

if TYPE_CHECKING:  # the bridge imports the kernel, which loads in the background
    from pegboard_mcp_server.bridge import Bridge
    from pegboard_mcp_server.host import ClientLink

log = logging.getLogger("pegboard.mcp.serve")

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = HANDSHAKE_VERSIONS[-1]
BATCH_VERSION = "2025-03-26"  # the one revision with JSON-RPC batches (2025-06-18 removed them)
ELICIT_TIMEOUT = 600.0
READ_CHUNK = 1 << 20
SHUTDOWN_GRACE = 5.0
BRIDGE_IDLE_START = 0.25
WATCH_INTERVAL = 1.0

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_MISSING = object()


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
#: orjson's defaults that differ from the standard encoder's ``default=str`` are turned off
_ORJSON_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _dumps(message: dict[str, Any] | list[dict[str, Any]]) -> bytes:
    """One protocol line. orjson writes it (escaping a tool's text costs a few times less);
    what orjson refuses (integers past 64 bits, keys that are not strings, lone surrogates)
    goes through the standard encoder, which says what is wrong."""
    try:
        return orjson.dumps(message, default=str, option=_ORJSON_OPTIONS)
    except TypeError:
        return _ENCODER.encode(message).encode("utf-8") + b"\n"


def _loads(line: bytes) -> Any:
    """A received line, read by the standard decoder: orjson would read an integer just past
    64 bits as a float (a request id would come back changed), and requests are small."""
    return json.loads(line)


class _Output:
    """Writes whole lines to the protocol output; never raises once the peer is gone.

    Lines written in one turn of the event loop (the answers of calls that finished together)
    go out in one write, in order, at the end of that turn.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.transport: asyncio.WriteTransport | None = None
        self.closed = False
        self._file: Any = None
        self._lines: list[bytes] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    async def open(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._file = os.fdopen(self.fd, "wb", buffering=0, closefd=False)
        try:
            self.transport, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, self._file)
        except (ValueError, OSError):  # a regular file: plain blocking writes
            self.transport = None

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        if self._loop is None:
            self._write(data)
            return
        if not self._lines:
            self._loop.call_soon(self.flush)
        self._lines.append(data)

    def flush(self) -> None:
        """Write what this turn of the loop produced."""
        lines, self._lines = self._lines, []
        if lines:
            self._write(lines[0] if len(lines) == 1 else b"".join(lines))

    def _write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            if self.transport is not None:
                if self.transport.is_closing():
                    self.closed = True
                    return
                self.transport.write(data)
            else:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view) :]
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.closed = True

    async def drain(self, timeout: float = 5.0) -> None:
        self.flush()
        transport = self.transport
        if transport is None:
            return
        deadline = asyncio.get_running_loop().time() + timeout
        while (
            not transport.is_closing()
            and transport.get_write_buffer_size()
            and (asyncio.get_running_loop().time() < deadline)
        ):
            await asyncio.sleep(0.005)


class _Input(asyncio.Protocol):
    """Splits stdin into lines and hands each to the server; notes end of input."""

    def __init__(self, server: StdioServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self.discarding = False

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        limit = self.server.max_body
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            if self.discarding:
                self.discarding = False
            elif (size := len(buf) + nl - start) > limit:
                buf.clear()
                self.server.too_large(size)
            elif buf:
                buf += data[start:nl]
                self.server.on_line(bytes(buf))
                buf.clear()
            else:
                self.server.on_line(data[start:nl])
            start = nl + 1
        if start < len(data) and not self.discarding:
            buf += data[start:]
            if len(buf) > limit:
                buf.clear()
                self.discarding = True
                self.server.too_large(None)

    def eof_received(self) -> bool | None:
        if self.buffer and not self.discarding:
            self.server.on_line(bytes(self.buffer))
            self.buffer.clear()
        self.server.closed.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.closed.set()


class StdioServer:
    """Serves one ``Bridge`` over stdin/stdout until stdin closes."""

    def __init__(
        self,
        make_bridge: Callable[[], Bridge],
        *,
        name: str = "pegboard",
        version: str = "0.1.0",
        instructions: str | None = None,
        max_body: int = DEFAULT_MAX_BODY,
        input_fd: int = 0,
        output_fd: int = 1,
    ) -> None:
        self.make_bridge = make_bridge
        self.name = name
        self.version = version
        self.instructions = instructions
        self.max_body = max_body
        self.input_fd = input_fd
        self.output_fd = output_fd
        self.closed = asyncio.Event()
        self.out: _Output | None = None
        self.bridge_future: asyncio.Future[Bridge] | None = None
        self._bridge_job: asyncio.Future[Bridge] | None = None
        self.tasks: dict[Any, asyncio.Task[None]] = {}
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.protocol_version = LATEST_VERSION
        self.negotiated: str | None = None
        self.initialized = False
        self._ids = itertools.count(1)
        self._signature: Any = None
        self._signature_basis = -1  # the tool set version the signature was taken at
        self._elicit = self.elicit  # one bound method, so the bridge makes its approver once
        self._sample = self.sample
        self.handlers: dict[str, Callable[[Any], Awaitable[dict[str, Any]]]] = {
            "initialize": self.initialize,
            "ping": self.ping,
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
            "logging/setLevel": self.set_level,
            "prompts/list": self.list_prompts,
            "prompts/get": self.get_prompt,
        }
        self.log_level = "info"
        self._link: ClientLink | None = None
        self._send_log: Any = None

    # -- lifecycle ---------------------------------------------------------------------------
    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        self.out = _Output(self.output_fd)
        await self.out.open(loop)
        self.bridge_future = loop.create_future()
        self.bridge_future.add_done_callback(self._bridge_ready)
        idle_start = loop.call_later(BRIDGE_IDLE_START, self._start_bridge)
        reader = _Input(self)
        transport: asyncio.BaseTransport | None = None
        try:
            stdin = os.fdopen(self.input_fd, "rb", buffering=0, closefd=False)
            transport, _ = await loop.connect_read_pipe(lambda: reader, stdin)
        except (ValueError, OSError):  # a regular file or an odd fd: read in a thread
            threading.Thread(target=self._read_blocking, args=(loop, reader), daemon=True).start()
        watcher = loop.create_task(self._watch_tool_set())
        await self.closed.wait()
        watcher.cancel()
        if transport is not None:
            transport.close()
        await self._shutdown()
        idle_start.cancel()
        if self._bridge_job is None:  # no client came: nothing to load or close
            self.bridge_future.cancel()
        await asyncio.wait([self.bridge_future], timeout=SHUTDOWN_GRACE)
        future = self.bridge_future
        if future.done() and not future.cancelled() and future.exception() is None:
            try:
                await asyncio.wait_for(future.result().aclose(), SHUTDOWN_GRACE)
            except Exception:
                log.exception("closing the sessions failed")
        return 1 if future.done() and not future.cancelled() and future.exception() is not None else 0

    def _read_blocking(self, loop: asyncio.AbstractEventLoop, reader: _Input) -> None:
        try:
            while chunk := os.read(self.input_fd, READ_CHUNK):
                loop.call_soon_threadsafe(reader.data_received, chunk)
        except OSError:
            pass
        loop.call_soon_threadsafe(reader.eof_received)

    def _start_bridge(self) -> None:
        """Build the bridge (import the kernel, load every plugin) in a thread, once.

        It starts after the answer to ``initialize`` is out, on the first request that needs
        it, or when no client spoke for ``BRIDGE_IDLE_START`` seconds: the loading thread holds
        the GIL most of the time, so running it before the handshake would slow the answer.
        """
        target = self.bridge_future
        if self._bridge_job is not None or target is None or target.done():
            return
        if self.out is not None:
            self.out.flush()  # answers already made go out before the loading takes the GIL
        self._bridge_job = job = asyncio.get_running_loop().run_in_executor(None, self.make_bridge)

        def settle(done: asyncio.Future[Bridge]) -> None:
            if target.done():
                return
            if done.cancelled():
                target.cancel()
            elif (exc := done.exception()) is not None:
                target.set_exception(exc)
            else:
                target.set_result(done.result())

        job.add_done_callback(settle)

    def _bridge_ready(self, future: asyncio.Future[Bridge]) -> None:
        if future.cancelled():
            return
        if (exc := future.exception()) is not None:
            log.error("cannot load Pegboard: %s", exc)
            self.closed.set()

    async def _shutdown(self) -> None:
        for future in self.pending.values():
            if not future.done():
                future.cancel()
        tasks = [t for t in self.tasks.values() if not t.done()]
        if tasks:  # requests already read get their answers, within a grace period
            _done, late = await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=1.0)
        if self.out is not None:
            await self.out.drain(timeout=2.0)
            if self.out.transport is not None:
                self.out.transport.close()

    async def bridge(self) -> Bridge:
        self._start_bridge()
        future = self.bridge_future
        assert future is not None
        if future.done() and not future.cancelled() and future.exception() is None:
            return future.result()
        return await asyncio.shield(future)

    # -- wire --------------------------------------------------------------------------------
    def send(self, message: dict[str, Any] | list[dict[str, Any]]) -> None:
        if self.out is not None:
            self.out.write(_dumps(message))

    def send_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        self.send(_error(request_id, code, message, data))

    def too_large(self, size: int | None) -> None:
        self.send_error(
            None, INVALID_REQUEST, too_large_message(self.max_body, size), {"refused": "body", "limit": self.max_body}
        )

    def on_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = _loads(line)
        except (ValueError, RecursionError) as exc:
            self.send_error(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}")
            return
        try:
            if isinstance(message, list):
                self._on_batch(message)
            else:
                self._dispatch(message, self.send)
        except Exception as exc:  # never let one message end the loop
            log.exception("failed to handle a message")
            request_id = message.get("id") if isinstance(message, dict) else None
            self.send_error(request_id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")

    def _on_batch(self, messages: list[Any]) -> None:
        """A JSON-RPC batch: only where the negotiated revision has them (2025-03-26); one array answers it."""
        if self.negotiated != BATCH_VERSION:
            now = f"protocol revision {self.negotiated}" if self.negotiated else "no protocol revision negotiated yet"
            self.send_error(
                None,
                INVALID_REQUEST,
                f"Invalid request: JSON-RPC batches are not accepted with {now}; only revision {BATCH_VERSION} "
                "allows them. Send one message per line.",
            )
            return
        if not messages:
            self.send_error(None, INVALID_REQUEST, "Invalid request: an empty batch")
            return
        answers: list[dict[str, Any]] = []
        tasks: list[asyncio.Task[None]] = []
        for message in messages:
            if isinstance(message, dict) and message.get("method") == "initialize":
                answers.append(_error(message.get("id"), INVALID_REQUEST, "Invalid request: initialize in a batch"))
            elif (task := self._dispatch(message, answers.append)) is not None:
                tasks.append(task)
        key = ("batch", next(self._ids))

        async def answer() -> None:
            try:
                if tasks:
                    await asyncio.wait(tasks)
            finally:
                self.tasks.pop(key, None)
            if answers:
                self.send(answers)

        self.tasks[key] = asyncio.get_running_loop().create_task(answer())

    def _dispatch(self, message: Any, reply: Callable[[dict[str, Any]], None]) -> asyncio.Task[None] | None:
        """Handle one message; ``reply`` gets its answer. Returns the task of a request that runs on."""
        if not isinstance(message, dict):
            reply(_error(None, INVALID_REQUEST, "Invalid request: expected a JSON-RPC object"))
            return None
        method = message.get("method", _MISSING)
        request_id = message.get("id", _MISSING)
        if method is _MISSING:
            self._on_response(request_id, message)
            return None
        if not isinstance(method, str):
            reply(_error(None if request_id is _MISSING else request_id, INVALID_REQUEST, "Invalid request: method"))
            return None
        params = message.get("params")
        if request_id is _MISSING:
            self._on_notification(method, params)
            return None
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            reply(_error(None, INVALID_REQUEST, "Invalid request: id must be a string or an integer"))
            return None
        handler = self.handlers.get(method)
        if handler is None:
            reply(_error(request_id, METHOD_NOT_FOUND, "Method not found", method))
            return None
        if params is not None and not isinstance(params, dict):
            reply(_error(request_id, INVALID_PARAMS, "Invalid params: expected an object"))
            return None
        task = asyncio.get_running_loop().create_task(self._run(request_id, handler, params or {}, reply))
        self.tasks[request_id] = task
        return task

    async def _run(
        self,
        request_id: Any,
        handler: Callable[[Any], Awaitable[dict[str, Any]]],
        params: Any,
        reply: Callable[[dict[str, Any]], None],
    ) -> None:
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            return
        except _ParamsError as exc:
            reply(_error(request_id, INVALID_PARAMS, str(exc)))
            return
        except Exception as exc:
            log.exception("request failed")
            reply(_error(request_id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}"))
            return
        finally:
            self.tasks.pop(request_id, None)
        reply({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _on_response(self, request_id: Any, message: dict[str, Any]) -> None:
        future = self.pending.pop(request_id, None) if isinstance(request_id, str) else None
        if future is not None and not future.done():
            future.set_result(message)

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            task = self.tasks.get(params.get("requestId"))
            if task is not None:
                task.cancel()

    async def _watch_tool_set(self) -> None:
        """Announce tools that appear without a call (an MCP server that connected late)."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            future = self.bridge_future
            if future is None or not future.done() or future.exception() is not None or self._signature is None:
                continue
            bridge = future.result()
            try:
                bridge.refresh()
            except Exception:
                log.exception("refreshing the tool set failed")
                continue
            signature = self._bridge_signature(bridge)
            if signature != self._signature:
                self._signature = signature
                self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    def _bridge_signature(self, bridge: Bridge) -> Any:
        self._signature_basis = bridge.pegboard.tool_set_version
        return bridge.signature(self)

    # -- server-to-client requests -----------------------------------------------------------
    async def _ask_client(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """A server-to-client request: its result, or ``None`` when the client answered with an
        error or the connection closed. A cancelled wait tells the client (``notifications/cancelled``)."""
        if self.closed.is_set():
            return None
        request_id = f"pegboard-{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            answer = await asyncio.wait_for(future, ELICIT_TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            self.pending.pop(request_id, None)
            if self.closed.is_set():
                return None
            self.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
            )
            raise
        result = answer.get("result")
        return result if isinstance(result, dict) else None

    async def elicit(self, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        """Ask the client's user; ``None`` when the client cannot elicit or does not answer."""
        if "elicitation" not in self.client_capabilities:
            return None
        params: dict[str, Any] = {"message": message, "requestedSchema": schema}
        if self.protocol_version >= "2025-11-25":
            params["mode"] = "form"
        return await self._ask_client("elicitation/create", params)

    async def create_message(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """``sampling/createMessage`` with ``params`` as given; ``None`` when the client cannot sample."""
        if "sampling" not in self.client_capabilities:
            return None
        return await self._ask_client("sampling/createMessage", params)

    async def sample(self, instruction: str, text: str, max_tokens: int, images: Sequence[Any] = ()) -> str | None:
        """Ask the client's model (MCP sampling); ``None`` when the client cannot or will not.
        Each image goes first as a user message with image content."""
        from pegboard_mcp_server.sampling import sampling_message

        pictures = [{"role": "user", "content": {"type": "image", "data": i.data, "mimeType": i.mime_type}}
                    for i in images]
        params = {
            "messages": [*pictures,
                         {"role": "user", "content": {"type": "text", "text": sampling_message(instruction, text)}}],
            "maxTokens": max_tokens,
        }
        result = await self.create_message(params)
        content = result.get("content") if isinstance(result, dict) else None
        if isinstance(content, list):
            content = next((c for c in content if isinstance(c, dict) and c.get("type") == "text"), None)
        return content.get("text") if isinstance(content, dict) and isinstance(content.get("text"), str) else None

    def link(self) -> ClientLink:
        """What this client can do for the host hooks (elicitation, sampling); one link for
        the connection, made again when ``initialize`` declares other capabilities."""
        from pegboard_mcp_server.host import ClientLink

        link = self._link
        if link is None or link.capabilities is not self.client_capabilities:
            link = self._link = ClientLink(
                self.client_capabilities, self.elicit, self.create_message, tools_changed=self._tools_changed
            )
        return link

    async def _tools_changed(self) -> None:
        """A new config is in force: a client that listed tools hears that its list may differ."""
        future = self.bridge_future
        if self._signature is None or future is None or not future.done() or future.cancelled():
            return
        if future.exception() is not None:
            return
        self._signature = self._bridge_signature(future.result())
        self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    # -- methods -----------------------------------------------------------------------------
    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        self.protocol_version = requested if requested in HANDSHAKE_VERSIONS else LATEST_VERSION
        self.negotiated = self.protocol_version
        caps = params.get("capabilities")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": self.protocol_version,
            "capabilities": {"tools": {"listChanged": True}, "prompts": {"listChanged": False}, "logging": {}},
            "serverInfo": {"name": self.name, "title": "Pegboard", "version": self.version},
        }
        if self.instructions:
            result["instructions"] = self.instructions
        asyncio.get_running_loop().call_soon(self._start_bridge)  # runs once this answer is written
        return result

    async def ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def set_level(self, params: dict[str, Any]) -> dict[str, Any]:
        from pegboard_mcp_server.bridge import LOG_LEVELS

        level = params.get("level")
        if level not in LOG_LEVELS:
            raise _ParamsError(f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
        self.log_level = level
        return {}

    def _log_sender(self) -> Any:
        """The sender of ``notifications/message`` for calls, one for the connection."""
        if self._send_log is not None:
            return self._send_log
        from pegboard_mcp_server.bridge import LOG_LEVELS

        async def send(level: str, data: Any, logger: str | None) -> None:
            if LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
                return
            params: dict[str, Any] = {"level": level, "data": data}
            if logger:
                params["logger"] = logger
            self.send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

        self._send_log = send
        return send

    async def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise _ParamsError(
                "Invalid params: cursor must be a string from a previous tools/list; list tools again without one"
            )
        bridge = await self.bridge()
        try:
            listed = bridge.list_page(cursor, self, self.link())
        except CursorError as exc:
            raise _ParamsError(str(exc)) from None
        self._signature = self._bridge_signature(bridge)
        return listed

    def _progress_sender(self, token: str | int) -> Any:
        async def send(done: float, total: float | None, message: str | None) -> None:
            params: dict[str, Any] = {"progressToken": token, "progress": done}
            if total is not None:
                params["total"] = total
            if message:
                params["message"] = message
            self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

        return send

    async def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise _ParamsError("Invalid params: tools/call needs params.name (a tool name)")
        bridge = await self.bridge()
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        progress = self._progress_sender(token) if isinstance(token, str | int) else None
        try:
            result = await bridge.call_tool(
                name,
                params.get("arguments"),
                self._elicit,
                client=self,
                progress=progress,
                log_message=self._log_sender(),
                sample=self._sample,
                request_id=token,
                link=self.link(),
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            from pegboard_mcp_server.bridge import error_result

            result = error_result(f"Pegboard failed on this call: {type(exc).__name__}: {exc}")
        # the list can change only with the tool set's version (a load in another process of a
        # resumed session is seen by the watcher, within WATCH_INTERVAL)
        if self._signature is not None and bridge.pegboard.tool_set_version != self._signature_basis:
            signature = self._bridge_signature(bridge)
            if signature != self._signature:
                self._signature = signature
                self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return result


    async def list_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        bridge = await self.bridge()
        return bridge.list_prompts(self)

    async def get_prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        from pegboard_mcp_server.prompts import PromptError

        bridge = await self.bridge()
        try:
            return await bridge.get_prompt(params.get("name"), params.get("arguments"), client=self, link=self.link())
        except PromptError as exc:
            raise _ParamsError(str(exc)) from None


class _ParamsError(ValueError):
    pass


def protect_stdout() -> int:
    """Keep the protocol stream clean: return a private copy of fd 1 and point fd 1 at stderr."""
    sys.stdout.flush()
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out_fd


def run_stdio(make_bridge: Callable[[], Bridge], **options: Any) -> int:
    out_fd = protect_stdout()
    server = StdioServer(make_bridge, output_fd=out_fd, **options)
    try:
        return _run(server.serve())
    except KeyboardInterrupt:
        return 130


def _run(main: Coroutine[Any, Any, int]) -> int:
    """Run the server on uvloop where it is installed (its loop and pipe transports cost a
    call noticeably less than asyncio's own), else on asyncio's loop. ``PEGBOARD_ASYNCIO_LOOP=1``
    keeps asyncio's loop."""
    if not os.environ.get("PEGBOARD_ASYNCIO_LOOP"):
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(main)
    return asyncio.run(main)
