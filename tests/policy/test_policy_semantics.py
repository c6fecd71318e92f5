"""The policy semantics of issue 3, one behaviour per test."""

from __future__ import annotations

from typing import Any

from pegboard.core.policy import (
    UNKNOWN_MARKER,
    PolicyResult,
    PolicyTool,
    format_explain,
    parse_tool_list,
    provider_keys,
    resolve_policy,
    validate_policy_config,
)
from pegboard.core.providers import ProviderPolicy
from tests.policy.helpers_policy import catalog, config

TOOLS = ["Read", "Write", "Edit", "Bash", "Grep", "WebFetch", "WebSearch", "SessionStatus", "message"]
GROUPS = {"fs": ["Read", "Write", "Edit"], "runtime": ["exec", "process"], "web": ["WebFetch", "WebSearch"]}
PROFILES: dict[str, Any] = {
    "minimal": ["session_status"],
    "coding": ["group:fs", "group:runtime", "image"],
    "messaging": ["group:messaging", "session_status"],
    "full": None,
}


def cat(**kwargs: Any) -> Any:
    tools = kwargs.pop("tools", None) or [
        PolicyTool(n, aliases=("exec",) if n == "Bash" else ()) for n in TOOLS
    ]
    return catalog(tools, kwargs.pop("groups", GROUPS), kwargs.pop("profiles", PROFILES), **kwargs)


def run(cfg: dict[str, Any], **kwargs: Any) -> PolicyResult:
    return resolve_policy(kwargs.pop("catalog", None) or cat(), config(cfg), **kwargs)


def enabled(cfg: dict[str, Any], **kwargs: Any) -> set[str]:
    return set(run(cfg, **kwargs).enabled)


def reason(result: PolicyResult, name: str) -> str:
    d = result.decision(name)
    assert d is not None
    return d.reason


def step(result: PolicyResult, name: str) -> str:
    d = result.decision(name)
    assert d is not None
    return d.step


# --------------------------------------------------------------------------- 1. profile


def test_no_profile_and_full_restrict_nothing() -> None:
    assert enabled({}) == set(TOOLS)
    assert enabled({"tools": {"profile": "full"}}) == set(TOOLS)
    assert run({}).warnings == []


def test_full_is_known_even_when_no_plugin_registers_it() -> None:
    result = run({"tools": {"profile": "full"}}, catalog=cat(profiles={}))
    assert set(result.enabled) == set(TOOLS) and result.warnings == []


def test_unknown_profile_is_an_error_with_valid_names_and_enables_nothing() -> None:
    result = run({"tools": {"profile": "codnig"}})
    assert result.enabled == []
    (error,) = result.errors
    assert "tools.profile" in error and "'codnig'" in error
    assert "did you mean 'coding'" in error
    assert "coding, full, messaging, minimal" in error
    assert all("unknown profile 'codnig'" in d.reason for d in result.disabled)
    assert any("no tool is enabled" in w for w in result.warnings)


def test_unknown_profile_still_lets_explicit_allow_entries_through() -> None:
    result = run({"tools": {"profile": "codnig", "alsoAllow": ["Read"]}})
    assert result.enabled == ["Read"] and result.errors


def test_profile_is_the_base_allowlist_groups_and_aliases_resolve() -> None:
    result = run({"tools": {"profile": "coding"}})
    assert set(result.enabled) == {"Read", "Write", "Edit", "Bash"}
    assert step(result, "Read") == "profile"
    assert step(result, "Grep") == "profile"
    assert "not in the allowlist (profile 'coding')" in reason(result, "Grep")


def test_profile_entries_for_missing_tools_never_warn() -> None:
    assert run({"tools": {"profile": "coding"}}).warnings == []  # 'image', 'process' are not installed


def test_profile_kwarg_overrides_tools_profile() -> None:
    result = run({"tools": {"profile": "coding"}}, profile="minimal")
    assert result.enabled == ["SessionStatus"]
    result = run({"tools": {"profile": "coding"}}, profile="nope")
    assert result.enabled == []
    assert any("--profile" in e and "'nope'" in e for e in result.errors)


