"""Finding the selected agent's tools block and a subagent's chain of parents in the config."""

from __future__ import annotations

from pegboard.core.config import PegboardConfig, SubagentConfig, ToolPolicyConfig
from pegboard.core.policy.problems import Problems


def find_agent(config: PegboardConfig, agent: str | None) -> tuple[ToolPolicyConfig | None, str]:
    """The agent's own ``tools`` block and its config label (exact id first, then without case)."""
    if not agent:
        return None, ""
    entries = list(config.agents.entries)
    found = next((a for a in entries if a.id == agent), None)
    if found is None:
        found = next((a for a in entries if a.id.casefold() == agent.casefold()), None)
    if found is None:
        return None, ""
    return found.tools, f"agents.list[id={found.id}].tools"


def find_subagent(config: PegboardConfig, name: str) -> tuple[str, SubagentConfig] | None:
    if name in config.subagents:
        return name, config.subagents[name]
    for key, value in config.subagents.items():
        if key.casefold() == name.casefold():
            return key, value
    return None


def subagent_chain(
    config: PegboardConfig, subagent: str, problems: Problems
) -> tuple[list[tuple[str, SubagentConfig]], str | None]:
    """The subagent and its subagent ancestors (outermost first), and the agent at the root."""
    chain: list[tuple[str, SubagentConfig]] = []
    seen: set[str] = set()
    current: str | None = subagent
    while current is not None:
        found = find_subagent(config, current)
        if found is None:
            if not chain:
                valid = ", ".join(sorted(config.subagents, key=str.casefold)) or "(none configured)"
                problems.warn(f"subagents: no subagent {current!r}; valid subagents: {valid}. "
                              "It gets its parent's tools.")
                return [], None
            return list(reversed(chain)), current
        key, sub = found
        if key in seen:
            problems.warn(f"subagents.{key}.parent: the parent chain loops back to {key!r}")
            return list(reversed(chain)), None
        seen.add(key)
        chain.append((key, sub))
        current = sub.parent
    return list(reversed(chain)), None
