"""Monitor's WebSocket source: every message a server pushes becomes one event.

Text messages are events as they are (a multi-line message is one event); a binary message
becomes ``[binary frame, N bytes]``; a message over 1 MiB ends the monitor, and so does the
server closing the socket (the result says with which code). The URL goes through the
network guard of ``pegboard-toolkit`` (private, link-local and metadata addresses are
refused unless ``network.allowPrivateHosts`` names them), and the connection is made to the
address the guard checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pegboard import ToolContext, ToolResult

if TYPE_CHECKING:
    from pegboard_toolkit.tasks import TaskRecord

MAX_FRAME = 1 << 20
OPEN_TIMEOUT_S = 10.0
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_UNTRUSTED_SCOPES = ("project", "project-local")


def check_ws_url(url: str) -> str:
    """The URL, or ``ValueError`` saying why a WebSocket source cannot use it."""
    if not url.isascii():
        raise ValueError("the ws url must be ASCII only")
    if any(c.isspace() for c in url) or not url:
        raise ValueError("the ws url must not contain whitespace")
    lowered = url.lower()
    if not lowered.startswith(("ws://", "wss://")):
        raise ValueError("the ws url must start with ws:// or wss://")
    authority = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in authority:
        raise ValueError("the ws url must not contain credentials")
    return url


def check_protocols(protocols: Sequence[str] | None) -> list[str] | None:
    if protocols is None:
        return None
    for p in protocols:
        if not _TOKEN.match(p):
            raise ValueError(f"{p!r} is not a valid WebSocket subprotocol token")
    if len(set(protocols)) != len(protocols):
        raise ValueError("the protocols list must not contain duplicates")
    return list(protocols)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _section(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def guard_policy_inputs(ctx: ToolContext) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``network.allowPrivateHosts`` (from config an untrusted project did not write) and
    ``sandbox.network.deniedDomains`` (from any config: it only narrows)."""
    private: list[str] = []
    denied: list[str] = []
    for layer in ctx.config.layers if ctx.config is not None else ():
        data: Mapping[str, Any] = layer.data
        network = _section(data, "network")
        if layer.trusted or layer.scope not in _UNTRUSTED_SCOPES:
            private += _strings(network.get("allowPrivateHosts"))
        sandbox_net = _section(_section(data, "sandbox"), "network")
        denied += _strings(sandbox_net.get("deniedDomains"))
    return tuple(dict.fromkeys(private)), tuple(dict.fromkeys(denied))


async def start_ws_monitor(
    ctx: ToolContext,
    url: str,
    protocols: Sequence[str] | None,
    description: str | None,
    timeout_ms: int,
    persistent: bool,
    on_line: Callable[[TaskRecord, str, int], None],
) -> ToolResult:
    """Check and open the socket, then watch it as a background task of the session."""
    import asyncio
    import concurrent.futures
    import ssl

    from pegboard_toolkit.netguard import GuardPolicy, HostLookupError, NetworkGuard, NetworkRefused
    from pegboard_toolkit.tasks import TaskError, TaskTable

    private, denied = guard_policy_inputs(ctx)
    guard = NetworkGuard(GuardPolicy(allow_private_hosts=private, denied_domains=denied, websocket=True))
    try:
        checked = await guard.acheck_url(url)
    except NetworkRefused as exc:
        return ToolResult.error(str(exc), error_kind=exc.error_kind)
    except (HostLookupError, ValueError) as exc:
        return ToolResult.error(f"cannot open {url}: {exc}", error_kind="bad_url")
    opened: concurrent.futures.Future[str | None] = concurrent.futures.Future()

    async def source(line: Callable[[str], None]) -> str:
        import websockets
        from websockets.asyncio.client import connect

        try:
            sock = await asyncio.to_thread(guard.connect, checked, OPEN_TIMEOUT_S)
            tls = ssl.create_default_context() if checked.url.scheme == "wss" else None
            ws = await connect(
                checked.href, sock=sock, ssl=tls, server_hostname=checked.host if tls else None,
                subprotocols=protocols or None,  # type: ignore[arg-type]
                max_size=MAX_FRAME, open_timeout=OPEN_TIMEOUT_S, proxy=None, compression=None,
            )
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            raise
        opened.set_result(ws.subprotocol)
        try:
            async for message in ws:
                line(f"[binary frame, {len(message)} bytes]" if isinstance(message, bytes) else message)
        except websockets.ConnectionClosed as exc:
            if exc.sent is not None and exc.sent.code == 1009:
                return f"a frame over {MAX_FRAME:,} bytes (1 MiB) ended the monitor"
            frame = exc.rcvd or exc.sent
            return f"the socket closed with code {frame.code if frame else 1006}"
        finally:
            await ws.close()
        code = ws.close_code if ws.close_code is not None else 1005
        reason = f": {ws.close_reason}" if ws.close_reason else ""
        return f"the socket closed with code {code}{reason}"

    table = TaskTable.of(ctx)
    try:
        record = await table.start_source(
            ctx, kind="monitor", command=url, description=description or f"WebSocket {url}", source=source,
            timeout_s=None if persistent else timeout_ms / 1000, persistent=persistent, on_line=on_line,
        )
    except TaskError as exc:
        return ToolResult.error(str(exc), error_kind="background_start_failed")
    try:
        subprotocol = await asyncio.wait_for(asyncio.wrap_future(opened), OPEN_TIMEOUT_S + 2)
    except Exception as exc:
        await table.wait(record.id, 2.0)
        return ToolResult.error(f"cannot open the WebSocket {url}: {type(exc).__name__}: {exc}",
                                  error_kind="ws_open_failed")
    until = "until stopped with TaskStop" if persistent else f"for up to {timeout_ms} ms"
    text = (f"Monitor started with ID {record.id}, watching {url} {until}. Each message arrives as a "
            f"task_output event and is written to {record.output_file}.")
    return ToolResult.from_text(text, structured={
        "taskId": record.id, "timeoutMs": timeout_ms, "persistent": persistent,
        "output_file": record.output_file, "subprotocol": subprotocol,
    })


__all__ = ["MAX_FRAME", "check_protocols", "check_ws_url", "guard_policy_inputs", "start_ws_monitor"]
