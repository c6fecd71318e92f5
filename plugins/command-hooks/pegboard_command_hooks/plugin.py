"""The plugin's hook implementations: each runs the configured handlers of one event.

The engine (and with it asyncio and subprocess handling) is imported on the first event, so
loading the plugin costs ``pegboard tools`` and ``pegboard --help`` nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pegboard import (
    ConfigSectionRegister,
    HookDecision,
    PermissionDecision,
    ToolCall,
    ToolContext,
    ToolResult,
    active_when,
    hookimpl,
)
from pegboard_command_hooks.config import configured_events, has_handlers  # light: loaded for the config sections

if TYPE_CHECKING:
    from pegboard import Pegboard


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    """``hooks`` and the switches around it, validated and covered by ``config validate``."""
    from pegboard_command_hooks.config import SECTIONS

    for section in SECTIONS:
        register(section)


def _tool_event(
    event: str, call: ToolCall, context: ToolContext, fields: Callable[[], dict[str, Any]] | None = None
) -> Awaitable[HookDecision | None] | None:
    """Run ``event``'s handlers for ``call`` (matcher tested on the tool's name), if any are set;
    ``fields`` adds the event's own payload fields, worked out only when a handler will see them.

    With no handler for the event it answers ``None`` at once, not an awaitable: a call pays
    no coroutine for hooks nobody configured.
    """
    if not has_handlers(context, event):
        return None
    return _run_tool_event(event, call, context, fields)


async def _run_tool_event(
    event: str, call: ToolCall, context: ToolContext, fields: Callable[[], dict[str, Any]] | None
) -> HookDecision | None:
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import tool_payload

    payload = tool_payload(event, call, context, **(fields() if fields is not None else {}))
    return (await run_event(event, context, payload, match_value=call.name, call=call)).decision


@hookimpl
@active_when(lambda pegboard: "PreToolUse" in configured_events(pegboard))
def pre_tool_use(call: ToolCall, context: ToolContext) -> Awaitable[HookDecision | None] | None:
    """``PreToolUse`` handlers: may block, ask, defer, allow or rewrite the input."""
    return _tool_event("PreToolUse", call, context)


@hookimpl
@active_when(lambda pegboard: "PermissionRequest" in configured_events(pegboard))
def permission_request(
    call: ToolCall, decision: PermissionDecision, context: ToolContext
) -> Awaitable[HookDecision | None] | None:
    """``PermissionRequest`` handlers: may answer a call that would ask (allow or deny)."""
    return _tool_event("PermissionRequest", call, context)


@hookimpl
@active_when(lambda pegboard: "PostToolUse" in configured_events(pegboard))
def post_tool_use(call: ToolCall, result: ToolResult, context: ToolContext) -> Awaitable[HookDecision | None] | None:
    """``PostToolUse`` handlers: may add context, replace the output or block (add a reason)."""

    def fields() -> dict[str, Any]:
        from pegboard_command_hooks.protocol import tool_response

        return {"tool_response": tool_response(result)}

    return _tool_event("PostToolUse", call, context, fields)


@hookimpl
@active_when(lambda pegboard: "PostToolUseFailure" in configured_events(pegboard))
def post_tool_use_failure(
    call: ToolCall, error: BaseException, context: ToolContext
) -> Awaitable[HookDecision | None] | None:
    """``PostToolUseFailure`` handlers: may add context to the error result."""

    def fields() -> dict[str, Any]:
        import asyncio

        interrupt = isinstance(error, asyncio.CancelledError | KeyboardInterrupt)
        return {"error": str(error) or type(error).__name__, "is_interrupt": interrupt}

    return _tool_event("PostToolUseFailure", call, context, fields)


async def _session_event(
    event: str, session_id: str, context: ToolContext, key: str, value: str
) -> HookDecision | None:
    """Run ``event``'s handlers for a session (matcher tested on ``value``), if any are set."""
    from pegboard_command_hooks.config import has_handlers
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import common_fields

    if not has_handlers(context, event):
        return None
    context = dataclasses.replace(context, session_id=session_id) if session_id else context
    payload = {**common_fields(event, context), key: value}
    return (await run_event(event, context, payload, match_value=value)).decision


@hookimpl
async def session_start(session_id: str, source: str, context: ToolContext) -> HookDecision | None:
    """``SessionStart`` handlers (matcher tested on ``source``); plain stdout becomes context."""
    return await _session_event("SessionStart", session_id, context, "source", source)


@hookimpl
async def session_end(session_id: str, reason: str, context: ToolContext) -> HookDecision | None:
    """``SessionEnd`` handlers (matcher tested on ``reason``); they cannot block."""
    return await _session_event("SessionEnd", session_id, context, "reason", reason)


@hookimpl
def pegboard_close(pegboard: Pegboard) -> None:
    """Drop the parsed hook config this plugin kept for ``pegboard``."""
    from pegboard_command_hooks.config import PARSED

    pegboard.stash.pop(PARSED, None)
