"""A config and a selection (provider, model, agent, profile, subagent) compiled into the steps
every tool meets: the base allowlist, the ``byProvider`` narrowings, the deny lists, the
subagent steps and the provider-policy removals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from pegboard.core.config import PegboardConfig, SubagentConfig
from pegboard.core.policy.agents import find_agent, subagent_chain
from pegboard.core.policy.allowlists import Allowlist, DenyList, build_allowlist, build_deny, sets_allowlist
from pegboard.core.policy.catalog import PolicyCatalog
from pegboard.core.policy.compile import CompiledEntries, parse_tool_list
from pegboard.core.policy.index import ToolIndex
from pegboard.core.policy.problems import Problems, unknown_warning
from pegboard.core.policy.providers import provider_removals, select_by_provider
from pegboard.core.policy.steps import STEP_AGENT, STEP_ALLOW, STEP_BY_PROVIDER, STEP_PROFILE


class PolicySelection(TypedDict, total=False):
    """Whose tool set: what :func:`plan_policy` and ``resolve_policy`` are asked about."""

    provider: str | None
    model: str | None
    agent: str | None
    profile: str | None
    subagent: str | None


@dataclass
class SubagentStep:
    """A subagent's ``tools`` (keep only these) and ``disallowedTools`` (remove these)."""

    name: str
    keep: CompiledEntries | None
    drop: CompiledEntries | None


@dataclass
class PolicyPlan:
    """Every step of one resolution, compiled; tools are decided against it."""

    index: ToolIndex
    base: Allowlist
    narrows: list[Allowlist]
    denies: list[DenyList]
    subagent_steps: list[SubagentStep]
    #: ``{tool position: reason}`` from provider policies
    removed: dict[int, str]
    #: ``{tool position: reason}`` from failed availability checks
    unavailable: dict[int, str]
    problems: Problems
    call_rules: dict[str, list[str]] = field(default_factory=dict)


def plan_policy(
    catalog: PolicyCatalog,
    config: PegboardConfig,
    *,
    provider: str | None = None,
    model: str | None = None,
    agent: str | None = None,
    profile: str | None = None,
    subagent: str | None = None,
) -> PolicyPlan:
    """Compile the steps of :func:`~pegboard.core.policy.resolve_policy` for this selection."""
    index = catalog.index()
    problems = Problems()
    call_rules: dict[str, list[str]] = {}

    # subagents first: their chain may name the agent
    chain: list[tuple[str, SubagentConfig]] = []
    if subagent:
        chain, root_agent = subagent_chain(config, subagent, problems)
        if agent is None and root_agent is not None:
            agent = root_agent

    global_block = config.tools
    agent_block, agent_label = find_agent(config, agent)

    # 1. base allowlist: the agent's own block if it sets one, else the global block
    if agent_block is not None and sets_allowlist(agent_block):
        base = build_allowlist(
            index, agent_block, agent_label, problems,
            step_when_profile=STEP_AGENT, step_without_profile=STEP_AGENT,
        )
    else:
        base = build_allowlist(
            index, global_block, "tools", problems,
            step_when_profile=STEP_PROFILE, step_without_profile=STEP_ALLOW,
            profile_override=profile, profile_label="--profile",
        )

    # 2. byProvider: global and agent entries, each narrowing independently
    narrows: list[Allowlist] = []
    denies: list[DenyList] = []
    for block, label in ((global_block, "tools"), (agent_block, agent_label)):
        if block is None:
            continue
        deny = build_deny(index, block.deny, f"{label}.deny", problems)
        if deny:
            denies.append(deny)
        selected = select_by_provider(block.by_provider, provider, model)
        if selected is None:
            continue
        key, entry = selected
        bp_label = f"{label}.byProvider.{key}"
        narrows.append(
            build_allowlist(index, entry, bp_label, problems,
                            step_when_profile=STEP_BY_PROVIDER, step_without_profile=STEP_BY_PROVIDER)
        )
        deny = build_deny(index, entry.deny, f"{bp_label}.deny", problems)
        if deny:
            denies.append(deny)

    # 3. subagent steps
    subagent_steps: list[SubagentStep] = []
    for name, sub in chain:
        keep_entries = parse_tool_list(sub.tools)
        drop_entries = parse_tool_list(sub.disallowed_tools)
        keep = index.compile(keep_entries) if keep_entries else None
        drop = index.compile(drop_entries, "calls") if drop_entries else None
        if keep is not None:
            if keep.unknown:
                problems.warn(unknown_warning(f"subagents.{name}.tools", keep.unknown))
            call_rules.setdefault("allow", []).extend(e for e, _ in keep.specifiers)
        if drop is not None:
            for missing in drop.missing_groups:
                problems.warn(f"subagents.{name}.disallowedTools: no group {missing.split(':', 1)[1]!r}; "
                              f"valid groups: {index.valid_groups()}")
            call_rules.setdefault("deny", []).extend(e for e, _ in drop.specifiers)
        subagent_steps.append(SubagentStep(name, keep, drop))

    # 4. provider policies
    removed = provider_removals(index, provider, model, config)

    return PolicyPlan(index, base, narrows, denies, subagent_steps, removed, catalog.unavailable(), problems,
                      call_rules)
