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
def _engine(rule: str, cwd: str, tool: _Declared | None) -> PermissionEngine:
    from pegboard.core.config import ConfigLayer
    from pegboard.core.permissions import PermissionEngine

    layer = ConfigLayer("code", {"permissions": {"deny": [rule]}})
    return PermissionEngine([layer], cwd=Path(cwd), tools=tool)


class _Declared:
    """The one tool a rule is judged against, as the engine's tool lookup (by any of its
    names); hashable by what reading a rule about it depends on, for the cache."""

    def __init__(self, tool: Tool) -> None:
        from pegboard.core.tools import name_key

        self.tool = tool
        self.names = frozenset(name_key(n) for n in (tool.name, *tool.aliases))
        self.key = (tool.name, tuple(tool.aliases), tool.family, tool.requires_permission)

    def __call__(self, name: str) -> Tool | None:
        from pegboard.core.tools import name_key

        return self.tool if name_key(name) in self.names else None

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Declared) and other.key == self.key


def rule_matches(rule: str, tool: Tool | str, tool_input: Mapping[str, Any], cwd: Path | str) -> bool:
    """Whether ``rule`` (``Tool`` or ``Tool(specifier)``) matches a call of ``tool`` with
    ``tool_input`` made in ``cwd``, exactly as the same rule under ``permissions.deny`` would.

    Example::

        rule_matches("Bash(git *)", "Bash", {"command": "git status"}, "/repo")   # True

    Pass the ``Tool`` (``pb.tool(name)``) when you have it: its declared rule family is what
    makes ``Read(src/**)`` cover ``Grep``. A bare name is judged as a tool of its own family
    (or as the tool still to come the families table names). A rule that does not parse
    matches every call of its tool (a deny rule fails closed).
    """
    from pegboard.core.tools import Tool

    name = tool.name if isinstance(tool, Tool) else str(tool)
    found = tool if isinstance(tool, Tool) else None
    engine = _engine(rule, str(cwd), _Declared(found) if found is not None else None)
    return engine.check(name, dict(tool_input), found).decision == "deny"


__all__ = ["rule_matches"]
