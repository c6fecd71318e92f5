"""Plugin loading in isolation, conflicts, blocking, and the registries."""

from __future__ import annotations

from typing import Any

import pytest

from pegboard import Profile, ProviderPolicy, hookimpl, tool
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import EchoInput, ToolsPlugin, boom, echo, plugin_with_hooks


def test_code_plugins_register_tools_and_groups() -> None:
    pb = isolated_pegboard(ToolsPlugin(echo, boom, groups={"extra": ["Echo"]}, name="demo"))
    assert [p.to_json() for p in pb.plugins] == [
        {
            "name": "demo",
            "distribution": None,
            "version": None,
            "hooks": ["register_groups", "register_tools"],
            "status": "loaded",
            "error": None,
        }
    ]
    assert set(pb.registry.tools) == {"Echo", "Boom"}
    assert pb.registry.group_members() == {"demo": ["Echo", "Boom"], "extra": ["Echo"]}


@pytest.mark.parametrize("lookup", ["Echo", "echo", "ECHO", "e-c_h-o", "say", "SAY"])
def test_lookup_is_case_and_separator_insensitive_and_follows_aliases(lookup: str) -> None:
    pb = isolated_pegboard(ToolsPlugin(echo))
    assert pb.tool(lookup) is echo


def test_same_name_from_two_plugins_names_both_and_neither_wins_silently() -> None:
    first = ToolsPlugin(echo, name="first")
    second = ToolsPlugin(echo, boom, name="second")
    pb = isolated_pegboard(first, second)
    failed = {p.name: p for p in pb.plugins}["second"]
    assert failed.status == "failed"
    assert "'first'" in (failed.error or "") and "'second'" in (failed.error or "")
    assert set(pb.registry.tools) == {"Echo"}, "nothing of the failed plugin is kept"


def test_alias_colliding_with_a_name_is_a_conflict() -> None:
    @tool(name="Say", input_model=EchoInput)
    async def say(input: EchoInput, ctx: object) -> str:
        """Say something out loud."""
        return input.text

    pb = isolated_pegboard(ToolsPlugin(echo, name="a"), ToolsPlugin(say, name="b"))
    assert {p.name: p.status for p in pb.plugins} == {"a": "loaded", "b": "failed"}


def test_registration_hook_that_raises_fails_only_that_plugin() -> None:
    def register_tools(register: object) -> None:
        raise ValueError("broken plugin")

    pb = isolated_pegboard(plugin_with_hooks(register_tools=register_tools), ToolsPlugin(echo, name="ok"))
    statuses = {p.name: (p.status, p.error) for p in pb.plugins}
    assert statuses["ok"] == ("loaded", None)
    assert statuses["HookPlugin"][0] == "failed"
    assert "ValueError: broken plugin" in (statuses["HookPlugin"][1] or "")
    assert pb.call_sync("Echo", {"text": "still works"}).text == "still works"


def test_registering_something_that_is_not_a_tool_fails_the_plugin() -> None:
    pb = isolated_pegboard(plugin_with_hooks(register_tools=lambda register: register("Echo")))
    assert pb.plugins[0].status == "failed"
    assert "pegboard.Tool" in (pb.plugins[0].error or "")


def test_unknown_hook_name_fails_the_plugin() -> None:
    class Typo:
        @hookimpl
        def register_tool(self, register: object) -> None:  # missing "s"
            pass

    pb = isolated_pegboard(Typo())
    assert pb.plugins[0].status == "failed"
    assert "register_tool" in (pb.plugins[0].error or "")


def test_async_registration_hooks_are_awaited() -> None:
    async def register_tools(register: object) -> None:
        register(echo)  # type: ignore[operator]

    pb = isolated_pegboard(plugin_with_hooks(register_tools=register_tools))
    assert pb.tool("Echo") is echo


def test_profiles_merge_groups_but_duplicate_profile_names_fail() -> None:
    def profiles_a(register: object) -> None:
        register(Profile("review", allow=["Read"]))  # type: ignore[operator]

    def groups_b(register: object) -> None:
        register("fs", ["Read"])  # type: ignore[operator]

    def groups_c(register: object) -> None:
        register("group:fs", ["Write"])  # type: ignore[operator]

    pb = isolated_pegboard(
        plugin_with_hooks(register_profiles=profiles_a, register_groups=groups_b),
        plugin_with_hooks(register_profiles=profiles_a, register_groups=groups_c),
    )
    assert [p.status for p in pb.plugins] == ["loaded", "failed"]
    assert "HookPlugin" in (pb.plugins[1].error or "")
    assert pb.registry.group_members()["fs"] == ["Read"]
    assert pb.registry.profile_owner["review"] == "HookPlugin"


