"""Approvals and refusals as an MCP client's user and model see them, against the real
``pegboard serve`` driven by the official MCP client."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from .test_serve_stdio import served, text_of


def meta_of(result: types.CallToolResult) -> dict[str, Any]:
    return dict((result.meta or {})["pegboard"])


async def test_always_in_this_session_adds_the_narrowest_rule_for_that_session(serve_args, workdir):
    forms: list[dict[str, Any]] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        forms.append(params.requested_schema)
        return types.ElicitResult(action="accept", content={"decision": "session"})

    async with served(serve_args, workdir, elicitation_callback=elicit) as client:
        first = await client.call_tool("Guarded", {"text": "one"})
        second = await client.call_tool("Guarded", {"text": "two"})
    assert text_of(first) == "guarded ran with one" and text_of(second) == "guarded ran with two"
    assert len(forms) == 1, "the remembered rule answers the second call"
    choice = forms[0]["properties"]["decision"]
    assert choice["enum"] == ["once", "session", "deny"] and '"Guarded"' in choice["enumNames"][1]
    async with served(serve_args, workdir, elicitation_callback=elicit) as client:  # a new session asks again
        await client.call_tool("Guarded", {"text": "three"})
    assert len(forms) == 2


async def test_once_and_deny_choices(serve_args, workdir):
    answers = ["once", "deny", "sometimes"]

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"decision": answers.pop(0)})

    async with served(serve_args, workdir, elicitation_callback=elicit) as client:
        once = await client.call_tool("Guarded", {"text": "a"})
        denied = await client.call_tool("Guarded", {"text": "b"})
        unknown = await client.call_tool("Guarded", {"text": "c"})  # a choice the form did not offer refuses
    assert not once.is_error
    for refused in (denied, unknown):
        assert refused.is_error and "the approver refused" in text_of(refused)
        assert meta_of(refused)["reason"] == "not_approved"


async def test_a_compound_command_remembers_one_rule_per_simple_command(serve_args, workdir):
    forms: list[dict[str, Any]] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        forms.append(params.requested_schema)
        return types.ElicitResult(action="accept", content={"decision": "session"})

    command = "touch made.txt && ls made.txt"
    async with served(serve_args, workdir, elicitation_callback=elicit) as client:
        first = await client.call_tool("Bash", {"command": command})
        again = await client.call_tool("Bash", {"command": command})
        alone = await client.call_tool("Bash", {"command": "ls made.txt"})
    assert not first.is_error and not again.is_error and not alone.is_error, (text_of(first), text_of(alone))
    assert len(forms) == 1
    assert '"Bash(touch made.txt *)", "Bash(ls made.txt *)"' in forms[0]["properties"]["decision"]["enumNames"][1]


async def test_a_refused_loop_gets_a_short_reason_and_a_pattern_never_the_bare_tool(serve_args, workdir):
    async with served(serve_args, workdir) as client:  # no elicitation: nobody can approve
        result = await client.call_tool("Bash", {"command": "for i in 1 2 3; do echo t$i > out$i.txt; done"})
    message = text_of(result)
    assert result.is_error and meta_of(result)["reason"] == "not_approved"
    assert '"Bash(echo *)"' in message and 'add "Bash"' not in message
    assert "--mode" not in message and "elicitation" not in message and "approver=" not in message
    assert "--mode" in meta_of(result)["how_to_approve"]


async def test_every_error_carries_a_reason(serve_args, workdir):
    async with served(serve_args, workdir) as client:
        failed = await client.call_tool("Bash", {"command": "ls no-such-file"})
        boom = await client.call_tool("Boom", {})
        unknown = await client.call_tool("NoSuchTool", {})
    assert failed.is_error and meta_of(failed)["reason"] == "tool_error"
    assert meta_of(boom)["reason"] == "tool_error" and meta_of(unknown)["reason"] == "unknown_tool"
