"""A subagent's Tool(specifier) list entries restrict each call, not just the tool list."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pegboard import ToolContext, tool
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import ToolsPlugin, echo


class BashInput(BaseModel):
    command: str


@tool(name="Bash", permission_family="Bash")
async def bash(input: BashInput, ctx: ToolContext) -> str:
    """Pretend to run a shell command (echoes it back)."""
    return f"ran: {input.command}"


def board(subagent: dict[str, Any]) -> Any:
    config = {"subagents": {"helper": subagent}, "permissions": {"allow": ["Bash"]}}
    return isolated_pegboard(ToolsPlugin(bash, echo), config=config)


def test_tools_with_a_specifier_allow_only_matching_calls() -> None:
    pb = board({"tools": ["Bash(git *)", "Echo"]})
    assert pb.call_sync("Bash", {"command": "git status"}, subagent="helper").text == "ran: git status"
    refused = pb.call_sync("Bash", {"command": "rm -rf build"}, subagent="helper")
    assert refused.reason == "denied" and "only as Bash(git *)" in refused.text
    smuggled = pb.call_sync("Bash", {"command": "git status && rm -rf build"}, subagent="helper")
    assert smuggled.reason == "denied"
    assert pb.call_sync("Echo", {"text": "x"}, subagent="helper").text == "x"
    assert pb.call_sync("Bash", {"command": "rm -rf build"}).text == "ran: rm -rf build", "the parent is not narrowed"


def test_disallowed_tools_with_a_specifier_deny_matching_calls() -> None:
    pb = board({"disallowedTools": ["Bash(rm *)"]})
    assert pb.call_sync("Bash", {"command": "ls"}, subagent="helper").text == "ran: ls"
    refused = pb.call_sync("Bash", {"command": "rm -rf build"}, subagent="helper")
    assert refused.reason == "denied" and "disallowedTools" in str(refused.metadata.get("permission"))
