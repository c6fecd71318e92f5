"""``--max-body``: one message cap, the same on stdio and over HTTP, with a JSON-RPC error when exceeded."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from pegboard_mcp_server.limits import DEFAULT_MAX_BODY, UNITS, parse_size

from .conftest import ACCEPT, INIT, PEGBOARD, http_serving, serve_env


def echo_call(request_id: int, size: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "Echo", "arguments": {"text": "z" * size}},
    }


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


async def test_stdio_over_the_cap_is_a_json_rpc_error_and_the_server_goes_on(
    serve_args: list[str], workdir: Path
) -> None:
    proc = await asyncio.create_subprocess_exec(
        PEGBOARD,
        *serve_args,
        "--max-body",
        "4K",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=serve_env(),
        cwd=str(workdir),
    )
    assert proc.stdin is not None and proc.stdout is not None

    async def read() -> dict[str, Any]:
        assert proc.stdout is not None
        message: dict[str, Any] = json.loads(await asyncio.wait_for(proc.stdout.readline(), 20))
        return message

    try:
        proc.stdin.write(line(INIT))
        assert (await read())["id"] == 1
        big = line(echo_call(2, 10_000))
        proc.stdin.write(big)  # one whole line over the cap
        await proc.stdin.drain()
        whole = await read()
        proc.stdin.write(big[:3000])  # a line that grows over the cap across writes
        await proc.stdin.drain()
        await asyncio.sleep(0.2)
        proc.stdin.write(big[3000:])
        proc.stdin.write(line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        await proc.stdin.drain()
        split = await read()
        pong = await read()
        for error in (whole, split):
            assert error["id"] is None and error["error"]["code"] == -32600
            assert error["error"]["data"] == {"refused": "body", "limit": 4096}
            assert "--max-body" in error["error"]["message"] and "4,096 bytes" in error["error"]["message"]
        assert pong == {"jsonrpc": "2.0", "id": 3, "result": {}}
        proc.stdin.write(line(echo_call(4, 3000)))  # under the cap: fine
        await proc.stdin.drain()
        assert (await read())["result"]["structuredContent"] == {"length": 3000}
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 15)


@pytest.fixture
def capped(serve_args: list[str], workdir: Path) -> Iterator[str]:
    with http_serving([*serve_args, "--max-body", "64K"], workdir, host="127.0.0.2") as server:
        yield server.url


def test_http_over_the_cap_is_413_with_a_json_rpc_error(capped: str) -> None:
    body = json.dumps(echo_call(2, 100_000)).encode()
    declared = httpx.post(capped, content=body, headers=ACCEPT)

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(body), 8192):
            yield body[i : i + 8192]

    streamed = httpx.post(capped, content=chunks(), headers=ACCEPT)  # chunked: no Content-Length
    for response, size in ((declared, f"{len(body):,} bytes"), (streamed, "more than 65,536 bytes")):
        assert response.status_code == 413
        error = response.json()["error"]
        assert error["code"] == -32600 and error["data"] == {"refused": "body", "limit": 65536}
        assert size in error["message"] and "--max-body" in error["message"]
    assert httpx.post(capped, json=INIT, headers=ACCEPT).status_code == 200


async def test_http_default_cap_carries_10_mib(serve_args: list[str], workdir: Path) -> None:
    text = "x" * (10 * 1024 * 1024)
    with http_serving(serve_args, workdir, host="127.0.0.2") as server:
        async with Client(server.url, mode="legacy") as client:
            result = await client.call_tool("Echo", {"text": text})
    assert not result.is_error and result.structured_content == {"length": len(text)}


@pytest.mark.parametrize(("value", "expected"), [("lots", b"expected a number of bytes"), ("100", b"too small")])
def test_bad_max_body_is_a_usage_error(serve_args: list[str], workdir: Path, value: str, expected: bytes) -> None:
    done = subprocess.run(
        [PEGBOARD, *serve_args, "--max-body", value], capture_output=True, env=serve_env(), cwd=workdir, timeout=60
    )
    assert done.returncode == 2 and expected in done.stderr and b"--max-body" in done.stderr


@given(st.integers(0, 10**9), st.sampled_from(sorted(UNITS)), st.booleans())
def test_parse_size(number: int, unit: str, upper: bool) -> None:
    text = f"{number}{unit.upper() if upper else unit}"
    assert parse_size(text) == number * UNITS[unit]
    assert parse_size(f" {number} {unit} ") == number * UNITS[unit]


@given(st.text(max_size=20))
def test_parse_size_rejects_or_parses_anything(text: str) -> None:
    try:
        assert parse_size(text) >= 0
    except ValueError as exc:
        assert "expected a number of bytes" in str(exc)


def test_default_is_what_the_docs_say() -> None:
    assert parse_size("64MiB") == DEFAULT_MAX_BODY
    docs = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
    assert "64 MiB" in docs.read_text(encoding="utf-8")
