"""``pegboard serve`` over stdio, driven by the official MCP client against the real command."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from .conftest import PEGBOARD, serve_env


@asynccontextmanager
async def served(args: list[str], cwd: Path, **client_options: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=PEGBOARD, args=args, env=serve_env(), cwd=str(cwd))
    client_options.setdefault("mode", "legacy")
    async with Client(params, **client_options) as client:
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_list_tools_with_annotations_and_schemas(serve_args, workdir):
    async with served(serve_args, workdir, mode="auto") as client:  # auto: discover, then initialize
        listed = await client.list_tools()
        info = client.server_info
    assert info is not None and info.name == "pegboard"
    by_name = {t.name: t for t in listed.tools}
    assert {"Read", "Echo", "Picture", "Guarded"} <= set(by_name)
    read = by_name["Read"]
    assert read.input_schema["type"] == "object"
    assert "file_path" in read.input_schema["properties"]
    assert read.annotations is not None
    assert read.annotations.read_only_hint is True
    assert read.annotations.destructive_hint is False
    guarded = by_name["Guarded"].annotations
    assert guarded is not None and guarded.destructive_hint is True


async def test_call_read_refusals_and_errors_keep_the_server_alive(serve_args, workdir):
    async with served(serve_args, workdir) as client:
        ok = await client.call_tool("Read", {"file_path": str(workdir / "hello.txt")})
        assert not ok.is_error and "hello" in text_of(ok) and "world" in text_of(ok)

        denied = await client.call_tool("Secret", {})
        assert denied.is_error and "denied" in text_of(denied).lower()

        unknown = await client.call_tool("NoSuchTool", {"x": 1})
        assert unknown.is_error and "Unknown tool" in text_of(unknown)

        bad = await client.call_tool("Read", {"file_path": 42, "limit": "many"})
        assert bad.is_error and "Invalid input for Read" in text_of(bad)

        missing = await client.call_tool("Read", {"file_path": str(workdir / "nope.txt")})
        assert missing.is_error and "does not exist" in text_of(missing)

        boom = await client.call_tool("Boom", {})
        assert boom.is_error and "boom" in text_of(boom)

        noisy = await client.call_tool("Noisy", {})  # prints to stdout: the stream must survive
        assert not noisy.is_error and text_of(noisy) == "quiet result"

        again = await client.call_tool("Read", {"file_path": str(workdir / "hello.txt")})
        assert not again.is_error


async def test_image_and_structured_results(serve_args, workdir):
    async with served(serve_args, workdir) as client:
        pic = await client.call_tool("Picture", {})
        images = [b for b in pic.content if isinstance(b, types.ImageContent)]
        assert len(images) == 1 and images[0].mime_type == "image/png" and images[0].data
        echo = await client.call_tool("Echo", {"text": "héllo"})
        assert echo.structured_content == {"length": 5}
        assert text_of(echo) == "héllo"


async def test_elicitation_accept_and_decline(serve_args, workdir):
    answers: list[str] = []
    asked: list[str] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        action = answers.pop(0)
        if action == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline" if action == "decline" else "cancel")

    async with served(serve_args, workdir, elicitation_callback=elicit) as client:
        answers.append("accept")
        ok = await client.call_tool("Guarded", {"text": "go"})
        assert not ok.is_error and text_of(ok) == "guarded ran with go"
        answers.append("decline")
        no = await client.call_tool("Guarded", {"text": "stop"})
        assert no.is_error and "refused" in text_of(no)
        answers.append("cancel")
        cancelled = await client.call_tool("Guarded", {"text": "later"})
        assert cancelled.is_error
    assert len(asked) == 3 and "Guarded" in asked[0] and '"go"' in asked[0]


async def test_ask_without_elicitation_is_refused_with_a_way_out(serve_args, workdir):
    async with served(serve_args, workdir) as client:
        result = await client.call_tool("Guarded", {"text": "go"})
    assert result.is_error
    message = text_of(result)
    assert "needs approval" in message and 'To allow it, add "Guarded" to permissions.allow' in message
    meta = (result.meta or {})["pegboard"]
    assert meta["reason"] == "not_approved" and meta["suggested_rules"] == ["Guarded"]
    assert "--mode" in meta["how_to_approve"] and "--mode" not in message


async def test_32_concurrent_calls(serve_args, workdir):
    """32 calls run at once: each waits until all 32 are running, which a server that ran them
    one after another would never reach."""
    async with served(serve_args, workdir) as client:
        met = await asyncio.gather(*(client.call_tool("Meet", {"group": "g", "count": 32}) for _ in range(32)))
        mixed = await asyncio.gather(
            *(client.call_tool("Echo", {"text": str(i)}) for i in range(32)),
            *(client.call_tool("Read", {"file_path": str(workdir / "hello.txt")}) for _ in range(32)),
        )
    assert [text_of(r) for r in met] == ["32 met"] * 32
    assert [text_of(r) for r in mixed[:32]] == [str(i) for i in range(32)]
    assert all(not r.is_error for r in mixed)


async def test_200_sequential_calls(serve_args, workdir):
    async with served(serve_args, workdir) as client:
        for _ in range(200):
            result = await client.call_tool("Read", {"file_path": str(workdir / "hello.txt")})
            assert not result.is_error


async def test_10_mib_argument(serve_args, workdir):
    text = "x" * (10 * 1024 * 1024)
    async with served(serve_args, workdir) as client:
        result = await client.call_tool("Echo", {"text": text})
        assert not result.is_error and result.structured_content == {"length": len(text)}
        after = await client.call_tool("Echo", {"text": "still here"})
        assert text_of(after) == "still here"


# -- raw bytes on stdin ---------------------------------------------------------------------------


async def _raw_server(serve_args: list[str], workdir: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        PEGBOARD,
        *serve_args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=serve_env(),
        cwd=str(workdir),
        limit=64 * 1024 * 1024,
    )


async def _send(proc: asyncio.subprocess.Process, payload: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(payload)
    await proc.stdin.drain()


async def _responses(proc: asyncio.subprocess.Process, count: int) -> dict[Any, dict[str, Any]]:
    assert proc.stdout is not None
    out: dict[Any, dict[str, Any]] = {}
    nulls = 0
    for _ in range(count):
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert line, "server closed stdout early"
        message = json.loads(line)
        if message.get("id") is None:
            nulls += 1
            out[f"null-{nulls}"] = message
        else:
            out[message["id"]] = message
    return out


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def _line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


async def test_malformed_lines_then_valid_requests_and_clean_exit_on_stdin_close(serve_args, workdir):
    proc = await _raw_server(serve_args, workdir)
    try:
        await _send(proc, b"this is not json\n")
        await _send(proc, b"\xff\xfe\x00garbage{{{\n")
        await _send(proc, b'{"jsonrpc":"2.0","id":')  # a truncated message, completed by garbage
        await _send(proc, b"]]]\n")
        await _send(proc, b"[1,2,3]\n")
        await _send(proc, b'{"jsonrpc":"2.0","id":7,"method":"no/such/method"}\n')
        await _send(proc, b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"nope"}\n')
        await _send(proc, b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}\n')
        await _send(proc, _line(INIT))
        await _send(proc, _line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        call = {
            "jsonrpc": "2.0",
            "id": "call-1",
            "method": "tools/call",
            "params": {"name": "Read", "arguments": {"file_path": str(workdir / "hello.txt")}},
        }
        await _send(proc, _line(call))
        got = await _responses(proc, 9)
        nulls = [v for k, v in got.items() if isinstance(k, str) and k.startswith("null-")]
        assert len(nulls) == 4 and {m["error"]["code"] for m in nulls} == {-32700, -32600}
        assert got[7]["error"]["code"] == -32601
        assert got[8]["error"]["code"] == -32602
        assert got[9]["error"]["code"] == -32602
        assert got[1]["result"]["protocolVersion"] == "2025-06-18"
        assert got["call-1"]["result"]["isError"] is False
        assert "hello" in got["call-1"]["result"]["content"][0]["text"]
        assert proc.stdin is not None
        proc.stdin.close()
        code = await asyncio.wait_for(proc.wait(), 15)
        assert code == 0
        assert proc.stderr is not None
        stderr = (await proc.stderr.read()).decode(errors="replace")
        assert "Traceback" not in stderr
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_stdin_close_with_calls_in_flight_exits_cleanly(serve_args, workdir):
    proc = await _raw_server(serve_args, workdir)
    try:
        await _send(proc, _line(INIT))
        for i in range(5):
            call = {
                "jsonrpc": "2.0",
                "id": 100 + i,
                "method": "tools/call",
                "params": {"name": "Sleep", "arguments": {"seconds": 0.2}},
            }
            await _send(proc, _line(call))
        assert proc.stdin is not None
        proc.stdin.close()
        code = await asyncio.wait_for(proc.wait(), 15)
        assert code == 0
        assert proc.stdout is not None
        lines = (await proc.stdout.read()).splitlines()
        ids = {json.loads(line)["id"] for line in lines}
        assert {1, 100, 101, 102, 103, 104} <= ids  # requests read before the close are answered
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.parametrize("size_mib", [12])
async def test_huge_raw_line_does_not_kill_the_server(serve_args, workdir, size_mib):
    proc = await _raw_server(serve_args, workdir)
    try:
        await _send(proc, _line(INIT))
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "Echo", "arguments": {"text": "y" * (size_mib * 1024 * 1024)}},
        }
        await _send(proc, _line(call))
        await _send(proc, _line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        got = await _responses(proc, 3)
        assert got[2]["result"]["structuredContent"] == {"length": size_mib * 1024 * 1024}
        assert got[3]["result"] == {}
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 15)


def test_broken_config_fails_before_serving(workdir):
    import subprocess

    bad = workdir / "bad.json"
    bad.write_text('{"permissions": {"allow": 5}}', encoding="utf-8")
    done = subprocess.run(
        [PEGBOARD, "serve", "--config", str(bad)],
        input=_line(INIT),
        capture_output=True,
        env=serve_env(),
        cwd=str(workdir),
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert b"permissions.allow" in done.stderr
