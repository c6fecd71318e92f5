"""Deferred tools stay out of schema and prompt until a loader loads them for the session."""

from __future__ import annotations

import pytest

from pegboard import SessionError, Tool, ToolContext
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import EchoInput, ToolsPlugin, echo


async def _run(input: EchoInput, ctx: ToolContext) -> str:
    return input.text


lazy = Tool("Lazy", "A rarely used tool offered by name only.", EchoInput, _run, deferred=True)
finder = Tool("Finder", "Loads deferred tools by name.", EchoInput, _run, loads_deferred=True)


def names(definitions: list[dict[str, object]]) -> set[object]:
    return {d["name"] for d in definitions}


def test_deferred_tools_wait_for_a_loader_and_load_per_session() -> None:
    pb = isolated_pegboard(ToolsPlugin(echo, lazy, finder))
    assert names(pb.schema("anthropic")) == {"Echo", "Finder"}
    assert "Deferred tools (search for them to load their definitions): Lazy" in pb.prompt()
    pb.deferred.load(["Lazy"], session_id="s1")
    assert names(pb.schema("anthropic", session_id="s1")) == {"Echo", "Finder", "Lazy"}
    assert names(pb.schema("anthropic", session_id="s2")) == {"Echo", "Finder"}
    assert "### Lazy" in pb.prompt(session_id="s1")


def test_without_a_loader_nothing_is_deferred() -> None:
    pb = isolated_pegboard(ToolsPlugin(echo, lazy))
    assert names(pb.schema("mcp")) == {"Echo", "Lazy"}


def test_policy_still_applies_to_deferred_tools() -> None:
    pb = isolated_pegboard(ToolsPlugin(echo, lazy, finder), config={"tools": {"deny": ["Lazy"]}})
    pb.deferred.load(["Lazy"])
    assert names(pb.schema("anthropic")) == {"Echo", "Finder"}
    assert pb.call_sync("Lazy", {"text": "x"}).reason == "denied"


def test_loading_an_unknown_name_says_which_deferred_tools_there_are() -> None:
    pb = isolated_pegboard(ToolsPlugin(echo, lazy, finder))
    with pytest.raises(
        SessionError, match=r"cannot load 'Lazzy': no tool of that name is registered \(deferred tools: Lazy\)"
    ):
        pb.deferred.load(["Lazzy"], session_id="s1")
    assert names(pb.schema("anthropic", session_id="s1")) == {"Echo", "Finder"}
    assert pb.deferred.load(["lazy"], session_id="s1") == ["Lazy"]  # case and aliases resolve to the tool's name
    assert names(pb.schema("anthropic", session_id="s1")) == {"Echo", "Finder", "Lazy"}
