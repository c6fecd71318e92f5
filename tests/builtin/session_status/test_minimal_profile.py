"""The minimal profile is exactly a working session_status, through `pegboard call` and `pegboard serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mcp_types as types
from mcp import Client, StdioServerParameters

VENV_BIN = Path(sys.executable).parent


def env_for(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}


def minimal_config(tmp_path: Path) -> Path:
    path = tmp_path / "minimal.json"
    path.write_text(json.dumps({"tools": {"profile": "minimal"}}))
    return path


def pegboard(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], capture_output=True, text=True, cwd=tmp_path,
        env=env_for(tmp_path), timeout=60,
    )


def test_through_pegboard_call(tmp_path: Path) -> None:
    config = str(minimal_config(tmp_path))
    tools = json.loads(pegboard(tmp_path, "tools", "--config", config, "--json").stdout)
    assert tools["enabled"] == ["session_status"]
    out = pegboard(tmp_path, "call", "session_status", "--input", "{}", "--config", config, "--json")
    result = json.loads(out.stdout)
    assert out.returncode == 0 and result["is_error"] is False
    assert result["structured"]["tools"]["enabled"] == 1
    denied = pegboard(tmp_path, "call", "tool_result_read", "--input", '{"ref": "tr_00000000"}', "--config", config)
    assert denied.returncode == 1


async def test_through_pegboard_serve(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(VENV_BIN / "pegboard"),
        args=["serve", "--config", str(minimal_config(tmp_path)), "--cwd", str(tmp_path)],
        env=env_for(tmp_path),
        cwd=str(tmp_path),
    )
    async with Client(params, mode="legacy") as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["session_status"]
        called = await client.call_tool("session_status", {})
        assert not called.is_error
        text = "\n".join(b.text for b in called.content if isinstance(b, types.TextContent))
        assert "Permission mode: default" in text and "Tools: 1 enabled" in text
