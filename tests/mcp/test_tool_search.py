"""Deferred tools and ToolSearch: in process, and through ``pegboard serve`` with a deferred MCP server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters
from pydantic import BaseModel

import pegboard_tool_search
from pegboard import ConfigLayer, Pegboard, ToolContext, hookimpl, tool

from .conftest import PEGBOARD, SUPPORT, serve_env


class Empty(BaseModel):
    pass


def _deferred(name: str, description: str) -> Any:
    async def run(input: Empty, ctx: ToolContext) -> str:
        return f"{name} ran"

    return tool(name=name, description=description, deferred=True, read_only=True)(run)


class DeferredTools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(_deferred("mcp__github__get_issue", "Fetch one GitHub issue by number."))
        register(_deferred("mcp__github__create_pr", "Open a pull request on GitHub."))
        register(_deferred("mcp__slack__send_message", "Send a Slack message to a channel."))
        register(_deferred("WeatherLookup", "Current weather for a city."))


def pegboard_with(tmp_path: Path, config: dict[str, Any] | None = None) -> Pegboard:
    layers = [ConfigLayer("cli", config or {}, tmp_path / "c.json", tmp_path)]
    return Pegboard(
        plugins=[DeferredTools(), pegboard_tool_search], load_entrypoints=False, layers=layers, cwd=tmp_path
    )


async def test_search_loads_deferred_tools(tmp_path):
    pb = pegboard_with(tmp_path)
    enabled = pb.enabled_tools()
    visible = {t.name for t in pegboard_tool_search.visible_tools(pb, enabled)}
    assert visible == {"ToolSearch"}
    assert pegboard_tool_search.deferred_names(pb, enabled) == [
        "mcp__github__create_pr",
        "mcp__github__get_issue",
        "mcp__slack__send_message",
        "WeatherLookup",
    ]

    found = await pb.call("ToolSearch", {"query": "github issue"})
    assert not found.is_error and found.structured is not None
    assert found.structured["matches"][0] == "mcp__github__get_issue"
    definition = found.structured["definitions"][0]
    assert definition["input_schema"]["type"] == "object"
    visible = {t.name for t in pegboard_tool_search.visible_tools(pb, pb.enabled_tools())}
    assert "mcp__github__get_issue" in visible and "WeatherLookup" not in visible

    regex = await pb.call("ToolSearch", {"query": "regex:^mcp__slack__"})
    assert regex.structured is not None and regex.structured["matches"] == ["mcp__slack__send_message"]
    slashes = await pb.call("ToolSearch", {"query": "/weather/"})
    assert slashes.structured is not None and slashes.structured["matches"] == ["WeatherLookup"]
    select = await pb.call("ToolSearch", {"query": "select:mcp__github__create_pr"})
    assert select.structured is not None and select.structured["matches"] == ["mcp__github__create_pr"]
    required = await pb.call("ToolSearch", {"query": "+slack message"})
    assert required.structured is not None and required.structured["matches"] == ["mcp__slack__send_message"]
    none = await pb.call("ToolSearch", {"query": "kubernetes"})
    assert none.structured == {"matches": [], "definitions": []}
    bad = await pb.call("ToolSearch", {"query": "regex:(unclosed"})
    assert bad.is_error and bad.reason == "invalid_input"

    assert pegboard_tool_search.deferred_names(pb, pb.enabled_tools()) == []
    ran = await pb.call("mcp__github__get_issue", {}, approver=lambda call, decision: True)
    assert ran.text == "mcp__github__get_issue ran"


async def test_policy_still_applies_to_deferred_tools(tmp_path):
    pb = pegboard_with(tmp_path, {"tools": {"deny": ["mcp__github__*"]}})
    found = await pb.call("ToolSearch", {"query": "github"})
    assert found.structured is not None and found.structured["matches"] == []
    refused = await pb.call("mcp__github__get_issue", {})
    assert refused.is_error and refused.reason == "denied"


def test_sessions_load_separately(tmp_path):
    pb = pegboard_with(tmp_path)
    pegboard_tool_search.load(pb, ["WeatherLookup"], session_id="a")
    enabled = pb.enabled_tools()
    assert "WeatherLookup" in {t.name for t in pegboard_tool_search.visible_tools(pb, enabled, "a")}
    assert "WeatherLookup" not in {t.name for t in pegboard_tool_search.visible_tools(pb, enabled, "b")}


async def test_serve_hides_deferred_mcp_tools_until_searched(workdir):
    config = workdir / "deferred.json"
    server = {"command": sys.executable, "args": [str(SUPPORT / "sdk_server.py")], "exposure": "deferred"}
    config.write_text(json.dumps({"mcpServers": {"sdk": server}}), encoding="utf-8")
    changed: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.append("tools")

    params = StdioServerParameters(
        command=PEGBOARD,
        args=["serve", "--config", str(config), "--cwd", str(workdir)],
        env=serve_env({"PEGBOARD_MCP_STARTUP_WAIT": "20"}),
        cwd=str(workdir),
    )
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        before = {t.name: t for t in (await client.list_tools()).tools}
        assert "mcp__sdk__add" not in before
        assert "mcp__sdk__add" in (before["ToolSearch"].description or "")
        found = await client.call_tool("ToolSearch", {"query": "add integers"})
        assert not found.is_error
        assert found.structured_content is not None and "mcp__sdk__add" in found.structured_content["matches"]
        after = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__sdk__add" in after
    assert changed, "the server should announce the changed tool list"


async def test_a_subagents_search_never_returns_tools_its_disallowed_list_removed(tmp_path):
    config = {"subagents": {"triage": {"disallowedTools": ["mcp__github__*"]}}}
    pb = pegboard_with(tmp_path, config)
    async with pb.session(subagent="triage") as session:
        result = await session.call("ToolSearch", {"query": "github issue"})
        assert not result.is_error
        assert result.structured is not None and result.structured["matches"] == []
        assert "mcp__github" not in result.text
        found = await session.call("ToolSearch", {"query": "weather"})
        assert found.structured is not None and found.structured["matches"] == ["WeatherLookup"]
    plain = await pb.call("ToolSearch", {"query": "github issue"}, subagent="triage")
    assert plain.structured is not None and plain.structured["matches"] == []


async def test_a_tool_loaded_in_one_session_is_absent_from_another(tmp_path):
    pb = pegboard_with(tmp_path)
    async with pb.session() as one, pb.session() as two:
        await one.call("ToolSearch", {"query": "select:WeatherLookup"})
        assert "WeatherLookup" in {d["name"] for d in one.schema("anthropic")}
        assert "WeatherLookup" not in {d["name"] for d in two.schema("anthropic")}
