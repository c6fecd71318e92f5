"""``pegboard serve --http HOST:PORT``: streamable HTTP through the SDK's low-level ``Server``.

The SDK is imported only here, so stdio serving never pays for it. The endpoint is
``http://HOST:PORT/mcp``; both protocol eras the SDK speaks are served.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pegboard_mcp_server.bridge import Bridge

log = logging.getLogger("pegboard.mcp.serve")


def build_server(bridge: Bridge, version: str = "0.1.0") -> Any:
    """A low-level SDK ``Server`` whose handlers go through ``bridge``."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult.model_validate({"tools": bridge.list_tools()})

    async def call_tool(ctx: Any, params: Any) -> Any:
        async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
            caps = ctx.session.client_capabilities
            if caps is None or caps.elicitation is None:
                return None
            try:
                answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
            except Exception as exc:  # no back channel (2026-07-28 requests), client error, ...
                log.info("elicitation failed: %s", exc)
                return None
            dumped: dict[str, Any] = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
            return dumped

        result = await bridge.call_tool(params.name, params.arguments, elicit)
        return types.CallToolResult.model_validate(result)

    return Server(
        "pegboard",
        version=version,
        title="Pegboard",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_http(make_bridge: Callable[[], Bridge], *, host: str, port: int, version: str = "0.1.0") -> int:
    import uvicorn

    bridge = make_bridge()
    server = build_server(bridge, version)
    app = server.streamable_http_app(host=host)
    log.warning("pegboard serve: streamable HTTP on http://%s:%d/mcp", host, port)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    uvicorn.Server(config).run()
    return 0