def test_profile_names_are_case_insensitive() -> None:
    assert enabled({"tools": {"profile": "MINIMAL"}}) == {"SessionStatus"}


# --------------------------------------------------------------------------- 2. allow / alsoAllow


def test_allow_adds_to_the_profile() -> None:
    result = run({"tools": {"profile": "minimal", "allow": ["grep"], "alsoAllow": ["web_fetch"]}})
    assert set(result.enabled) == {"SessionStatus", "Grep", "WebFetch"}
    assert step(result, "Grep") == "allow"
    assert step(result, "SessionStatus") == "profile"


def test_allow_without_profile_is_the_allowlist() -> None:
    result = run({"tools": {"allow": ["read", "group:web"]}})
    assert set(result.enabled) == {"Read", "WebFetch", "WebSearch"}
    assert step(result, "Edit") == "allow"


def test_also_allow_alone_restricts_nothing() -> None:
    assert enabled({"tools": {"alsoAllow": ["read"]}}) == set(TOOLS)


def test_empty_or_blank_allow_restricts_nothing() -> None:
    assert enabled({"tools": {"allow": []}}) == set(TOOLS)
    assert enabled({"tools": {"allow": ["", "  "]}}) == set(TOOLS)


def test_all_unknown_allowlist_is_ignored_with_a_warning_naming_the_entries() -> None:
    result = run({"tools": {"allow": ["slack_post", "group:nope"]}})
    assert set(result.enabled) == set(TOOLS)
    (warning,) = result.warnings
    assert UNKNOWN_MARKER in warning and "'slack_post'" in warning and "'group:nope'" in warning
    assert "ignored" in warning
    assert "valid groups: group:fs, group:runtime, group:web" in warning


def test_mixed_allowlist_applies_known_entries_and_warns_about_the_rest() -> None:
    result = run({"tools": {"allow": ["read", "raed_all"]}})
    assert result.enabled == ["Read"]
    (warning,) = result.warnings
    assert "'raed_all'" in warning and "ignored" not in warning


def test_unknown_also_allow_entry_warns_with_a_suggestion() -> None:
    result = run({"tools": {"alsoAllow": ["web_fetchh"]}})
    assert any("did you mean 'WebFetch'" in w for w in result.warnings)


def test_group_that_exists_but_has_no_installed_member_is_unknown() -> None:
    result = run({"tools": {"allow": ["group:runtime", "read"]}}, catalog=cat(groups={"runtime": ["process"]}))
    assert result.enabled == ["Read"]
    assert any("'group:runtime'" in w and "no installed member" in w for w in result.warnings)


# --------------------------------------------------------------------------- 3. byProvider


def test_model_key_beats_provider_key_and_they_never_merge() -> None:
    cfg = {"tools": {"byProvider": {"openai": {"deny": ["read"]}, "openai/gpt-5": {"deny": ["edit"]}}}}
    assert enabled(cfg, provider="openai", model="gpt-5") == set(TOOLS) - {"Edit"}
    assert enabled(cfg, provider="openai", model="gpt-4") == set(TOOLS) - {"Read"}
    assert enabled(cfg) == set(TOOLS)


def test_model_id_with_a_slash_is_used_as_is() -> None:
    cfg = {"tools": {"byProvider": {"anthropic/claude-x": {"deny": ["read"]}, "openrouter": {"deny": ["edit"]}}}}
    assert enabled(cfg, provider="openrouter", model="anthropic/claude-x") == set(TOOLS) - {"Read"}
    assert provider_keys("OpenRouter", "Anthropic/Claude-X") == ["anthropic/claude-x", "openrouter"]
    assert provider_keys(None, "gpt-5") == []


def test_by_provider_keys_are_case_insensitive() -> None:
    cfg = {"tools": {"byProvider": {"OpenAI/GPT-5": {"deny": ["read"]}}}}
    assert "Read" not in enabled(cfg, provider="openai", model="gpt-5")


