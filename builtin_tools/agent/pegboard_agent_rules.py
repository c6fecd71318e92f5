"""``Agent(type)`` rules: a word pattern over the subagent type a call asks for.

A call without ``subagent_type`` is the general-purpose subagent. ``Agent(model:opus)`` is a
parameter rule on the ``model`` field (deny and ask lists). Offered through entry-point
group ``pegboard.permission_families``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pegboard_skill_rules import NamedFamily


class AgentFamily(NamedFamily):
    """``Agent(Explore)``: which subagents a call may start."""

    name = "Agent"
    asks = False
    fields = ("description", "prompt", "subagent_type", "model", "run_in_background")
    key = "subagent_type"

    def views(self, data: Mapping[str, Any]) -> list[str]:
        sub = data.get("subagent_type")
        return [sub if isinstance(sub, str) else "general-purpose"]


__all__ = ["AgentFamily"]
