"""Small helpers every tool has: a raw setting by key path, a failing result with its kind, and
the refusal of a tool that a ``<section>.enabled`` setting turns off (its listing says so
through :class:`pegboard_toolkit.availability.SwitchedOff`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegboard import ToolContext, ToolResult

if TYPE_CHECKING:
    pass


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


def seconds_setting(ctx: ToolContext, tool: str, default: float) -> float | ToolResult:
    """``tools.<tool>.timeout`` in seconds (``default`` when unset), or the ``invalid_config``
    failure naming the key when it is not a positive number."""
    timeout = config_value(ctx, "tools", tool, "timeout")
    if timeout is None:
        return default
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return tool_failure(
            f"config key tools.{tool}.timeout: expected a positive number of seconds, found {timeout!r}",
            "invalid_config",
        )
    return timeout


def directory_failure(root: Path, ctx: ToolContext, not_a_directory: str) -> ToolResult | None:
    """The failure for a ``root`` that is missing (naming the cwd) or not a directory (saying
    ``not_a_directory``), else ``None``: what the directory tools (Glob, LS) check first."""
    if not root.exists():
        return tool_failure(f"Directory does not exist: {root}. The current working directory is {ctx.cwd}.",
                            "path_not_found")
    if not root.is_dir():
        return tool_failure(f"{root} is not a directory; {not_a_directory}", "not_a_directory")
    return None


def turned_off(tool: str, settings: Any, settings_key: str) -> ToolResult | None:
    """The refusal of a call to ``tool`` while ``<settings_key>.enabled`` is false, else ``None``."""
    if settings.enabled:
        return None
    return ToolResult.refusal("unavailable", f"{tool} is turned off by {settings_key}.enabled", error_kind="disabled")


__all__ = [
    "config_value",
    "directory_failure",
    "seconds_setting",
    "tool_failure",
    "turned_off",
]
