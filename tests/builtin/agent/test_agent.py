"""Agent / Task / delegate_task, sessions_spawn and agents_list over the run_subagent hook."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pegboard_agent as agent
import pegboard_bash
import pegboard_read
import pegboard_write
from pegboard import MessageDelivery, Pegboard, SubagentRequest, hookimpl
from pegboard.testing import check_tool, isolated_pegboard


class Host:
    def __init__(self) -> None:
        self.requests: list[SubagentRequest] = []
        self.delivered: list[MessageDelivery] = []

    @hookimpl
    async def run_subagent(self, request: SubagentRequest) -> str:
        self.requests.append(request)
        await asyncio.sleep(0)
        return f"{request.subagent_type} finished: {request.prompt}"

    @hookimpl
    def deliver_message(self, request: MessageDelivery) -> bool:
        self.delivered.append(request)
        return True


def board(tmp_path: Path, *plugins: object, config: dict[str, Any] | None = None) -> Pegboard:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    env = {"PEGBOARD_CONFIG_DIR": str(tmp_path / "user"), "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    plugs = (agent, pegboard_read, pegboard_write, pegboard_bash, *plugins)
    return isolated_pegboard(*plugs, cwd=project, env=env, config=config)


def test_conforms() -> None:
    check_tool(agent.agent_tool, {"description": "look", "prompt": "find it"})
    check_tool(agent.sessions_spawn, {"task": "do it"})
    check_tool(agent.agents_list, {})


async def test_general_subagent_gets_the_parent_tools_but_not_agent(tmp_path: Path) -> None:
    host = Host()
    pb = board(tmp_path, host)
    async with pb.session(persist=False) as s:
        result = await s.call("Task", {"description": "search", "prompt": "find the bug"})
        via = await s.call("delegate_task", {"description": "search", "prompt": "again"})
    assert not result.is_error and result.text == "general-purpose finished: find the bug"
    assert not via.is_error
    request = host.requests[0]
    assert set(request.tools) == {"Read", "Write", "Bash", "agents_list"}
    assert request.max_turns == agent.DEFAULT_MAX_TURNS
    assert request.parent_session_id == s.id


async def test_config_subagent_uses_the_policy_set_and_its_settings(tmp_path: Path) -> None:
    host = Host()
    config = {"subagents": {"reviewer": {"tools": ["Read", "Bash"], "disallowedTools": ["Bash"],
                                         "maxTurns": 3, "model": "small", "prompt": "Review carefully."}}}
    pb = board(tmp_path, host, config=config)
    async with pb.session(persist=False) as s:
        result = await s.call("Agent", {"description": "review", "prompt": "review x", "subagent_type": "reviewer"})
        unknown = await s.call("Agent", {"description": "x", "prompt": "y", "subagent_type": "ghost"})
    assert not result.is_error, result.text
    request = host.requests[0]
    assert request.tools == ("Read",) and request.max_turns == 3 and request.model == "small"
    assert request.system_prompt == "Review carefully."
    assert unknown.is_error and unknown.metadata["error_kind"] == "not_found" and "reviewer" in unknown.text


async def test_agent_files_define_subagents(tmp_path: Path) -> None:
    agents_dir = tmp_path / "project/.pegboard/agents"
    agents_dir.mkdir(parents=True)
    (agents_dir / "explorer.md").write_text(
        "---\nname: Explore\ndescription: Searches\ntools: Read, Bash\nmaxTurns: 7\n---\nYou explore code.\n"
    )
    host = Host()
    pb = board(tmp_path, host)
    async with pb.session(persist=False) as s:
        result = await s.call("Agent", {"description": "x", "prompt": "look", "subagent_type": "Explore"})
    assert not result.is_error, result.text
    request = host.requests[0]
    assert set(request.tools) == {"Read", "Bash"} and request.max_turns == 7
    assert request.system_prompt == "You explore code."


async def test_agent_rules_match_the_subagent_type(tmp_path: Path) -> None:
    host = Host()
    pb = board(tmp_path, host, config={"permissions": {"deny": ["Agent(Expl*)"]}})
    async with pb.session(persist=False) as s:
        denied = await s.call("Agent", {"description": "x", "prompt": "y", "subagent_type": "Explore"})
        fine = await s.call("Agent", {"description": "x", "prompt": "y"})
    assert denied.is_error and denied.reason == "denied"
    assert not fine.is_error
    assert agent.match_agent("model:opus", {"model": "opus"})


async def test_without_a_host_the_spawning_tools_are_unavailable(tmp_path: Path) -> None:
    pb = board(tmp_path)
    disabled = {d.name: d.reason for d in pb.tools().disabled}
    assert "run_subagent" in disabled["Agent"] and "run_subagent" in disabled["sessions_spawn"]
    for name in ("background_job", "subagent_list", "subagent_history", "subagent_cancel"):
        assert "run_subagent" in disabled[name]
    assert "agents_list" in pb.tools().enabled


async def test_sessions_spawn_is_accepted_at_once_and_announces(tmp_path: Path) -> None:
    host = Host()
    config = {"agents": {"list": [{"id": "main", "subagents": {"allowAgents": ["helper"]}}, {"id": "helper"}]}}
    pb = board(tmp_path, host, config=config)
    async with pb.session(persist=False, agent="main") as s:
        listed = await s.call("agents_list", {})
        assert listed.structured == {"agents": ["main", "helper"], "allowAny": False}
        spawned = await s.call("sessions_spawn", {"task": "tidy up", "agentId": "helper", "label": "tidy"})
        assert spawned.structured is not None and spawned.structured["status"] == "accepted"
        refused = await s.call("sessions_spawn", {"task": "x", "agentId": "stranger"})
        assert refused.is_error and refused.metadata["error_kind"] == "not_allowed"
        for _ in range(50):
            if host.delivered:
                break
            await asyncio.sleep(0)
    announce = host.delivered[0]
    assert announce.session_id == s.id and announce.kind == "announce"
    assert "helper finished: tidy up" in announce.text


async def test_allow_any(tmp_path: Path) -> None:
    config = {"agents": {"list": [{"id": "main", "subagents": {"allowAgents": ["*"]}}, {"id": "b"}]}}
    pb = board(tmp_path, Host(), config=config)
    async with pb.session(persist=False, agent="main") as s:
        listed = await s.call("agents_list", {})
    assert listed.structured == {"agents": ["b", "main"], "allowAny": True}
