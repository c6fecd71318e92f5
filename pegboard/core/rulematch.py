"""Does one permission rule match one call? For plugins that take rules as conditions.

A hook handler's ``if`` (``Bash(git *)``, ``Edit(src/**)``) is a permission rule used as a
filter: it has the syntax and matching of ``permissions.deny``, so it is checked by the same
engine, one rule at a time, instead of a second matcher that would drift from the first.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegboard.core.permissions import PermissionEngine
    from pegboard.core.tools import Tool


@lru_cache(maxsize=256)
def _engine(rule: str, cwd: str) -> PermissionEngine:
    from pegboard.core.config import ConfigLayer
    from pegboard.core.permissions import PermissionEngine

    return PermissionEngine([ConfigLayer("code", {"permissions": {"deny": [rule]}})], cwd=Path(cwd))


def rule_matches(rule: str, tool: Tool | str, tool_input: Mapping[str, Any], cwd: Path | str) -> bool:
    """Whether ``rule`` (``Tool`` or ``Tool(specifier)``) matches a call of ``tool`` with
    ``tool_input`` made in ``cwd``, exactly as the same rule under ``permissions.deny`` would.

    Example::

        rule_matches("Bash(git *)", "Bash", {"command": "git status"}, "/repo")   # True

    A rule that does not parse matches every call of its tool (a deny rule fails closed).
    """
    from pegboard.core.tools import Tool

    name = tool.name if isinstance(tool, Tool) else str(tool)
    found = tool if isinstance(tool, Tool) else None
    return _engine(rule, str(cwd)).check(name, dict(tool_input), found).decision == "deny"


__all__ = ["rule_matches"]
