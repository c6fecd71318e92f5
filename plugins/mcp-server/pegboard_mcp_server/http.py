"""``pegboard serve --http HOST:PORT``: streamable HTTP through the SDK's low-level ``Server``.

The SDK is imported only here, so stdio serving never pays for it. The endpoint is
``http://HOST:PORT/mcp``; both protocol eras the SDK speaks are served.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pegboard_mcp_server.bridge import Bridge, error_result
from pegboard_mcp_server.departures import Departures, departure_of, unless_departed
from pegboard_mcp_server.guard import Access, Guard, host_form
from pegboard_mcp_server.host import ClientLink
from pegboard_mcp_server.limits import HttpLimits
from pegboard_mcp_server.paging import CursorError
from pegboard_mcp_server.rounds import InputRounds, uses_rounds

log = logging.getLogger("pegboard.mcp.serve")


#: Seconds an idle keep-alive connection stays open: longer than clients keep theirs (httpx: 5 s),
#: so a client never sends on a connection the server is closing at that very moment.
KEEP_ALIVE_SECONDS = 75

#: The request ``_meta`` key a stateless (2026-07-28) request uses to name its session.
SESSION_META_KEY = "io.pegboard/session"
MIN_NAMED_SESSION = 16


def client_of(ctx: Any) -> str | None:
    """What identifies one MCP session: its ``Mcp-Session-Id``; for a stateless request the
    session it names in ``_meta["io.pegboard/session"]`` (at least 16 characters: the name is
    its key), bound to the bearer token it came with; else ``None``, a one-call session."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    if isinstance(value, str) and value:
        return f"http:{value}"
    meta = ctx.meta if isinstance(getattr(ctx, "meta", None), dict) else {}
    named = meta.get(SESSION_META_KEY)
    if isinstance(named, str) and len(named) >= MIN_NAMED_SESSION and named.isprintable():
        import hashlib

        auth = headers.get("authorization", "") if headers is not None else ""
        holder = hashlib.sha256(auth.encode("utf-8", "replace")).hexdigest()[:16]
        return f"named:{holder}:{named}"
    return None


def _capabilities(ctx: Any) -> dict[str, Any]:
    caps = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    if caps is None:
        return {}
    dumped: dict[str, Any] = caps.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def link_of(ctx: Any, *, related: bool = True, rounds: InputRounds | None = None) -> ClientLink:
    """What the client of this request can do for the host hooks: elicitation and sampling
    through the SDK session, tied to the request (none on a stateless 2026-07-28 request).
    Its ``standalone`` twin reaches the same client after the request ended (``related=False``:
    through the session's own stream)."""
    import mcp_types as types

    related_id = ctx.request_id if related else None

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        caps = ctx.session.client_capabilities
        if caps is None or caps.elicitation is None:
            return None
        try:
            answer = await ctx.session.elicit_form(message, schema, related_request_id=related_id)
        except Exception as exc:  # no back channel (2026-07-28 requests), client error, ...
            log.info("elicitation failed: %s", exc)
            return None
        dumped: dict[str, Any] = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped

    async def create_message(params: dict[str, Any]) -> dict[str, Any] | None:
        from mcp.shared.message import ServerMessageMetadata

        caps = ctx.session.client_capabilities
        if caps is None or caps.sampling is None:
            return None
        request = types.CreateMessageRequest(params=types.CreateMessageRequestParams.model_validate(params))
        try:
            answer = await ctx.session.send_request(
                request,
                types.CreateMessageResultWithTools,
                metadata=ServerMessageMetadata(related_request_id=related_id),
            )
        except Exception as exc:
            log.info("sampling failed: %s", exc)
            return None
        dumped: dict[str, Any] = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped

    if rounds is not None:  # 2026-07-28: asked through the request's own input rounds
        caps = _capabilities(ctx)
        # Sampling is not carried over rounds: a round runs the call again from the start, and a
        # subagent's or a message's turn runs tools, whose effects must not repeat.
        return ClientLink(caps, rounds.elicit if "elicitation" in caps else _unanswered, None, standalone=None,
                          tools_changed=None)
    standalone = link_of(ctx, related=False) if related else None
    changed = ctx.session.send_tool_list_changed  # outside a request: on the session's own stream
    return ClientLink(_capabilities(ctx), elicit, create_message, standalone=standalone, tools_changed=changed)


