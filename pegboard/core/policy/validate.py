"""``pegboard config validate``: every policy problem in a config, whatever is selected."""

from __future__ import annotations

from pegboard.core.config import PegboardConfig, ToolPolicyConfig
from pegboard.core.policy.allowlists import build_allowlist, build_deny
from pegboard.core.policy.catalog import PolicyCatalog
from pegboard.core.policy.compile import parse_tool_list
from pegboard.core.policy.problems import Problems, unknown_warning
from pegboard.core.policy.steps import STEP_ALLOW, STEP_BY_PROVIDER, STEP_PROFILE


def validate_policy_config(catalog: PolicyCatalog, config: PegboardConfig) -> list[str]:
    """Every policy problem in ``config``, whatever agent/provider is selected: unknown
    profiles, missing groups, entries that match no tool (for ``pegboard config validate`` and tests)."""
    errors, warnings = policy_problems(catalog, config)
    return [*errors, *warnings]


def policy_problems(catalog: PolicyCatalog, config: PegboardConfig) -> tuple[list[str], list[str]]:
    """:func:`validate_policy_config` split into errors (unknown profiles) and warnings."""
    index = catalog.index()
    problems = Problems()
    blocks: list[tuple[ToolPolicyConfig, str]] = [(config.tools, "tools")]
    for entry in config.agents.entries:
        if entry.tools is not None:
            blocks.append((entry.tools, f"agents.list[id={entry.id}].tools"))
    for block, label in blocks:
        build_allowlist(index, block, label, problems, step_when_profile=STEP_PROFILE,
                        step_without_profile=STEP_ALLOW)
        build_deny(index, block.deny, f"{label}.deny", problems)
        for key, bp in sorted(block.by_provider.items()):
            bp_label = f"{label}.byProvider.{key}"
            build_allowlist(index, bp, bp_label, problems, step_when_profile=STEP_BY_PROVIDER,
                            step_without_profile=STEP_BY_PROVIDER)
            build_deny(index, bp.deny, f"{bp_label}.deny", problems)
    for name, sub in sorted(config.subagents.items()):
        keep = parse_tool_list(sub.tools)
        if keep:
            compiled = index.compile(keep)
            if compiled.unknown:
                problems.warn(unknown_warning(f"subagents.{name}.tools", compiled.unknown))
        if sub.parent and sub.parent not in config.subagents and not any(
            a.id == sub.parent for a in config.agents.entries
        ):
            problems.warn(f"subagents.{name}.parent: {sub.parent!r} is neither an agent in agents.list nor a "
                          "subagent; it is treated as an agent id with the global tools")
    return list(problems.errors), list(problems.warnings)