def test_provider_policies_register() -> None:
    def register_provider_policies(register: object) -> None:
        register(ProviderPolicy("acme", providers=["Acme"], remove={"Echo": "no echo on Acme"}))  # type: ignore[operator]

    pb = isolated_pegboard(plugin_with_hooks(register_provider_policies=register_provider_policies))
    (policy,) = pb.registry.provider_policies
    assert policy.applies_to("acme", None) and policy.applies_to("ACME", "m1")
    assert not policy.applies_to("other", None)


def test_config_and_environment_block_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    pb = isolated_pegboard(ToolsPlugin(echo, name="demo"), config={"plugins": {"disabled": ["demo"]}})
    assert pb.plugins[0].status == "blocked" and pb.registry.tools == {}
    pb = isolated_pegboard(ToolsPlugin(echo, name="demo"), env={"PEGBOARD_DISABLE_PLUGINS": "*"})
    assert pb.plugins[0].status == "blocked"
    pb = isolated_pegboard(ToolsPlugin(echo, name="a"), ToolsPlugin(boom, name="b"), env={"PEGBOARD_LOAD_PLUGINS": "b"})
    assert {p.name: p.status for p in pb.plugins} == {"a": "blocked", "b": "loaded"}


def test_provider_policy_keys_take_globs_and_model_ids() -> None:
    policy = ProviderPolicy("v", providers=["vertex/claude-3*"])
    assert policy.applies_to("vertex", "claude-3-5-sonnet")
    assert policy.applies_to("other", "vertex/claude-3-opus"), "a model id with '/' is used as is"
    assert not policy.applies_to("vertex", "claude-4")
    assert not policy.applies_to(None, "vertex/claude-3")


def test_pegboard_ready_lets_a_plugin_add_tools_at_run_time() -> None:
    from pegboard import Pegboard

    def ready_that_fails(pegboard: Pegboard) -> None:
        raise RuntimeError("cannot start")

    later: list[Any] = []

    def sync_source(pegboard: Pegboard) -> None:
        def sync() -> None:
            if later and pegboard.registry.find("Echo") is None:
                pegboard.add_tool(echo, owner="late")

        pegboard.add_tool_source(sync)

    pb = isolated_pegboard(
        plugin_with_hooks(pegboard_ready=sync_source), plugin_with_hooks(pegboard_ready=ready_that_fails)
    )
    assert any("pegboard_ready failed: RuntimeError: cannot start" in w for w in pb.warnings)
    assert pb.tools().enabled == []
    later.append(True)
    assert pb.tools().enabled == ["Echo"]
    assert pb.call_sync("echo", {"text": "late"}).text == "late"
    later.clear()
    pb.remove_tools("late")
    assert pb.tool("Echo") is None


def test_a_bare_name_deny_rule_removes_the_tool_from_the_list() -> None:
    pb = isolated_pegboard(ToolsPlugin(echo, boom), config={"permissions": {"deny": ["Boom"]}})
    result = pb.tools()
    assert result.enabled == ["Echo"]
    (gone,) = result.disabled
    assert gone.name == "Boom" and gone.step == "permissions" and "'Boom'" in gone.reason
    scoped = isolated_pegboard(ToolsPlugin(echo), config={"permissions": {"deny": ["Echo(text:secret)"]}})
    assert scoped.tools().enabled == ["Echo"], "a scoped deny keeps the tool and blocks matching calls"


def test_tool_set_version_grows_with_registrations_and_refresh_runs_sources() -> None:
    pb = isolated_pegboard()
    runs: list[int] = []

    def source() -> None:
        runs.append(1)
        pb.tool("Echo")

    pb.add_tool_source(source)
    before = pb.tool_set_version
    pb.refresh()
    assert runs == [1], "a source that looks tools up does not start a second sync"
    pb.add_tool(echo, owner="late")
    assert pb.tool_set_version > before
    added = pb.tool_set_version
    pb.remove_tools("late")
    assert pb.tool_set_version > added