def _say_how_to_approve(result: dict[str, Any]) -> dict[str, Any]:
    """A refusal for want of an approver, with the way out in the text the model sees."""
    meta = result.get("_meta", {}).get("pegboard", {}) if isinstance(result.get("_meta"), dict) else {}
    how = meta.get("how_to_approve") if isinstance(meta, dict) and meta.get("reason") == "not_approved" else None
    content = result.get("content")
    if not isinstance(how, str) or not isinstance(content, list) or not content:
        return result
    note = {"type": "text", "text": f"This MCP client did not declare elicitation, so nobody can be asked: {how}."}
    return {**result, "content": [*content, note]}


async def _unanswered(*args: Any) -> None:
    """A client that did not declare the capability: nothing to ask it (the refusal says so)."""
    return None


def rounds_of(ctx: Any, params: Any) -> InputRounds | None:
    """The input rounds of a 2026-07-28 request (``None`` on the handshake-era protocol)."""
    return InputRounds.of(params) if uses_rounds(getattr(ctx, "protocol_version", None)) else None


def build_server(bridge: Bridge, version: str = "0.1.0") -> Any:
    """A low-level SDK ``Server`` whose handlers go through ``bridge``."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    async def list_tools(ctx: Any, params: Any) -> Any:
        try:
            link = link_of(ctx, rounds=InputRounds() if uses_rounds(getattr(ctx, "protocol_version", None)) else None)
            listed = bridge.list_page(params.cursor if params is not None else None, client_of(ctx), link)
        except CursorError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.ListToolsResult.model_validate(listed)

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult.model_validate(bridge.list_prompts(client_of(ctx)))

    async def get_prompt(ctx: Any, params: Any) -> Any:
        from pegboard_mcp_server.prompts import PromptError

        try:
            got = await bridge.get_prompt(params.name, params.arguments, client=client_of(ctx), link=link_of(ctx))
        except PromptError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.GetPromptResult.model_validate(got)

    async def call_tool(ctx: Any, params: Any) -> Any:
        rounds = rounds_of(ctx, params)
        link = link_of(ctx, rounds=rounds)
        elicit = link.elicit
        client = client_of(ctx)
        meta = ctx.meta if isinstance(ctx.meta, dict) else {}
        token = meta.get("progress_token", meta.get("progressToken"))
        progress = None
        if token is not None:

            async def progress(done: float, total: float | None, message: str | None) -> None:
                await ctx.session.send_progress_notification(
                    token, done, total, message, related_request_id=ctx.request_id
                )

        before = bridge.signature(client) if client is not None else None
        async def sample(instruction: str, text: str, max_tokens: int, images: Sequence[Any] = ()) -> str | None:
            caps = ctx.session.client_capabilities
            if caps is None or caps.sampling is None:
                return None
            import warnings

            from pegboard_mcp_server.sampling import sampling_message

            message = types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text=sampling_message(instruction, text))
            )
            pictures = [types.SamplingMessage(role="user", content=types.ImageContent(
                type="image", data=i.data, mime_type=i.mime_type)) for i in images]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    answer = await ctx.session.create_message(
                        [*pictures, message], max_tokens=max_tokens, related_request_id=ctx.request_id
                    )
            except Exception as exc:
                log.info("sampling failed: %s", exc)
                return None
            content = answer.content
            blocks = content if isinstance(content, list) else [content]
            texts = [b.text for b in blocks if isinstance(b, types.TextContent)]
            return "\n".join(texts) if texts else None

        async def log_message(level: str, data: Any, logger: str | None) -> None:
            await ctx.session.send_log_message(level, data, logger, related_request_id=ctx.request_id)

        departure = departure_of(ctx)
        result = await unless_departed(
            departure,
            bridge.call_tool(
                params.name,
                params.arguments,
                elicit,
                client=client,
                progress=progress,
                log_message=log_message,
                sample=sample,
                request_id=ctx.request_id,
                link=link,
            ),
        )
        if result is None:  # nobody is left to read this
            grace = departure.grace if departure is not None else 0
            return types.CallToolResult.model_validate(
                error_result(f"The client left; the call was ended {grace:g} s later (--disconnect-grace).", "timeout")
            )
        asked = rounds.input_required() if rounds is not None else None
        if asked is not None:
            return types.InputRequiredResult.model_validate(asked)
        if rounds is not None and "elicitation" not in _capabilities(ctx):
            result = _say_how_to_approve(result)
        if client is not None and bridge.signature(client) != before:
            try:
                await ctx.session.send_tool_list_changed()
            except Exception as exc:
                log.debug("tools/list_changed not sent: %s", exc)
        return types.CallToolResult.model_validate(result)

    class _Server(Server):
        """Declares ``tools.listChanged``: each session hears when its own tool set changes."""

        def create_initialization_options(self, notification_options: Any = None, *args: Any, **kw: Any) -> Any:
            from mcp.server.lowlevel.server import NotificationOptions

            return super().create_initialization_options(
                notification_options or NotificationOptions(tools_changed=True), *args, **kw
            )

    async def set_level(ctx: Any, params: Any) -> Any:
        return types.EmptyResult()

    import warnings

    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    with warnings.catch_warnings():  # logging is deprecated in 2026-07-28; handshake-era clients use it
        warnings.simplefilter("ignore")
        server = _Server(
            "pegboard",
            version=version,
            title="Pegboard",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_set_logging_level=set_level,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
        )
    # the state of a request's input rounds is sealed: a client cannot forge earlier answers
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience="pegboard"))
    return server


def build_app(bridge: Bridge, access: Access, version: str = "0.1.0", limits: HttpLimits | None = None) -> Any:
    """The ASGI app: the SDK's streamable-HTTP app behind Pegboard's ``Guard``, with session-bound
    calls ended ``limits.disconnect_grace`` seconds after their client left.

    The SDK's own Host/Origin check is off: it only covers some loopback bindings and allows
    ``localhost`` origins on every port; the guard covers every binding.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(bridge, version)
    off = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(host=access.bind, transport_security=off, max_request_body_size=access.max_body)
    grace = (limits or HttpLimits()).disconnect_grace
    return Guard(SessionEnd(Departures(app, grace), bridge), access)