def test_by_provider_can_only_narrow() -> None:
    cfg = {"tools": {"profile": "minimal", "byProvider": {"openai": {"allow": ["read", "session_status"]}}}}
    result = run(cfg, provider="openai")
    assert result.enabled == ["SessionStatus"]
    assert step(result, "Read") == "profile"


def test_by_provider_profile_intersects_with_the_base_profile() -> None:
    cfg = {"tools": {"profile": "coding", "byProvider": {"google": {"profile": "minimal"}}}}
    result = run(cfg, provider="google")
    assert result.enabled == []
    assert step(result, "Read") == "byProvider"
    assert "tools.byProvider.google" in reason(result, "Read")


def test_by_provider_allow_and_deny() -> None:
    cfg = {"tools": {"allow": ["group:fs", "bash"], "byProvider": {"openai/gpt-5.2": {"allow": ["group:fs"],
                                                                                     "deny": ["write"]}}}}
    result = run(cfg, provider="openai", model="gpt-5.2")
    assert set(result.enabled) == {"Read", "Edit"}
    assert step(result, "Bash") == "byProvider"
    assert step(result, "Write") == "deny"


def test_by_provider_all_unknown_allow_is_ignored_with_warning() -> None:
    cfg = {"tools": {"byProvider": {"openai": {"allow": ["nothing_here"]}}}}
    result = run(cfg, provider="openai")
    assert set(result.enabled) == set(TOOLS)
    assert any("tools.byProvider.openai.allow" in w and "'nothing_here'" in w for w in result.warnings)


def test_by_provider_unknown_profile_is_an_error_and_narrows_to_nothing() -> None:
    result = run({"tools": {"byProvider": {"openai": {"profile": "tiny"}}}}, provider="openai")
    assert any("tools.byProvider.openai.profile" in e and "'tiny'" in e for e in result.errors)
    assert result.enabled == []


# --------------------------------------------------------------------------- 4. deny


def test_deny_wins_over_every_allow() -> None:
    cfg = {"tools": {"profile": "coding", "allow": ["read"], "alsoAllow": ["read"], "deny": ["READ"]}}
    result = run(cfg)
    assert "Read" not in result.enabled
    d = result.decision("Read")
    assert d is not None and d.step == "deny" and "tools.deny" in d.reason and "'READ'" in d.reason


def test_deny_globs_groups_and_aliases() -> None:
    assert enabled({"tools": {"deny": ["web*"]}}) == set(TOOLS) - {"WebFetch", "WebSearch"}
    assert enabled({"tools": {"deny": ["group:fs"]}}) == set(TOOLS) - {"Read", "Write", "Edit"}
    assert enabled({"tools": {"deny": ["exec"]}}) == set(TOOLS) - {"Bash"}
    assert enabled({"tools": {"deny": ["*"]}}) == set()


def test_deny_of_a_missing_group_warns_with_valid_groups() -> None:
    result = run({"tools": {"deny": ["group:runtim"]}})
    assert any("tools.deny" in w and "'runtim'" in w and "group:runtime" in w for w in result.warnings)


def test_deny_of_an_uninstalled_tool_is_not_a_warning() -> None:
    assert run({"tools": {"deny": ["browser"]}}).warnings == []


def test_deny_with_a_specifier_removes_the_whole_tool_and_warns() -> None:
    result = run({"tools": {"deny": ["Bash(rm *)"]}})
    assert "Bash" not in result.enabled
    assert any("permissions.deny" in w for w in result.warnings)


# --------------------------------------------------------------------------- 5. agents


def test_agent_block_with_an_allowlist_replaces_the_global_one() -> None:
    cfg = {"tools": {"profile": "coding", "deny": ["write"]},
           "agents": {"list": [{"id": "support", "tools": {"profile": "messaging", "allow": ["grep"]}}]}}
    result = run(cfg, agent="support")
    assert set(result.enabled) == {"SessionStatus", "Grep"}
    assert step(result, "Read") == "agent"
    assert step(result, "Grep") == "agent"
    assert run(cfg, agent="other").enabled == ["Bash", "Edit", "Read"]


