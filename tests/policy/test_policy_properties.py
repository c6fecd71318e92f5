"""Property tests: deny always wins, byProvider never widens, entry order and case do not matter."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegboard.core.policy import PolicyCatalog, PolicyTool, resolve_policy
from pegboard.core.policy.decide import decide_each, decide_listwise
from pegboard.core.policy.plan import plan_policy
from pegboard.core.providers import ProviderPolicy
from tests.policy.helpers_policy import catalog, config

TOOLS = [
    PolicyTool("Read", groups=("fs",)),
    PolicyTool("Write", groups=("fs",)),
    PolicyTool("Edit", groups=("fs",)),
    PolicyTool("Bash", aliases=("exec",), groups=("runtime",)),
    PolicyTool("process", groups=("runtime",)),
    PolicyTool("WebFetch", groups=("web",)),
    PolicyTool("web_search", groups=("web",)),
    PolicyTool("SessionStatus"),
    PolicyTool("message", groups=("messaging",)),
    PolicyTool("Lobster", optional=True, groups=("runtime",)),
    PolicyTool("Grep", unavailable="rg not found"),
]
CATALOG = catalog(
    TOOLS,
    {"memory": ["memory_get"]},
    {"minimal": ["session_status"], "coding": ["group:fs", "group:runtime", "image"], "full": None},
)
ENTRIES = [
    "read", "write", "edit", "bash", "exec", "process", "web_fetch", "WebSearch", "session_status", "message",
    "lobster", "grep", "group:fs", "group:runtime", "group:web", "group:memory", "group:nope", "*", "web*",
    "*_status", "*e*", "nope", "Bash(git *)",
]
entries = st.lists(st.sampled_from(ENTRIES), max_size=5)
maybe_entries = st.none() | entries
profiles = st.none() | st.sampled_from(["minimal", "coding", "full", "bogus"])


@st.composite
def blocks(draw: Any, with_by_provider: bool = True) -> dict[str, Any]:
    block: dict[str, Any] = {}
    for key, strat in (("profile", profiles), ("allow", maybe_entries), ("alsoAllow", maybe_entries),
                       ("deny", maybe_entries)):
        value = draw(strat)
        if value is not None:
            block[key] = value
    if with_by_provider and draw(st.booleans()):
        block["byProvider"] = {
            draw(st.sampled_from(["openai", "openai/gpt-5", "anthropic"])): draw(blocks(with_by_provider=False))
        }
    return block


@st.composite
def configs(draw: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"tools": draw(blocks())}
    if draw(st.booleans()):
        cfg["agents"] = {"list": [{"id": "a", "tools": draw(blocks())}]}
    if draw(st.booleans()):
        sub: dict[str, Any] = {}
        if draw(st.booleans()):
            sub["tools"] = draw(entries)
        if draw(st.booleans()):
            sub["disallowedTools"] = draw(entries)
        cfg["subagents"] = {"s": sub}
    return cfg


selections = st.fixed_dictionaries({
    "provider": st.sampled_from([None, "openai", "anthropic"]),
    "model": st.sampled_from([None, "gpt-5", "claude"]),
    "agent": st.sampled_from([None, "a"]),
    "subagent": st.sampled_from([None, "s"]),
})

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def resolve(cfg: dict[str, Any], sel: dict[str, Any]) -> set[str]:
    return set(resolve_policy(CATALOG, config(cfg), **sel).enabled)


def _map_lists(value: Any, fn: Any) -> Any:
    if isinstance(value, dict):
        return {k: (fn(v) if isinstance(v, list) else _map_lists(v, fn)) if k != "list" else
                [_map_lists(x, fn) for x in v] for k, v in value.items()}
    return value


def _vary_case(entry: str, rnd: random.Random) -> str:
    if entry.startswith("group:"):
        return "GROUP:" + entry[6:].upper() if rnd.random() < 0.5 else entry
    out = "".join(c.upper() if rnd.random() < 0.5 else c.lower() for c in entry)
    return out.replace("_", "-") if rnd.random() < 0.5 else out


@FAST
@given(configs(), selections, st.sampled_from([t.name for t in TOOLS]), st.sampled_from(["tools", "agent", "bp"]))
def test_deny_always_wins(cfg: dict[str, Any], sel: dict[str, Any], name: str, where: str) -> None:
    spelled = name.upper() if len(name) % 2 else name.lower()
    if where == "agent" and sel["agent"] == "a" and "agents" in cfg:
        cfg["agents"]["list"][0]["tools"].setdefault("deny", []).append(spelled)
    elif where == "bp" and sel["provider"]:
        cfg["tools"]["byProvider"] = {sel["provider"]: {"deny": [spelled]}}
    else:
        cfg["tools"].setdefault("deny", []).append(spelled)
    result = resolve_policy(CATALOG, config(cfg), **sel)
    assert name not in result.enabled
    # and a deny through a group also wins, whatever else names the tool
    group_cfg = {**cfg, "tools": {**cfg["tools"], "allow": [name], "alsoAllow": [name],
                                  "deny": ["group:fs", "group:runtime", "group:web", "group:messaging", "*"]}}
    assert resolve_policy(CATALOG, config(group_cfg), **sel).enabled == []


@FAST
@given(configs(), selections, blocks(with_by_provider=False), st.sampled_from(["tools", "agent"]))
def test_by_provider_never_widens(cfg: dict[str, Any], sel: dict[str, Any], entry: dict[str, Any],
                                  where: str) -> None:
    key = f"{sel['provider']}/{sel['model']}" if sel["provider"] and sel["model"] else (sel["provider"] or "openai")
    scope = cfg["agents"]["list"][0]["tools"] if where == "agent" and "agents" in cfg else cfg["tools"]
    scope.pop("byProvider", None)
    without = resolve(cfg, sel)
    scope["byProvider"] = {key: entry}
    assert resolve(cfg, sel) <= without


@FAST
@given(configs(), selections, st.randoms(use_true_random=False))
def test_result_is_independent_of_entry_order(cfg: dict[str, Any], sel: dict[str, Any],
                                              rnd: random.Random) -> None:
    def shuffled(lst: list[Any]) -> list[Any]:
        out = list(lst)
        rnd.shuffle(out)
        return out

    first = resolve_policy(CATALOG, config(cfg), **sel)
    second = resolve_policy(CATALOG, config(_map_lists(cfg, shuffled)), **sel)
    assert first.enabled == second.enabled
    assert [(d.name, d.step, d.reason) for d in first.disabled] == [
        (d.name, d.step, d.reason) for d in second.disabled]
    assert sorted(first.warnings) == sorted(second.warnings)


@FAST
@given(configs(), selections, st.randoms(use_true_random=False))
def test_result_is_independent_of_case_and_separators(cfg: dict[str, Any], sel: dict[str, Any],
                                                      rnd: random.Random) -> None:
    varied = _map_lists(cfg, lambda lst: [_vary_case(e, rnd) for e in lst])
    if "profile" in varied["tools"] and varied["tools"]["profile"]:
        varied["tools"]["profile"] = varied["tools"]["profile"].upper()
    if "byProvider" in varied["tools"]:
        varied["tools"]["byProvider"] = {k.upper(): v for k, v in varied["tools"]["byProvider"].items()}
    assert resolve(cfg, sel) == resolve(varied, sel)


@FAST
@given(configs(), selections)
def test_subagent_never_widens_its_parent(cfg: dict[str, Any], sel: dict[str, Any]) -> None:
    parent = resolve(cfg, {**sel, "subagent": None})
    assert resolve(cfg, {**sel, "subagent": "s"}) <= parent


@FAST
@given(configs(), selections)
def test_every_tool_is_decided_once_with_a_step(cfg: dict[str, Any], sel: dict[str, Any]) -> None:
    result = resolve_policy(CATALOG, config(cfg), **sel)
    assert sorted(d.name for d in result.decisions) == sorted(t.name for t in TOOLS)
    assert set(result.enabled).isdisjoint(d.name for d in result.disabled)
    assert "Grep" not in result.enabled  # unavailable
    for d in result.decisions:
        assert d.step and d.reason


NAMES = ["Read", "Write", "Edit", "Bash", "process", "WebFetch", "web_search", "SessionStatus", "message",
         "Lobster", "Grep", "mcp__github__create_issue", "mcp__github__list_issues", "image"]
ALIASES = ["exec", "read_file", "session_status", "web_fetch", "patch"]
GROUP_NAMES = ["fs", "runtime", "web", "messaging", "memory"]


@st.composite
def policy_tools(draw: Any) -> list[PolicyTool]:
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=len(NAMES)))
    return [
        PolicyTool(
            name,
            aliases=tuple(draw(st.lists(st.sampled_from(ALIASES), unique=True, max_size=2))),
            groups=tuple(draw(st.lists(st.sampled_from(GROUP_NAMES), unique=True, max_size=2))),
            optional=draw(st.booleans()),
            unavailable=draw(st.sampled_from([None, None, "binary not found"])),
        )
        for name in names
    ]


@st.composite
def policy_catalogs(draw: Any) -> PolicyCatalog:
    policies = []
    if draw(st.booleans()):
        policies.append(ProviderPolicy(
            "random", providers=[draw(st.sampled_from(["openai", "anthropic", "openai/gpt-5"]))],
            remove={e: "not here" for e in draw(st.lists(st.sampled_from(ENTRIES), max_size=2))},
            exclusive=draw(st.lists(st.sampled_from(ENTRIES), max_size=2)),
        ))
    return catalog(
        draw(policy_tools()),
        {"memory": draw(st.lists(st.sampled_from([*NAMES, "group:fs"]), max_size=3))},
        {"minimal": ["session_status"], "coding": ["group:fs", "group:runtime", "image"], "full": None},
        provider_policies=policies,
    )


@FAST
@given(policy_catalogs(), configs(), selections)
def test_fast_path_agrees_with_the_per_tool_path(cat: PolicyCatalog, cfg: dict[str, Any], sel: dict[str, Any]) -> None:
    """The list-wise decisions (taken for speed, see benchmarks/bench_policy.py) are the per-tool ones."""
    plan = plan_policy(cat, config(cfg), **{**sel, "subagent": None})
    assert decide_listwise(plan) == decide_each(plan)
