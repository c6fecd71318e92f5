"""The entry point: a catalog, a config and a selection in, a :class:`PolicyResult` out."""

from __future__ import annotations

from typing import Unpack

from pegboard.core.config import PegboardConfig
from pegboard.core.install_hints import no_tools_hint
from pegboard.core.policy.catalog import PolicyCatalog
from pegboard.core.policy.decide import decide_all, empty_warning
from pegboard.core.policy.plan import PolicySelection, plan_policy
from pegboard.core.policy.result import PolicyResult


def resolve_policy(
    catalog: PolicyCatalog, config: PegboardConfig, **selection: Unpack[PolicySelection]
) -> PolicyResult:
    """Decide, for every tool in ``catalog``, whether this agent on this provider/model sees it.

    ``selection`` is ``provider``, ``model``, ``agent``, ``profile`` and ``subagent`` (each optional).

    ``profile`` overrides ``tools.profile`` (the command line's ``--profile``); it does not
    replace an agent's own allowlist. ``subagent`` names an entry of ``config.subagents``;
    its parent (``agent`` if given, else the chain's ``parent``) supplies the starting set.
    """
    plan = plan_policy(catalog, config, **selection)
    decisions = decide_all(plan)
    enabled = [d.name for d in decisions if d.enabled]
    if decisions and not enabled:
        plan.problems.warn(empty_warning(plan.base, decisions))
    elif not decisions:
        plan.problems.warn(no_tools_hint())
    return PolicyResult(
        enabled=enabled,
        disabled=[d for d in decisions if not d.enabled],
        warnings=list(plan.problems.warnings),
        decisions=decisions,
        call_rules={k: sorted(set(v)) for k, v in plan.call_rules.items() if v},
        errors=list(plan.problems.errors),
    )
