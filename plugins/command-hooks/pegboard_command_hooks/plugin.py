"""The plugin's hook implementations: each runs the configured handlers of one event.

The engine (and with it asyncio and subprocess handling) is imported on the first event, so
loading the plugin costs ``pegboard tools`` and ``pegboard --help`` nothing.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pegboard import (
    ConfigSectionRegister,
    HookDecision,
    PermissionDecision,
    ToolCall,
    ToolContext,
    ToolResult,
    hookimpl,
)

if TYPE_CHECKING:
    from pegboard import Pegboard


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    """``hooks`` and the switches around it, validated and covered by ``config validate``."""
    from pegboard_command_hooks.config import SECTIONS

    for section in SECTIONS:
        register(section)


@hookimpl
async def pre_tool_use(call: ToolCall, context: ToolContext) -> HookDecision | None:
    """``PreToolUse`` handlers: may block, ask, defer, allow or rewrite the input."""
    from pegboard_command_hooks.config import has_handlers
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import tool_payload

    if not has_handlers(context, "PreToolUse"):
        return None
    payload = tool_payload("PreToolUse", call, context)
    return (await run_event("PreToolUse", context, payload, match_value=call.name, call=call)).decision


@hookimpl
async def permission_request(call: ToolCall, decision: PermissionDecision, context: ToolContext) -> HookDecision | None:
    """``PermissionRequest`` handlers: may answer a call that would ask (allow or deny)."""
    from pegboard_command_hooks.config import has_handlers
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import tool_payload

    if not has_handlers(context, "PermissionRequest"):
        return None
    payload = tool_payload("PermissionRequest", call, context)
    return (await run_event("PermissionRequest", context, payload, match_value=call.name, call=call)).decision


@hookimpl
async def post_tool_use(call: ToolCall, result: ToolResult, context: ToolContext) -> HookDecision | None:
    """``PostToolUse`` handlers: may add context, replace the output or block (add a reason)."""
    from pegboard_command_hooks.config import has_handlers
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import tool_payload, tool_response

    if not has_handlers(context, "PostToolUse"):
        return None
    payload = tool_payload("PostToolUse", call, context, tool_response=tool_response(result))
    return (await run_event("PostToolUse", context, payload, match_value=call.name, call=call)).decision


@hookimpl
async def post_tool_use_failure(call: ToolCall, error: BaseException, context: ToolContext) -> HookDecision | None:
    """``PostToolUseFailure`` handlers: may add context to the error result."""
    import asyncio

    from pegboard_command_hooks.config import has_handlers
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import tool_payload

    if not has_handlers(context, "PostToolUseFailure"):
        return None
    text = str(error) or type(error).__name__
    payload = tool_payload(
        "PostToolUseFailure",
        call,
        context,
        error=text,
        is_interrupt=isinstance(error, asyncio.CancelledError | KeyboardInterrupt),
    )
    return (await run_event("PostToolUseFailure", context, payload, match_value=call.name, call=call)).decision


def _session_context(context: ToolContext, session_id: str) -> ToolContext:
    return dataclasses.replace(context, session_id=session_id) if session_id else context


@hookimpl
async def session_start(session_id: str, source: str, context: ToolContext) -> HookDecision | None:
    """``SessionStart`` handlers (matcher tested on ``source``); plain stdout becomes context."""
    from pegboard_command_hooks.config import has_handlers
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import common_fields

    if not has_handlers(context, "SessionStart"):
        return None
    context = _session_context(context, session_id)
    payload = {**common_fields("SessionStart", context), "source": source}
    return (await run_event("SessionStart", context, payload, match_value=source)).decision


@hookimpl
async def session_end(session_id: str, reason: str, context: ToolContext) -> HookDecision | None:
    """``SessionEnd`` handlers (matcher tested on ``reason``); they cannot block."""
    from pegboard_command_hooks.config import has_handlers
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import common_fields

    if not has_handlers(context, "SessionEnd"):
        return None
    context = _session_context(context, session_id)
    payload = {**common_fields("SessionEnd", context), "reason": reason}
    return (await run_event("SessionEnd", context, payload, match_value=reason)).decision


@hookimpl
def pegboard_close(pegboard: Pegboard) -> None:
    """Drop the parsed hook config this plugin kept for ``pegboard``."""
    from pegboard_command_hooks.config import PARSED

    pegboard.stash.pop(PARSED, None)
