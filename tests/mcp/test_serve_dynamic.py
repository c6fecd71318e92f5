"""``pegboard serve`` announces tools of an MCP server that connects after the first tools/list."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters

from .conftest import PEGBOARD, SUPPORT, serve_env


async def test_late_server_tools_are_announced(workdir):
    config = workdir / "late.json"
    server = {"command": sys.executable, "args": [str(SUPPORT / "sdk_server.py")], "env": {"SDK_SERVER_SLOW": "2"}}
    config.write_text(json.dumps({"mcpServers": {"late": server}}), encoding="utf-8")
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(
        command=PEGBOARD,
        args=["serve", "--config", str(config), "--cwd", str(workdir)],
        env=serve_env({"PEGBOARD_MCP_STARTUP_WAIT": "0.1"}),
        cwd=str(workdir),
    )
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__late__add" not in before and "WaitForMcpServers" in before
        await asyncio.wait_for(changed.wait(), 30)
        after = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__late__add" in after
