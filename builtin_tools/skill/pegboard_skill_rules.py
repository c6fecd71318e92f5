"""``Skill(name)`` rules: a word pattern over the skill's name, with its arguments.

``Skill(deploy)`` is that skill, ``Skill(deploy *)`` that skill with any arguments, ``*``
elsewhere any characters. A deny or ask rule matches the name alone or the name with its
arguments (case-insensitively); an allow rule must match the call as made, arguments
included. :class:`NamedFamily` is the shape other name-pattern families reuse (Agent).
Offered through entry-point group ``pegboard.permission_families``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard.permissions import (
    PRIMARY_FIELDS,
    Allows,
    FamilyCall,
    FamilyTool,
    Outcome,
    Reading,
    Rule,
    RuleSuggestion,
    first_allowing,
    parameter_reading,
    word_pattern_regex,
)


class NamedFamily:
    """A family whose rules name what a call picks by a word pattern; ``views`` gives the
    texts a call is matched as (the last one is what an allow rule must match)."""

    name = ""
    asks = True
    fields: tuple[str, ...] = ()
    key = ""
    tools: Mapping[str, FamilyTool] = {}
    file_rules: Literal["read", "write"] | None = None
    borrows: Mapping[str, tuple[str, ...]] = {}

    def views(self, data: Mapping[str, Any]) -> list[str]:
        raise NotImplementedError

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        param = rule.param()
        if param and fields is not None and param[0] in fields:
            return parameter_reading(rule, fields, note, primary=PRIMARY_FIELDS)
        return [("own", rule.specifier)]

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        flags = re.IGNORECASE if rule_list != "allow" else 0
        return [(r, re.compile(word_pattern_regex(spec), flags)) for r, spec in own]

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        views = self.views(call.data)
        for lst in ("deny", "ask", "allow"):
            for r, rx in call.rules[lst]:
                if (lst == "allow" and all(rx.match(v) for v in views[-1:])) or (
                    lst != "allow" and any(rx.match(v) for v in views)
                ):
                    out.note(lst, r, f"{call.name} {views[-1]!r} matches {r.text}")
        if not call.context.requires_permission(call.name, call.tool):
            out.default_ok = f"{call.name} needs no permission"
        out.unapproved = f"{call.name} {views[-1]!r} needs permission"
        return out

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """``Family(name)`` for the name the call gives."""
        value = data.get(self.key)
        return first_allowing([f"{family}({value})"] if isinstance(value, str) and value else [], data, allows)


class SkillFamily(NamedFamily):
    """``Skill(name)`` and ``Skill(name *)``."""

    name = "Skill"
    asks = True
    fields = ("skill", "args")
    key = "skill"

    def views(self, data: Mapping[str, Any]) -> list[str]:
        skill = data.get("skill") if isinstance(data.get("skill"), str) else data.get("name")
        skill = skill.lstrip("/") if isinstance(skill, str) else ""
        args = data.get("args")
        argstr = " ".join(args.split()) if isinstance(args, str) else ""
        return [skill, f"{skill} {argstr}".strip()]


__all__ = ["NamedFamily", "SkillFamily"]
