"""``tools/list`` pages (``--page-size``, opaque cursors) on both transports; JSON-RPC batches on stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters

from pegboard_mcp_server.paging import CursorError, encode_cursor, page

from .conftest import PEGBOARD, RawHttpSession, RawStdioSession, http_serving, serve_env

STALE = encode_cursor("NoSuchToolAnyMore")


async def test_stdio_pages(serve_args: list[str], workdir: Path) -> None:
    whole = await RawStdioSession.start(serve_args, workdir)
    paged = await RawStdioSession.start([*serve_args, "--page-size", "2"], workdir)
    try:
        everything = (await whole.request("tools/list"))["result"]
        assert "nextCursor" not in everything and len(everything["tools"]) > 4  # the default: one page
        pages = [(await paged.request("tools/list"))["result"]]
        while "nextCursor" in pages[-1]:
            pages.append((await paged.request("tools/list", {"cursor": pages[-1]["nextCursor"]}))["result"])
        assert all(len(p["tools"]) <= 2 for p in pages) and len(pages) == (len(everything["tools"]) + 1) // 2
        assert [t for p in pages for t in p["tools"]] == everything["tools"]
        for cursor in ("garbage", STALE, 42):
            error = (await paged.request("tools/list", {"cursor": cursor}))["error"]
            assert error["code"] == -32602 and "list tools again" in error["message"]
    finally:
        await whole.close()
        await paged.close()


def test_http_pages(serve_args: list[str], workdir: Path) -> None:
    with http_serving([*serve_args, "--page-size", "3"], workdir, host="127.0.0.2") as server:
        paged = RawHttpSession(server.url)
        pages = [paged.request("tools/list")["result"]]
        while "nextCursor" in pages[-1]:
            pages.append(paged.request("tools/list", {"cursor": pages[-1]["nextCursor"]})["result"])
        for cursor in ("garbage", STALE):
            error = paged.request("tools/list", {"cursor": cursor})["error"]
            assert error["code"] == -32602 and "list tools again" in error["message"]
        paged.close()
    names = [t["name"] for p in pages for t in p["tools"]]
    assert all(len(p["tools"]) == 3 for p in pages[:-1]) and 1 <= len(pages[-1]["tools"]) <= 3
    assert len(pages) > 1 and len(names) == len(set(names))
    assert {"Read", "Echo", "Picture", "Guarded", "Sleep"} <= set(names) and "Secret" not in names  # denied


async def test_official_client_follows_the_cursor(serve_args: list[str], workdir: Path) -> None:
    params = StdioServerParameters(
        command=PEGBOARD, args=[*serve_args, "--page-size", "1"], env=serve_env(), cwd=str(workdir)
    )
    async with Client(params, mode="legacy") as client:
        names: list[str] = []
        cursor: str | None = None
        while True:
            listed = await client.list_tools(cursor=cursor)
            assert len(listed.tools) == 1
            names += [t.name for t in listed.tools]
            cursor = listed.next_cursor
            if cursor is None:
                break
    assert {"Read", "Echo", "Guarded"} <= set(names) and len(names) == len(set(names))


# -- batches ----------------------------------------------------------------------------------------

PING = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
LIST = {"jsonrpc": "2.0", "id": "l", "method": "tools/list"}


async def test_stdio_batches_with_2025_03_26(serve_args: list[str], workdir: Path) -> None:
    session = await RawStdioSession.start(serve_args, workdir, protocol="2025-03-26")
    try:
        echo = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "Echo", "arguments": {"text": "b"}},
        }
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
        await session.send([PING, note, LIST, echo, {"jsonrpc": "2.0", "id": 10, "method": "resources/list"}, 7])
        answer = await session.read()
        assert isinstance(answer, list)
        by_id = {m["id"]: m for m in answer}
        assert set(by_id) == {"p", "l", 9, 10, None}  # the notification gets no answer
        assert by_id["p"]["result"] == {}
        assert any(t["name"] == "Echo" for t in by_id["l"]["result"]["tools"])
        assert by_id[9]["result"]["structuredContent"] == {"length": 1}
        assert by_id[10]["error"]["code"] == -32601
        assert by_id[None]["error"]["code"] == -32600

        await session.send([note])  # only notifications: nothing is answered
        await session.send([])
        empty = await session.read()
        assert isinstance(empty, dict) and "empty batch" in empty["error"]["message"]
        init = {"jsonrpc": "2.0", "id": 11, "method": "initialize", "params": {}}
        await session.send([init])
        refused = await session.read()
        assert isinstance(refused, list) and refused[0]["id"] == 11 and refused[0]["error"]["code"] == -32600
    finally:
        assert await session.close() == 0


@pytest.mark.parametrize("protocol", ["2025-06-18", "2025-11-25", "2024-11-05", None])
async def test_stdio_batches_are_refused_by_other_revisions(
    serve_args: list[str], workdir: Path, protocol: str | None
) -> None:
    session = await RawStdioSession.start(serve_args, workdir, protocol=protocol)
    try:
        await session.send([PING, LIST])
        answer = await session.read()
        assert isinstance(answer, dict) and answer["id"] is None and answer["error"]["code"] == -32600
        message = answer["error"]["message"]
        assert "batches are not accepted" in message and "2025-03-26" in message
        assert (protocol or "no protocol revision negotiated") in message
        await session.send(PING)
        assert await session.read() == {"jsonrpc": "2.0", "id": "p", "result": {}}
    finally:
        assert await session.close() == 0


def test_http_batches_get_a_clear_refusal(serve_args: list[str], workdir: Path) -> None:
    with http_serving(serve_args, workdir, host="127.0.0.2") as server:
        session = RawHttpSession(server.url, protocol="2025-03-26")
        response = session.http.post(server.url, json=[PING, LIST])
        session.close()
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600 and "batches are not accepted over HTTP" in error["message"]


# -- paging, for any tool list ----------------------------------------------------------------------


@given(st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=30), st.integers(1, 7))
def test_pages_cover_the_list_once(names: list[str], size: int) -> None:
    tools = [{"name": n} for n in names]
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(len(names) + 2):
        result = page(tools, cursor, size)
        assert len(result["tools"]) <= size
        seen += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert seen == names


@given(st.text(max_size=40))
def test_foreign_cursors_are_refused(cursor: str) -> None:
    tools = [{"name": "A"}, {"name": "B"}]
    try:
        result = page(tools, cursor, 1)
    except CursorError as exc:
        assert "list tools again" in str(exc)
    else:
        assert result["tools"] == [{"name": "B"}]
