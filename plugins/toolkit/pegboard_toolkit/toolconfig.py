"""Small helpers every tool has: a raw setting by key path, and a failing result with its kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pegboard import ToolContext, ToolResult


def config_value(ctx: ToolContext, *keys: str) -> Any:
    """The merged config value at ``keys`` (``"tools", "read", "maxOutputTokens"``), or ``None``."""
    node: Any = ctx.config.data if ctx.config is not None else {}
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def tool_failure(message: str, kind: str, **metadata: Any) -> ToolResult:
    """A tool's own failure: reason ``tool_error`` and ``metadata["error_kind"] = kind``."""
    return ToolResult.error(message, error_kind=kind, **metadata)


__all__ = ["config_value", "tool_failure"]
