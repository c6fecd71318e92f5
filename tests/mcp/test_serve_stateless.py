"""A 2026-07-28 (stateless) client, the official SDK client in its default mode, against
``pegboard serve --http`` on 127.0.0.1: asks reach it through the request's input rounds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from .conftest import http_serving


@pytest.fixture
def http_server(serve_args: list[str], workdir: Path) -> Iterator[str]:
    with http_serving(serve_args, workdir) as server:
        yield server.url


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_the_default_client_negotiates_the_stateless_protocol(http_server):
    async with Client(http_server) as client:
        assert client.protocol_version >= "2026-07-28"


async def test_an_ask_is_put_to_a_stateless_client_within_the_request(http_server):
    asked: list[str] = []

    async def elicit(ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "once"})

    async with Client(http_server, elicitation_callback=elicit) as client:
        ok = await client.call_tool("Guarded", {"text": "stateless"})
    assert not ok.is_error, text_of(ok)
    assert text_of(ok) == "guarded ran with stateless"
    assert len(asked) == 1 and "Guarded" in asked[0]


async def test_a_declined_ask_refuses_the_call(http_server):
    async def elicit(ctx, params):
        return types.ElicitResult(action="decline")

    async with Client(http_server, elicitation_callback=elicit) as client:
        refused = await client.call_tool("Guarded", {"text": "no"})
    assert refused.is_error and "guarded ran" not in text_of(refused)


async def test_a_client_without_elicitation_is_told_why(http_server):
    async with Client(http_server) as client:
        refused = await client.call_tool("Guarded", {"text": "no"})
    assert refused.is_error and "elicitation" in text_of(refused)


async def test_tools_list_offers_only_what_the_request_can_back(http_server):
    async def elicit(ctx, params):
        return types.ElicitResult(action="decline")

    async def sample(ctx, params):
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="x"),
                                         model="m")

    async with Client(http_server) as bare:
        plain = {t.name for t in (await bare.list_tools()).tools}
    async with Client(http_server, elicitation_callback=elicit, sampling_callback=sample) as able:
        asking = {t.name for t in (await able.list_tools()).tools}
    assert "Read" in plain and "Read" in asking
    assert not {"AskUserQuestion", "ExitPlanMode", "Agent", "SendMessage"} & plain
    assert {"AskUserQuestion", "ExitPlanMode"} <= asking, sorted(asking)
    assert not {"Agent", "SendMessage"} & asking, "sampling cannot run over input rounds"


async def test_ask_user_question_works_over_input_rounds(http_server):
    async def elicit(ctx, params):
        return types.ElicitResult(action="accept", content={"q1": "Blue"})

    async with Client(http_server, elicitation_callback=elicit) as client:
        answered = await client.call_tool("AskUserQuestion", {"questions": [{
            "question": "Which colour?", "header": "Colour", "multiSelect": False,
            "options": [{"label": "Blue", "description": "b"}, {"label": "Red", "description": "r"}]}]})
    assert not answered.is_error, text_of(answered)
    assert "Blue" in text_of(answered)


async def test_a_long_bash_sends_progress_notifications(serve_args, workdir):
    import json

    (workdir / "test-config.json").write_text(json.dumps({
        "tools": {"bash": {"progressIntervalMs": 100}}}))
    seen: list[tuple[float, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async def elicit(ctx, params):
        return types.ElicitResult(action="accept", content={"decision": "once"})

    with http_serving(serve_args, workdir) as server:
        async with Client(server.url, elicitation_callback=elicit) as client:
            result = await client.call_tool(
                "Bash", {"command": "for i in 1 2 3 4 5; do echo $i; sleep 0.15; done"}, progress_callback=progress)
    assert not result.is_error, text_of(result)
    assert seen and all(m and "lines of output" in m for _d, m in seen), seen
