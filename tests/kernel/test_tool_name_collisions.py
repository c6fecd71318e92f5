"""Tool names that share a normal form: ``send_message`` (channel delivery) and ``SendMessage``
(agent to agent) are different tools. An exact name or alias wins; the case- and
separator-insensitive match is used only when one installed tool has that normal form."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pegboard import Pegboard, Tool, ToolContext, hookimpl
from pegboard.core.config import ConfigLayer
from pegboard.core.registry import RegistrationConflict

SEED_NAMES = Path(__file__).with_name("seed_tool_names.tsv")


class NoInput(BaseModel):
    pass


def answering(name: str) -> Tool:
    async def run(input: NoInput, ctx: ToolContext) -> str:
        return f"ran {name}"

    return Tool(name, f"The {name} test tool.", NoInput, run)


class Both:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(answering("send_message"))
        register(answering("SendMessage"))
        register(answering("Read"))


def board(config: dict[str, Any] | None = None) -> Pegboard:
    return Pegboard(plugins=[Both()], load_entrypoints=False, layers=[ConfigLayer("project", config or {})])


@pytest.mark.parametrize("name", ["send_message", "SendMessage"])
def test_an_exact_name_reaches_its_own_tool(name: str) -> None:
    result = asyncio.run(board().call(name, {}))
    assert not result.is_error, result.text
    assert result.text == f"ran {name}"


@pytest.mark.parametrize("name", ["sendmessage", "send-message", "Send_Message", "SENDMESSAGE"])
def test_a_shared_normal_form_is_unknown_and_lists_the_candidates(name: str) -> None:
    pb = board()
    assert pb.tool(name) is None
    result = asyncio.run(pb.call(name, {}))
    assert result.is_error and result.reason == "unknown_tool"
    assert "'send_message', 'SendMessage'" in result.text and "exact name" in result.text
    assert result.metadata["candidates"] == ["send_message", "SendMessage"]


def test_a_normal_form_one_tool_has_still_reaches_it() -> None:
    result = asyncio.run(board().call("read", {}))
    assert result.text == "ran Read"


def test_names_that_differ_only_in_case_still_collide() -> None:
    pb = board()
    clash = "'Send_Message' from plugin 'late' collides with tool 'send_message'"
    with pytest.raises(RegistrationConflict, match=clash):
        pb.add_tool(answering("Send_Message"), owner="late")


def test_policy_entries_pick_the_exact_tool_and_refuse_an_ambiguous_one() -> None:
    only = board({"tools": {"allow": ["send_message", "Read"]}}).tools()
    assert sorted(only.enabled) == ["Read", "send_message"]
    denied = board({"tools": {"deny": ["SendMessage"]}}).tools()
    assert "send_message" in denied.enabled and "SendMessage" not in denied.enabled
    vague = board({"tools": {"allow": ["sendmessage", "Read"]}}).tools()
    assert vague.enabled == ["Read"]
    assert any("'sendmessage' (it could mean 'send_message', 'SendMessage'; write the exact name)" in w
               for w in vague.warnings), vague.warnings


def test_a_glob_reaches_every_tool_of_a_shared_normal_form() -> None:
    result = board({"tools": {"deny": ["send*"]}}).tools()
    assert result.enabled == ["Read"]


def seed_names() -> list[tuple[str, str]]:
    rows = []
    for line in SEED_NAMES.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, reached = line.split("\t")
            rows.append((name, reached))
    return rows


def test_every_seed_name_reaches_its_tool_under_profile_full() -> None:
    pb = Pegboard(layers=[ConfigLayer("project", {"tools": {"profile": "full"}})])
    reached = {}
    for name, _ in seed_names():
        tool = pb.tool(name)
        reached[name] = "-" if tool is None else tool.name
    assert reached == dict(seed_names())
