"""One tool call as hooks and permission checks see it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pegboard.core.decisions import PermissionDecision
from pegboard.core.tools import Tool

if TYPE_CHECKING:
    from pegboard.core.session import PermissionUpdate


@dataclass
class ToolCall:
    """A call of ``tool`` with ``input`` (already validated against the tool's model).

    ``requested_name`` is the name the model used (an alias, another case); ``name`` is the
    canonical one. ``input`` may be replaced by hooks that rewrite it.
    """

    tool: Tool
    input: dict[str, Any]
    requested_name: str = ""
    tool_use_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.tool.name


#: The host's answer to an "ask": ``True`` / ``False``, ``None`` (cannot ask), or a
#: ``PermissionUpdate`` ("allow, and remember this rule for the session").
Approver = Callable[
    [ToolCall, PermissionDecision],
    "Awaitable[bool | PermissionUpdate | None] | bool | PermissionUpdate | None",
]
