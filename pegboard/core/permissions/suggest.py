"""The narrowest allow rules that would let one call run, for refusal messages and "always".

A refusal that says "add Bash to permissions.allow" invites a rule far wider than the call
needed. Candidates go from narrow to wide (``Read(//etc/hosts)``, ``Bash(npm run test *)``,
``WebFetch(domain:example.com)``) and each is checked with the real rule engine. A shell
command gets one rule per simple command, split by the same grammar the engine uses, so a
loop or a pipeline is never answered with the bare tool: a command no rule can allow as
written (``echo t$i`` holds an expansion) gets the pattern of its command words
(``Bash(echo *)``) and is marked as not allowed by it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pegboard.core.config import ConfigLayer
from pegboard.core.permissions.families import Families
from pegboard.core.tools import Tool

#: ``allows(rules, call_input)``: whether exactly those rules let that call run
Allows = Callable[[Sequence[str], Mapping[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class RuleSuggestion:
    """Allow rules for one call; ``allows``: the engine lets exactly this call run with them."""

    rules: tuple[str, ...]
    allows: bool

    @property
    def text(self) -> str:
        """The rules as they are quoted in a message: ``Bash(make *)", "Bash(rm *)``."""
        return '", "'.join(self.rules)


def first_allowing(candidates: Iterable[str], data: Mapping[str, Any], allows: Allows) -> RuleSuggestion | None:
    """The first single rule of ``candidates`` (narrowest first) that allows the call."""
    for rule in candidates:
        if allows([rule], data):
            return RuleSuggestion((rule,), True)
    return None


def _allows(rules: Sequence[str], tool: Tool, data: Mapping[str, Any], cwd: Path) -> bool:
    layer = ConfigLayer("code", {"permissions": {"allow": list(rules)}}, root=cwd)
    try:
        from pegboard.core.permissions import PermissionEngine

        decision = PermissionEngine([layer], cwd=cwd, mode="default").check(tool.name, data, tool)
    except Exception:  # a suggestion must never cost the caller its refusal message
        return False
    return decision.decision == "allow" and (decision.rule in rules or len(rules) > 1)


def suggest_allow_rules(tool: Tool, data: Mapping[str, Any], cwd: Path) -> RuleSuggestion:
    """The narrowest rules that allow this call; for a shell command one per simple command,
    with ``allows`` false when no rule narrower than the whole tool can (``rules`` may then be
    empty). Any other tool falls back to its bare family name."""
    head = Families().family(tool.family)
    suggest = getattr(head, "suggest", None)
    if suggest is not None:
        try:
            found = suggest(tool.family, data, cwd, lambda rules, call: _allows(rules, tool, call, cwd))
        except Exception:  # a family's suggestion must never cost the caller its refusal message
            found = None
        if isinstance(found, RuleSuggestion):
            return found
    return RuleSuggestion((tool.family,), _allows([tool.family], tool, data, cwd))


def narrowest_rule(tool: Tool, data: Mapping[str, Any], cwd: Path) -> str:
    """:func:`suggest_allow_rules`'s rules as one quoted text (``", "`` between the rules of
    a compound command); the family name when there is nothing narrower."""
    found = suggest_allow_rules(tool, data, cwd)
    return found.text if found.rules else tool.family
