"""Tool policy: which tools an agent sees (placeholder until the policy engine lands).

The engine is pure: it takes a catalog of what is registered and the merged config, and
returns for every tool whether it is enabled and which step decided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pegboard.core.config import PegboardConfig
from pegboard.core.providers import ProviderPolicy


@dataclass(frozen=True)
class PolicyTool:
    """What the policy needs to know about one registered tool."""

    name: str
    aliases: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    optional: bool = False
    unavailable: str | None = None


@dataclass(frozen=True)
class PolicyCatalog:
    tools: Sequence[PolicyTool]
    groups: Mapping[str, Sequence[str]] = field(default_factory=dict)
    profiles: Mapping[str, Sequence[str] | None] = field(default_factory=dict)
    provider_policies: Sequence[ProviderPolicy] = ()


@dataclass(frozen=True)
class ToolDecision:
    name: str
    enabled: bool
    step: str
    reason: str


@dataclass
class PolicyResult:
    enabled: list[str]
    disabled: list[ToolDecision]
    warnings: list[str]
    decisions: list[ToolDecision]

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": list(self.enabled),
            "disabled": [{"name": d.name, "reason": d.reason} for d in self.disabled],
            "warnings": list(self.warnings),
        }


def resolve_policy(
    catalog: PolicyCatalog,
    config: PegboardConfig,
    *,
    provider: str | None = None,
    model: str | None = None,
    agent: str | None = None,
    profile: str | None = None,
    subagent: str | None = None,
) -> PolicyResult:
    decisions = []
    for t in sorted(catalog.tools, key=lambda t: t.name.casefold()):
        if t.unavailable:
            decisions.append(ToolDecision(t.name, False, "availability", f"unavailable: {t.unavailable}"))
        else:
            decisions.append(ToolDecision(t.name, True, "default", "no policy restricts it"))
    return PolicyResult(
        enabled=[d.name for d in decisions if d.enabled],
        disabled=[d for d in decisions if not d.enabled],
        warnings=[],
        decisions=decisions,
    )
