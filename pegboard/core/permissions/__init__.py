"""Permission rules: may this call run (placeholder until the rule engine lands)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pegboard.core.config import ConfigLayer, merge_layers
from pegboard.core.decisions import PermissionDecision
from pegboard.core.tools import Tool

__all__ = ["PermissionEngine"]


class PermissionEngine:
    """Decides allow / ask / deny for one call from the rules of every config layer."""

    def __init__(
        self,
        layers: Sequence[ConfigLayer],
        *,
        cwd: Path,
        additional_dirs: Sequence[Path | str] = (),
        mode: str | None = None,
        home: Path | None = None,
    ) -> None:
        self.cwd = cwd
        self.additional_dirs = tuple(Path(d) for d in additional_dirs)
        perms = merge_layers(layers)[0].get("permissions", {})
        self.mode = mode or perms.get("defaultMode") or "default"
        self.deny = list(perms.get("deny", []))
        self.diagnostics: list[str] = []

    def check(self, tool_name: str, tool_input: Mapping[str, Any], tool: Tool | None = None) -> PermissionDecision:
        name = tool.name if tool else tool_name
        if name in self.deny:
            return PermissionDecision(decision="deny", rule=name, reason=f"denied by rule {name}")
        if self.mode == "bypassPermissions":
            return PermissionDecision(decision="allow", reason="bypassPermissions mode")
        if tool is not None and not tool.requires_permission:
            return PermissionDecision(decision="allow", reason=f"{name} needs no permission")
        return PermissionDecision(decision="ask", reason=f"{name} needs permission")
