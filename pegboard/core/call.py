"""One tool call as hooks and permission checks see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pegboard.core.tools import Tool


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
