"""Between a ``Pegboard`` and the MCP wire: tool definitions out, calls in, results back.

Everything here works on plain JSON-ready dicts so that the lean stdio loop never has to
import the SDK; the HTTP transport validates the same dicts into SDK models.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pegboard import ImageBlock, Pegboard, PermissionDecision, TextBlock, ToolCall, ToolResult
from pegboard_mcp_server.paging import DEFAULT_PAGE_SIZE, page

log = logging.getLogger("pegboard.mcp.serve")

# ``elicit(message, requested_schema) -> {"action": ..., "content": {...}}`` or None when the
# client cannot be asked.
Elicit = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Run this tool call once",
            "default": True,
        }
    },
    "required": ["approve"],
}
MAX_PREVIEW_CHARS = 600


@dataclass
class Selection:
    """Whose tool set is served: the same choices ``pegboard tools`` takes."""

    agent: str | None = None
    provider: str | None = None
    model: str | None = None
    profile: str | None = None
    mode: str | None = None
    cwd: Path | None = None

    def policy(self) -> dict[str, Any]:
        return {"agent": self.agent, "provider": self.provider, "model": self.model, "profile": self.profile}


def approval_message(call: ToolCall, decision: PermissionDecision) -> str:
    """What the user is asked: the tool, its input (shortened) and the rule that asked."""
    try:
        shown = json.dumps(call.input, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        shown = repr(call.input)
    if len(shown) > MAX_PREVIEW_CHARS:
        shown = shown[:MAX_PREVIEW_CHARS] + f"... ({len(shown):,} characters)"
    why = f" Rule {decision.rule!r}" + (f" in {decision.source}" if decision.source else "") if decision.rule else ""
    reason = f" ({decision.reason})" if decision.reason else ""
    return f"Allow {call.name} to run with {shown}?{why}{reason}".strip()


def elicitation_approver(elicit: Elicit) -> Callable[[ToolCall, PermissionDecision], Awaitable[bool | None]]:
    """An approver for ``Pegboard.call`` that asks the MCP client's user through elicitation."""

    async def approve(call: ToolCall, decision: PermissionDecision) -> bool | None:
        answer = await elicit(approval_message(call, decision), APPROVAL_SCHEMA)
        if answer is None:
            return None
        if answer.get("action") != "accept":
            return False
        content = answer.get("content") or {}
        return content.get("approve", True) is not False

    return approve


def result_to_mcp(result: ToolResult) -> dict[str, Any]:
    """A ``ToolResult`` as an MCP ``CallToolResult``: text and image content, structured content, isError."""
    content: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            content.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
    out: dict[str, Any] = {"content": content, "isError": bool(result.is_error)}
    if result.structured is not None and not result.is_error:
        out["structuredContent"] = result.structured
    meta: dict[str, Any] = {}
    if result.reason:
        meta["reason"] = result.reason
    for key in ("additional_context", "system_messages", "hook_notices", "reference"):
        if key in result.metadata:
            meta[key] = result.metadata[key]
    if meta:
        out["_meta"] = {"pegboard": _jsonable(meta)}
    return out


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)


def error_result(message: str, reason: str = "tool_error") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True, "_meta": {"pegboard": {"reason": reason}}}


@dataclass
class Bridge:
    """One served tool set: lists definitions and runs calls through ``Pegboard.call``."""

    pegboard: Pegboard
    selection: Selection = field(default_factory=Selection)
    page_size: int = DEFAULT_PAGE_SIZE

    def list_page(self, cursor: str | None) -> dict[str, Any]:
        """One page of ``tools/list``; raises ``CursorError`` for a cursor that is not (or no longer) valid."""
        return page(self.list_tools(), cursor, self.page_size)

    def list_tools(self) -> list[dict[str, Any]]:
        """Tool definitions in MCP form, for the visible tools of the selection.

        Deferred tools stay out of the list until a search loads them (``Pegboard.deferred``);
        their names are appended to the description of the tool that loads them.
        """
        sel = self.selection.policy()
        definitions: list[dict[str, Any]] = self.pegboard.schema("mcp", **sel)
        enabled = self.pegboard.enabled_tools(**sel)
        pending = self.pegboard.deferred.pending(enabled)
        loaders = {t.name for t in enabled if t.loads_deferred}
        if not pending or not loaders:
            return definitions
        note = "Deferred tools (search to load their definitions): " + ", ".join(pending)
        return [
            {**d, "description": f"{d['description']}\n\n{note}"} if d["name"] in loaders else d for d in definitions
        ]

    async def call_tool(self, name: Any, arguments: Any, elicit: Elicit | None = None) -> dict[str, Any]:
        """Run one call through the whole pipeline; always returns a ``CallToolResult`` dict."""
        if not isinstance(name, str) or not name:
            return error_result("tools/call needs a tool name (params.name)", "invalid_input")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return error_result(
                f"Arguments for {name} must be a JSON object, got {type(arguments).__name__}", "invalid_input"
            )
        sel = self.selection
        approver = elicitation_approver(elicit) if elicit is not None else None
        try:
            result = await self.pegboard.call(
                name, arguments, cwd=sel.cwd, mode=sel.mode, approver=approver, **sel.policy()
            )
        except Exception as exc:  # Pegboard.call does not raise; this is a last line of defence
            log.exception("call of %s failed", name)
            return error_result(f"Pegboard failed on this call: {type(exc).__name__}: {exc}")
        return result_to_mcp(result)

    def refresh(self) -> None:
        """Let dynamic tool sources (MCP servers) bring the registry up to date."""
        sync = getattr(self.pegboard, "_sync_tool_sources", None)
        if sync is not None and getattr(self.pegboard, "_tool_sources", None):
            sync()

    def tool_names(self) -> Sequence[str]:
        return [t["name"] for t in self.list_tools()]