def test_agent_block_without_an_allowlist_inherits_and_deny_lists_accumulate() -> None:
    cfg = {"tools": {"allow": ["read", "write", "edit"], "deny": ["edit"]},
           "agents": {"list": [{"id": "w", "tools": {"deny": ["write"]}}]}}
    assert enabled(cfg, agent="w") == {"Read"}


def test_agent_also_allow_counts_as_its_own_allowlist() -> None:
    # issue 3 rule 5: an agent block setting alsoAllow takes its allowlist from its own block,
    # and alsoAllow alone restricts nothing
    cfg = {"tools": {"profile": "minimal"}, "agents": {"list": [{"id": "a", "tools": {"alsoAllow": ["read"]}}]}}
    assert enabled(cfg, agent="a") == set(TOOLS)
    cfg = {"tools": {"profile": "minimal"},
           "agents": {"list": [{"id": "a", "tools": {"profile": "minimal", "alsoAllow": ["read"]}}]}}
    assert enabled(cfg, agent="a") == {"SessionStatus", "Read"}


def test_agent_by_provider_and_global_by_provider_both_narrow() -> None:
    cfg = {"tools": {"byProvider": {"openai": {"allow": ["read", "edit", "grep"]}}},
           "agents": {"list": [{"id": "a", "tools": {"byProvider": {"openai": {"allow": ["read", "bash"]}}}}]}}
    assert enabled(cfg, agent="a", provider="openai") == {"Read"}


def test_profile_kwarg_does_not_replace_an_agents_own_allowlist() -> None:
    cfg = {"agents": {"list": [{"id": "a", "tools": {"allow": ["read"]}}]}}
    assert enabled(cfg, agent="a", profile="full") == {"Read"}


# --------------------------------------------------------------------------- 6. subagents


def sub(**fields: Any) -> dict[str, Any]:
    return {"tools": {"allow": ["read", "edit", "grep", "bash"]}, "subagents": {"s": fields}}


def test_subagent_with_neither_field_gets_the_parent_set() -> None:
    assert enabled(sub(), subagent="s") == {"Read", "Edit", "Grep", "Bash"}


def test_subagent_tools_only_gets_exactly_those_within_the_parent() -> None:
    result = run(sub(tools=["Read", "Grep", "WebFetch"]), subagent="s")
    assert set(result.enabled) == {"Read", "Grep"}
    assert step(result, "Edit") == "subagent"
    assert step(result, "WebFetch") == "allow"  # the parent never had it


def test_subagent_disallowed_only_removes_from_the_parent() -> None:
    assert enabled(sub(disallowedTools=["Bash"]), subagent="s") == {"Read", "Edit", "Grep"}


def test_subagent_both_fields_disallowed_wins() -> None:
    result = run(sub(tools="Read, Edit", disallowedTools="Edit"), subagent="s")
    assert result.enabled == ["Read"]
    assert "disallowedTools" in reason(result, "Edit")


def test_subagent_lists_take_permission_rule_grammar() -> None:
    result = run(sub(tools="Read, Bash(git log *, git diff *)", disallowedTools=["Bash(rm *)"]), subagent="s")
    assert set(result.enabled) == {"Read", "Bash"}
    assert result.call_rules == {"allow": ["Bash(git log *, git diff *)"], "deny": ["Bash(rm *)"]}
    assert parse_tool_list("Read, Bash(a, b) ,Grep") == ["Read", "Bash(a, b)", "Grep"]


def test_subagent_parent_chain_and_root_agent() -> None:
    cfg = {"tools": {"profile": "full"},
           "agents": {"list": [{"id": "coder", "tools": {"allow": ["read", "edit", "grep"]}}]},
           "subagents": {"outer": {"parent": "coder", "disallowedTools": ["edit"]},
                         "inner": {"parent": "outer", "tools": ["read", "edit"]}}}
    assert enabled(cfg, subagent="inner") == {"Read"}
    assert enabled(cfg, subagent="outer") == {"Read", "Grep"}


