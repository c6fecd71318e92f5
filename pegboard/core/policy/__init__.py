"""Tool policy: which tools an agent sees.

The engine is pure (no I/O, no clock, no environment): it takes a :class:`PolicyCatalog`
describing what is registered and the merged :class:`PegboardConfig`, and returns for every
tool whether it is enabled and which step decided, with a reason a person can read.

Steps, in the order a tool meets them (the first that removes a tool is the one reported):

``provider-policy``
    a provider policy removes the tool on this provider, or the tool exists only on
    other providers (``ProviderPolicy.exclusive``). Nothing is removed when no provider
    is given.
``deny``
    an entry of ``tools.deny``, the agent's ``deny`` or a matching ``byProvider`` entry's
    ``deny`` names the tool. Deny wins over everything that allowed it.
``profile`` / ``allow`` / ``agent``
    the base allowlist: the profile's entries plus ``allow`` and ``alsoAllow``; without a
    restricting profile a non-empty ``allow`` is the allowlist. ``agent`` when an agent's
    own ``tools`` block supplies the allowlist.
``byProvider``
    the ``tools.byProvider`` (and agent ``byProvider``) entry for ``provider/model`` or
    else ``provider``; it can only narrow.
``subagent``
    a subagent's ``tools`` keeps only those; its ``disallowedTools`` removes.
``optional``
    an optional tool is enabled only when an allowlist names it exactly (name or alias),
    never through ``*`` or a group.
``availability``
    the tool passed the policy but cannot run here (missing binary, key, platform).

Matching ignores case, ``_`` and ``-``; ``*`` is the only wildcard and is anchored;
``group:<name>`` expands to the group's members; aliases resolve to their tool.

The package, by job: :mod:`.catalog` (what is registered) and :mod:`.index` (its lookup
tables), :mod:`.compile` (one entry list against the index), :mod:`.allowlists`,
:mod:`.providers` and :mod:`.agents` (config blocks into steps), :mod:`.plan` (all steps of
one selection), :mod:`.decide` (tools against the plan), :mod:`.resolve` (the entry point),
:mod:`.validate` (``pegboard config validate``) and :mod:`.explain` (``--explain`` text).
"""

from __future__ import annotations

from pegboard.core.policy.catalog import PolicyCatalog, PolicyTool, iter_groups
from pegboard.core.policy.compile import parse_tool_list
from pegboard.core.policy.explain import format_explain
from pegboard.core.policy.providers import config_flag, provider_policy_applies, select_by_provider
from pegboard.core.policy.resolve import resolve_policy
from pegboard.core.policy.result import PolicyResult, ToolDecision
from pegboard.core.policy.steps import STEPS, UNKNOWN_MARKER
from pegboard.core.policy.validate import policy_problems, validate_policy_config
from pegboard.core.providers import provider_keys

__all__ = [
    "STEPS",
    "UNKNOWN_MARKER",
    "PolicyCatalog",
    "PolicyResult",
    "PolicyTool",
    "ToolDecision",
    "config_flag",
    "format_explain",
    "iter_groups",
    "parse_tool_list",
    "policy_problems",
    "provider_keys",
    "provider_policy_applies",
    "resolve_policy",
    "select_by_provider",
    "validate_policy_config",
]