@dataclass
class SessionEnd:
    """ASGI middleware: when the SDK accepts a client's ``DELETE`` of its MCP session, the
    Pegboard session behind it closes at once (not after the idle timeout), and once no
    session is left the memory they held is handed back to the system."""

    app: Any
    bridge: Bridge

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        session_id = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"mcp-session-id"), None)
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message.get("type") == "http.response.start":
                status.append(int(message.get("status", 500)))
            await send(message)

        await self.app(scope, receive, watch)
        if session_id and status and status[0] < 400:
            await self.bridge.forget(f"http:{session_id}")
            if not self.bridge.open_sessions():
                release_memory()


def release_memory() -> None:
    """Collect garbage and ask the C allocator to return free pages (glibc's ``malloc_trim``)."""
    import gc

    gc.collect()
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        if name:
            trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
            if trim is not None:
                trim(0)
    except (OSError, AttributeError) as exc:
        log.debug("malloc_trim unavailable: %s", exc)


def detach_stdin() -> None:
    """Questions belong to the clients: a server started in a terminal must not answer them
    (AskUserQuestion's terminal prompt) or let tools read from that terminal."""
    import os

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def _uvicorn_server() -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        """Writes the queued log lines once it has shut down: on a signal uvicorn raises it
        again afterwards, and the process ends without running ``atexit``."""

        async def shutdown(self, sockets: Any = None) -> None:
            from pegboard_mcp_server.logs import flush

            await super().shutdown(sockets)
            flush()

    return Server


def run_http(
    make_bridge: Callable[[], Bridge], access: Access, *, version: str = "0.1.0", limits: HttpLimits | None = None
) -> int:
    """Serve until stopped. uvicorn logs through the root logger (no handlers of its own, which
    would write to standard error from the event loop), and speaks HTTP/1.1 through a protocol
    that applies ``limits`` to every connection."""
    import uvicorn

    from pegboard_mcp_server.connections import protocol_for

    limits = limits or HttpLimits()
    detach_stdin()
    host, port = access.bind, access.port
    bridge = make_bridge()
    app = build_app(bridge, access, version, limits)
    log.info("streamable HTTP on http://%s:%d/mcp", host_form(host), port)
    from pegboard_mcp_server.workers import inherited_fd

    fd = inherited_fd()  # a worker of ``--workers N``: accept on the supervisor's socket
    where: dict[str, Any] = {"fd": fd} if fd is not None else {"host": host, "port": port}
    config = uvicorn.Config(
        app,
        **where,
        http=protocol_for(limits),
        log_config=None,
        log_level="warning",
        lifespan="on",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    try:
        _uvicorn_server()(config).run()
    finally:  # stops what the Pegboard started (MCP servers it is a client of)
        bridge.pegboard.close()
    return 0