def test_unknown_subagent_warns_and_keeps_parent_set() -> None:
    result = run(sub(), subagent="nobody")
    assert set(result.enabled) == {"Read", "Edit", "Grep", "Bash"}
    assert any("no subagent 'nobody'" in w for w in result.warnings)


# --------------------------------------------------------------------------- 7. matching


def test_matching_ignores_case_and_separators() -> None:
    assert enabled({"tools": {"allow": ["WEB-FETCH", "session_status", "r_e_a_d"]}}) == {
        "WebFetch", "SessionStatus", "Read"}


def test_star_is_anchored_and_the_only_wildcard() -> None:
    assert enabled({"tools": {"allow": ["*fetch"]}}) == {"WebFetch"}
    assert enabled({"tools": {"allow": ["fetch*", "read"]}}) == {"Read"}
    assert enabled({"tools": {"allow": ["re?d", "read"]}}) == {"Read"}
    assert enabled({"tools": {"allow": ["w*b*"]}}) == {"WebFetch", "WebSearch"}


def test_aliases_resolve_but_not_inside_globs() -> None:
    assert enabled({"tools": {"allow": ["exec"]}}) == {"Bash"}
    result = run({"tools": {"allow": ["exe*", "read"]}})
    assert result.enabled == ["Read"]


def test_nested_groups_and_groups_declared_by_tools() -> None:
    tools = [PolicyTool("Read", groups=("pegboard",)), PolicyTool("Grep", groups=("pegboard", "search")),
             PolicyTool("Other")]
    c = catalog(tools, {"all": ["group:pegboard", "Other"], "pegboard": []}, {})
    assert set(resolve_policy(c, config({"tools": {"allow": ["group:all"]}})).enabled) == {"Read", "Grep", "Other"}
    assert resolve_policy(c, config({"tools": {"allow": ["group:SEARCH"]}})).enabled == ["Grep"]


def test_optional_tools_need_an_exact_name() -> None:
    tools = [PolicyTool("Read", groups=("fs",)), PolicyTool("Lobster", aliases=("workflow",), optional=True,
                                                              groups=("fs",))]
    c = catalog(tools, {}, {"coding": ["group:fs"]})
    assert resolve_policy(c, config({})).enabled == ["Read"]
    assert resolve_policy(c, config({"tools": {"allow": ["*"]}})).enabled == ["Read"]
    r = resolve_policy(c, config({"tools": {"profile": "coding"}}))
    assert r.enabled == ["Read"] and step(r, "Lobster") == "optional"
    assert resolve_policy(c, config({"tools": {"alsoAllow": ["lobster"]}})).enabled == ["Lobster", "Read"]
    assert resolve_policy(c, config({"tools": {"allow": ["workflow"]}})).enabled == ["Lobster"]
    r = resolve_policy(c, config({"tools": {"profile": "coding", "alsoAllow": ["lobster"]}}))
    assert r.enabled == ["Lobster", "Read"]
    # deny removes optional tools through groups and globs too
    r = resolve_policy(c, config({"tools": {"alsoAllow": ["lobster"], "deny": ["group:fs"]}}))
    assert r.enabled == []
    # byProvider cannot turn an optional tool on
    r = resolve_policy(c, config({"tools": {"byProvider": {"x": {"allow": ["lobster", "read"]}}}}), provider="x")
    assert r.enabled == ["Read"]


# --------------------------------------------------------------------------- 8. availability


def test_unavailable_tools_are_listed_with_the_reason() -> None:
    c = catalog([PolicyTool("Read"), PolicyTool("Grep", unavailable="ripgrep (rg) not found on PATH")])
    result = resolve_policy(c, config({}))
    assert result.enabled == ["Read"]
    assert result.to_json()["disabled"] == [{"name": "Grep", "reason": "unavailable: ripgrep (rg) not found on PATH"}]
    assert step(result, "Grep") == "availability"
    # a tool the policy removes is reported by the policy step
    assert step(resolve_policy(c, config({"tools": {"deny": ["grep"]}})), "Grep") == "deny"


