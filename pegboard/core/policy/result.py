"""What a resolution returns: one :class:`ToolDecision` per tool, gathered in a :class:`PolicyResult`."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pegboard.core.tools import name_key


class ToolDecision(NamedTuple):
    """One tool's verdict: enabled or not, the step that decided, and why (for people)."""

    name: str
    enabled: bool
    step: str
    reason: str


#: ``ToolDecision`` from a 4-tuple without the Python-level checks of ``_make`` (hot path)
new_decision = functools.partial(tuple.__new__, ToolDecision)


@dataclass
class PolicyResult:
    enabled: list[str]
    disabled: list[ToolDecision]
    warnings: list[str]
    decisions: list[ToolDecision]
    #: call-level rules a subagent's lists carry (``Bash(git *)``): ``{"allow": [...], "deny": [...]}``;
    #: the tool stays visible, the permission layer applies the rule to each call
    call_rules: dict[str, list[str]] = field(default_factory=dict)
    #: settings that failed closed (an unknown profile): the CLI exits non-zero on any
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": list(self.enabled),
            "disabled": [{"name": d.name, "reason": d.reason} for d in self.disabled],
            "warnings": list(self.warnings),
        }

    def explain_json(self) -> list[dict[str, Any]]:
        """Every decision with its step: ``[{"name","enabled","step","reason"}]``."""
        return [
            {"name": d.name, "enabled": d.enabled, "step": d.step, "reason": d.reason}
            for d in self.decisions
        ]

    def decision(self, name: str) -> ToolDecision | None:
        """The decision for ``name`` (a tool name, compared without case, ``_`` and ``-``)."""
        key = name_key(name)
        return next((d for d in self.decisions if name_key(d.name) == key), None)
