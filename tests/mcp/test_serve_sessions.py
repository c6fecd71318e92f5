"""``pegboard serve``: one Pegboard session per MCP session, progress, list_changed, --session."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from .conftest import PEGBOARD, http_serving, serve_env


@pytest.fixture
def session_args(serve_args: list[str]) -> list[str]:
    return [*serve_args, "--plugin", "pegboard_mcp_sessiontools"]


def names(listed: types.ListToolsResult) -> set[str]:
    return {t.name for t in listed.tools}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_a_tool_loaded_in_one_http_session_is_absent_from_another(session_args, workdir):
    with http_serving(session_args, workdir) as server:
        async with Client(server.url, mode="legacy") as one, Client(server.url, mode="legacy") as two:
            assert "LazyWeather" not in names(await one.list_tools())
            found = await one.call_tool("ToolSearch", {"query": "select:LazyWeather"})
            assert not found.is_error, text_of(found)
            assert "LazyWeather" in names(await one.list_tools())
            assert "LazyWeather" not in names(await two.list_tools())
            assert (await one.call_tool("LazyWeather", {})).is_error is False
            assert text_of(await one.call_tool("Tally", {})) == "1"
            assert text_of(await one.call_tool("Tally", {})) == "2"
            assert text_of(await two.call_tool("Tally", {})) == "1"


async def test_progress_and_list_changed_reach_the_official_client_over_http(session_args, workdir):
    notes: list[Any] = []

    async def on_message(message: Any) -> None:
        notes.append(message)

    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with http_serving(session_args, workdir) as server:
        async with Client(server.url, mode="legacy", message_handler=on_message) as client:
            result = await client.call_tool("Steps", {"n": 3}, progress_callback=on_progress)
            assert text_of(result) == "counted to 3"
            await client.call_tool("ToolSearch", {"query": "select:LazyWeather"})
            await client.list_tools()
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert any("ToolListChanged" in type(getattr(m, "root", m)).__name__ for m in notes), notes


async def test_stdio_progress_notifications(session_args, workdir):
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    params = StdioServerParameters(command=PEGBOARD, args=session_args, cwd=str(workdir), env=serve_env())
    async with Client(params) as client:
        result = await client.call_tool("Steps", {"n": 2}, progress_callback=on_progress)
        assert text_of(result) == "counted to 2"
    assert seen == [1.0, 2.0]


async def test_stdio_progress_from_a_worker_thread_arrives_in_order_before_the_result(session_args, workdir):
    seen: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async def on_log(params: Any) -> None:
        seen.append(params.data)

    params = StdioServerParameters(command=PEGBOARD, args=session_args, cwd=str(workdir), env=serve_env())
    async with Client(params, logging_callback=on_log) as client:
        result = await client.call_tool("ThreadSteps", {"n": 5}, progress_callback=on_progress)
        assert text_of(result) == "counted to 5 in a thread"
        assert seen == [1.0, 2.0, 3.0, 4.0, 5.0, "counted in a thread"]


async def test_stdio_concurrent_calls_each_get_their_own_progress(session_args, workdir):
    import anyio

    seen: dict[int, list[float]] = {n: [] for n in (2, 3, 4)}
    results: dict[int, tuple[str, list[float]]] = {}
    params = StdioServerParameters(command=PEGBOARD, args=session_args, cwd=str(workdir), env=serve_env())
    async with Client(params) as client:

        async def steps(n: int) -> None:
            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen[n].append(progress)

            result = await client.call_tool("Steps", {"n": n}, progress_callback=on_progress)
            results[n] = (text_of(result), list(seen[n]))

        async with anyio.create_task_group() as group:
            for n in seen:
                group.start_soon(steps, n)
    assert results == {n: (f"counted to {n}", [float(i + 1) for i in range(n)]) for n in seen}


async def test_stdio_session_resumes_a_stored_session(session_args, workdir, tmp_path: Path):
    env = serve_env({"PEGBOARD_DATA_DIR": str(tmp_path / "data")})
    args = [*session_args, "--session", "ide-7"]
    for expected in ("1", "2"):
        params = StdioServerParameters(command=PEGBOARD, args=args, cwd=str(workdir), env=env)
        async with Client(params) as client:
            assert text_of(await client.call_tool("Tally", {})) == expected
    store = tmp_path / "data" / "sessions.sqlite3"
    assert store.exists()


def test_session_is_refused_with_http(session_args, workdir):
    import subprocess

    proc = subprocess.run(
        [PEGBOARD, *session_args, "--session", "x", "--http", "127.0.0.1:1"],
        cwd=workdir, env=serve_env(), capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2 and "--session" in proc.stderr
    bad = subprocess.run(
        [PEGBOARD, *session_args, "--session", "../x"], cwd=workdir, env=serve_env(), capture_output=True,
        text=True, timeout=60, input="",
    )
    assert bad.returncode == 2 and "invalid session id" in bad.stderr


async def test_idle_client_sessions_are_closed(tmp_path):
    from pegboard.testing import isolated_pegboard
    from pegboard_mcp_server.bridge import Bridge

    now = [0.0]
    bridge = Bridge(isolated_pegboard(cwd=tmp_path), idle_timeout=10.0, clock=lambda: now[0])
    first = bridge.session_for("http:a")
    assert bridge.session_for("http:a") is first
    now[0] = 5.0
    bridge.session_for("http:b")
    now[0] = 16.0
    second = bridge.session_for("http:b")
    assert first.closed and not second.closed
    assert bridge.session_for("http:a") is not first
    await bridge.aclose()
    assert second.closed


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_log_events_reach_the_official_client(session_args, workdir, transport):
    got: list[Any] = []

    async def on_log(params: Any) -> None:
        got.append((params.level, params.data, params.logger))

    if transport == "stdio":
        params = StdioServerParameters(command=PEGBOARD, args=session_args, cwd=str(workdir), env=serve_env())
        async with Client(params, logging_callback=on_log) as client:
            assert text_of(await client.call_tool("Chatty", {})) == "said it"
    else:
        with http_serving(session_args, workdir) as server:
            async with Client(server.url, mode="legacy", logging_callback=on_log) as client:
                assert text_of(await client.call_tool("Chatty", {})) == "said it"
    assert ("warning", "careful", "chatty") in got and ("info", "plain words", None) in got


async def test_a_stateless_request_may_name_its_session(session_args, workdir):
    name = cast(types.RequestParamsMeta, {"io.pegboard/session": "conversation-0123456789"})
    short = cast(types.RequestParamsMeta, {"io.pegboard/session": "short"})
    with http_serving(session_args, workdir) as server:
        async with Client(server.url, mode="auto") as client:  # 2026-07-28: no Mcp-Session-Id
            first = text_of(await client.call_tool("Tally", {}, meta=name))
            second = text_of(await client.call_tool("Tally", {}, meta=name))
            other = text_of(await client.call_tool("Tally", {}, meta=short))
    assert (first, second, other) == ("1", "2", "1")  # a too-short name is no key: a one-call session


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_small_model_is_the_clients_own_through_sampling(session_args, workdir, transport):
    asked: list[str] = []

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        content = params.messages[0].content
        asked.append(content.text if isinstance(content, types.TextContent) else "")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="green"), model="client-model"
        )

    if transport == "stdio":
        params = StdioServerParameters(command=PEGBOARD, args=session_args, cwd=str(workdir), env=serve_env())
        async with Client(params, sampling_callback=sampling) as client:
            result = await client.call_tool("AskModel", {"question": "What colour is the sky?"})
        async with Client(params) as plain:
            without = await plain.call_tool("AskModel", {"question": "What colour?"})
    else:
        with http_serving(session_args, workdir) as server:
            async with Client(server.url, mode="legacy", sampling_callback=sampling) as client:
                result = await client.call_tool("AskModel", {"question": "What colour is the sky?"})
            async with Client(server.url, mode="legacy") as plain:
                without = await plain.call_tool("AskModel", {"question": "What colour?"})
    assert text_of(result) == "model said: green"
    assert asked and "the sky is green" in asked[0] and "What colour is the sky?" in asked[0]
    assert text_of(without) == "model said: None"


async def test_a_refusal_tells_an_mcp_client_how_to_allow_the_call(session_args, workdir):
    params = StdioServerParameters(command=PEGBOARD, args=session_args, cwd=str(workdir), env=serve_env())
    async with Client(params) as client:  # no elicitation callback: the client cannot be asked
        refused = await client.call_tool("Guarded", {"text": "x"})
    text, how = text_of(refused), (refused.meta or {})["pegboard"]["how_to_approve"]
    assert refused.is_error and '"Guarded"' in text and "elicitation" not in text
    assert "elicitation" in how and "--mode" in how  # the developer's instructions go to the host, not the model


async def test_an_http_session_the_client_deletes_is_closed_at_once(session_args, workdir, tmp_path):
    import asyncio
    import time

    marker = tmp_path / "closed.txt"
    with http_serving([*session_args, "--plugin", "pegboard_mcp_closewatch"], workdir) as server:
        async with Client(server.url, mode="legacy") as client:  # leaving it sends DELETE
            assert text_of(await client.call_tool("WatchClose", {"path": str(marker)})) == "watching"
            assert not marker.exists()
        deadline = time.monotonic() + 30  # a wait for the server, not a measurement
        while not marker.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert marker.read_text(encoding="utf-8") == "closed"


async def test_a_closed_client_session_leaves_nothing_in_memory(tmp_path):
    from pegboard.testing import isolated_pegboard
    from pegboard_mcp_server.bridge import Bridge

    bridge = Bridge(isolated_pegboard(cwd=tmp_path))
    session = bridge.session_for("http:gone")
    session.record_message("user", "x" * 10_000)
    assert session.store.load(session.id) is not None
    await bridge.forget("http:gone")
    assert session.closed and session.store.load(session.id) is None
    assert session.store.entries(session.id, "pegboard-transcript") == {}
    await bridge.aclose()
