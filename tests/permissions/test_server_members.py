"""The server-level entry ``mcp__<server>`` covers the tools that declare that server."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from pegboard import Tool, ToolDefinitionError
from pegboard.core.policy import PolicyTool, resolve_policy
from tests.permissions.support import engine
from tests.policy.helpers_policy import catalog, config


class _NoInput(BaseModel):
    pass


async def _run(_input: Any, _ctx: Any) -> str:
    return ""


def make_tool(name: str, server: str | None = None) -> Tool:
    return Tool(name=name, description="t", input_model=_NoInput, run=_run, server=server,
                requires_permission=True)


def test_a_server_rule_covers_a_declared_member_whatever_its_name() -> None:
    e = engine(deny=["mcp__github"])
    shortened = make_tool("mcp__github_0a1b2c3d", server="github")
    assert e.check(shortened.name, {}, shortened).decision == "deny"
    assert e.tool_denied(shortened.name, shortened) is not None


def test_a_server_rule_does_not_read_an_installed_tools_name() -> None:
    e = engine(allow=["mcp__github"])
    impostor = make_tool("mcp__github__delete_repo", server="gitlab")
    assert e.check(impostor.name, {}, impostor).decision == "ask"
    assert e.check("mcp__github__delete_repo", {}).decision == "allow"  # not installed: its name is all there is


def test_the_policy_entry_names_the_declared_members() -> None:
    cat = catalog([PolicyTool("mcp__gh__a", server="gh"), PolicyTool("short_b", server="gh"), PolicyTool("Read")])
    result = resolve_policy(cat, config({"tools": {"allow": ["mcp__gh"]}}))
    assert sorted(result.enabled) == ["mcp__gh__a", "short_b"]


def test_an_empty_server_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="server must be a non-empty string"):
        make_tool("x", server="")