def test_catalogs_share_tables_but_not_availability() -> None:
    first = catalog([PolicyTool("Read"), PolicyTool("Grep", unavailable="no rg")])
    second = catalog([PolicyTool("Read"), PolicyTool("Grep")])
    assert first.index() is second.index()  # same structure: the tables are shared
    assert resolve_policy(first, config({})).enabled == ["Read"]
    assert resolve_policy(second, config({})).enabled == ["Grep", "Read"]
    third = catalog([PolicyTool("Read", groups=("fs",)), PolicyTool("Grep")])
    assert third.index() is not first.index()
    assert resolve_policy(third, config({"tools": {"allow": ["group:fs"]}})).enabled == ["Read"]


def test_unhashable_catalog_entries_still_resolve() -> None:
    c = catalog([PolicyTool("Read", aliases=["cat"])])  # type: ignore[arg-type]
    assert resolve_policy(c, config({"tools": {"allow": ["cat"]}})).enabled == ["Read"]


# --------------------------------------------------------------------------- provider policies


def provider_cat() -> Any:
    policies = [
        ProviderPolicy("openai", providers=["openai"], exclusive=["ApplyPatch"]),
        ProviderPolicy("bedrock", providers=["bedrock"], remove={"WebSearch": "Bedrock has no server-side search"}),
        ProviderPolicy("vertex-old", providers=["vertex/claude-3*"], remove={"web*": "needs a newer model"}),
    ]
    return cat(tools=[PolicyTool(n) for n in [*TOOLS, "ApplyPatch"]], provider_policies=policies)


def test_provider_policy_removes_with_the_policy_name_and_reason() -> None:
    result = run({}, catalog=provider_cat(), provider="bedrock", model="claude-sonnet-4")
    d = result.decision("WebSearch")
    assert d is not None and not d.enabled and d.step == "provider-policy"
    assert "'bedrock'" in d.reason and "Bedrock has no server-side search" in d.reason


def test_exclusive_tools_exist_only_on_their_providers() -> None:
    assert "ApplyPatch" in enabled({}, catalog=provider_cat(), provider="openai", model="gpt-5")
    result = run({}, catalog=provider_cat(), provider="anthropic")
    assert "ApplyPatch" not in result.enabled
    assert "only available on openai" in reason(result, "ApplyPatch")


def test_without_a_provider_provider_policies_remove_nothing() -> None:
    assert enabled({}, catalog=provider_cat()) == {*TOOLS, "ApplyPatch"}


def test_provider_policy_keys_may_use_globs() -> None:
    assert "WebFetch" not in enabled({}, catalog=provider_cat(), provider="vertex", model="claude-3-5-sonnet@2024")
    assert "WebFetch" in enabled({}, catalog=provider_cat(), provider="vertex", model="claude-sonnet-4")


# --------------------------------------------------------------------------- explanation, validation


def test_every_decision_names_a_step_and_a_reason() -> None:
    result = run({"tools": {"profile": "coding", "deny": ["edit"]}}, provider="openai")
    for d in result.decisions:
        assert d.step and d.reason
    text = format_explain(result)
    assert "[deny] denied by tools.deny entry 'edit'" in text
    assert result.to_json().keys() == {"enabled", "disabled", "warnings"}


def test_validate_policy_config_checks_every_block() -> None:
    cfg = {"tools": {"profile": "codng", "deny": ["group:nope"]},
           "agents": {"list": [{"id": "a", "tools": {"allow": ["wat"], "byProvider": {"x": {"profile": "mini"}}}}]},
           "subagents": {"s": {"tools": ["huh"], "parent": "ghost"}}}
    warnings = validate_policy_config(cat(), config(cfg))
    text = "\n".join(warnings)
    for needle in ("tools.profile", "'codng'", "tools.deny", "'nope'", "agents.list[id=a].tools.allow", "'wat'",
                   "agents.list[id=a].tools.byProvider.x.profile", "subagents.s.tools", "'huh'",
                   "subagents.s.parent"):
        assert needle in text, needle
