"""``pegboard serve --http``: streamable HTTP on 127.0.0.1, with the official client and Pegboard's own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from pegboard import Pegboard

from .conftest import RawHttpSession, http_serving


@pytest.fixture
def http_server(serve_args: list[str], workdir: Path) -> Iterator[str]:
    with http_serving(serve_args, workdir) as server:
        yield server.url
    assert server.proc.stdout is not None
    assert server.proc.stdout.read() == b""  # nothing but the protocol, and that goes over HTTP


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_list_call_refusal_image(http_server, workdir, mode):
    async with Client(http_server, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["Read"].annotations is not None and tools["Read"].annotations.read_only_hint is True
        ok = await client.call_tool("Read", {"file_path": str(workdir / "hello.txt")})
        assert not ok.is_error and "hello" in text_of(ok)
        denied = await client.call_tool("Secret", {})
        assert denied.is_error
        unknown = await client.call_tool("Nope", {})
        assert unknown.is_error
        pic = await client.call_tool("Picture", {})
        assert any(isinstance(b, types.ImageContent) for b in pic.content)
        echo = await client.call_tool("Echo", {"text": "abc"})
        assert echo.structured_content == {"length": 3}


async def test_http_elicitation_legacy(http_server):
    async def elicit(ctx, params):
        return types.ElicitResult(action="accept", content={"approve": True})

    async with Client(http_server, mode="legacy", elicitation_callback=elicit) as client:
        ok = await client.call_tool("Guarded", {"text": "http"})
    assert not ok.is_error and text_of(ok) == "guarded ran with http"


async def test_client_plugin_over_http(http_server, workdir, monkeypatch):
    config = workdir / "http-client.json"
    config.write_text(json.dumps({"mcpServers": {"remote": {"url": http_server}}}), encoding="utf-8")
    monkeypatch.setenv("PEGBOARD_MCP_STARTUP_WAIT", "20")
    pb = Pegboard(config_files=[config], cwd=workdir)
    try:
        assert "mcp__remote__Echo" in pb.tools().enabled
        result = await pb.call("mcp__remote__Echo", {"text": "over http"}, approver=lambda c, d: True)
        assert result.text == "over http" and result.structured == {"length": 9}
    finally:
        from pegboard_mcp_client.tools import manager_for

        manager = manager_for(pb)
        if manager is not None:
            manager.close()


def test_http_start_up_is_logged_once_at_info(serve_args, workdir):
    with http_serving([*serve_args, "--log-level", "INFO"], workdir, host="127.0.0.2") as server:
        RawHttpSession(server.url).close()
    assert server.proc.stderr is not None
    lines = server.proc.stderr.read().decode().splitlines()
    started = [line for line in lines if "streamable HTTP on" in line]
    assert started == [f"pegboard serve: INFO pegboard.mcp.serve: streamable HTTP on {server.url}"]
    assert not any(line.count("pegboard serve:") > 1 for line in lines)


def test_http_default_log_level_is_quiet(serve_args, workdir):
    with http_serving(serve_args, workdir, host="127.0.0.2") as server:
        RawHttpSession(server.url).close()
    assert server.proc.stderr is not None
    assert server.proc.stderr.read().decode() == ""
