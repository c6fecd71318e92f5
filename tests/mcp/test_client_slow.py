"""A slow MCP server (seconds to start): said so, waited for on request, stopped at exit."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from pegboard import Pegboard

from .conftest import PEGBOARD, SUPPORT, serve_env

SDK_SERVER = str(SUPPORT / "sdk_server.py")


def slow_config(workdir: Path, seconds: float, pidfile: Path | None = None) -> Path:
    env = {"SDK_SERVER_SLOW": str(seconds)}
    if pidfile is not None:
        env["SDK_SERVER_PIDFILE"] = str(pidfile)
    path = workdir / "slow-config.json"
    entry = {"command": sys.executable, "args": [SDK_SERVER], "env": env}
    path.write_text(json.dumps({"mcpServers": {"slow": entry}}), encoding="utf-8")
    return path


def pegboard(workdir: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PEGBOARD, *args], cwd=workdir, env=serve_env(), capture_output=True, text=True, timeout=timeout
    )


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_for_file(path: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text(encoding="utf-8")):
            return text
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written in time")


def test_tools_warns_that_a_slow_server_is_still_connecting(workdir):
    config = slow_config(workdir, 20)
    done = pegboard(workdir, "tools", "--config", str(config), "--wait-mcp", "0.2", "--json")
    assert done.returncode == 0, done.stderr
    assert "server 'slow' is still connecting" in done.stderr
    assert "--wait-mcp" in done.stderr
    assert not any(n.startswith("mcp__slow__") for n in json.loads(done.stdout)["enabled"])


def test_call_to_a_slow_server_is_unavailable_not_unknown(workdir):
    config = slow_config(workdir, 20)
    done = pegboard(
        workdir, "call", "mcp__slow__add", "--input", '{"a": 1, "b": 2}', "--config", str(config),
        "--wait-mcp", "0.2", "--yes", "--json",
    )  # fmt: skip
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["reason"] == "unavailable"
    text = result["content"][0]["text"]
    assert "server 'slow' is still connecting" in text and "Unknown tool" not in text


def test_wait_mcp_waits_for_the_server(workdir):
    config = slow_config(workdir, 1.5)
    done = pegboard(
        workdir, "call", "mcp__slow__add", "--input", '{"a": 20, "b": 22}', "--config", str(config),
        "--wait-mcp", "30", "--yes", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structured"] == {"result": 42}
    assert "still connecting" not in done.stderr
    schema = pegboard(workdir, "schema", "--format", "mcp", "--config", str(config), "--wait-mcp", "30")
    assert schema.returncode == 0, schema.stderr
    assert "mcp__slow__add" in {t["name"] for t in json.loads(schema.stdout)}


def test_exit_stops_a_server_that_is_still_starting(workdir, tmp_path):
    """The server sleeps far longer than pegboard runs; it must not outlive pegboard (an
    orphan would print a broken-pipe traceback into the terminal once it wakes)."""
    pidfile = tmp_path / "server.pid"
    config = slow_config(workdir, 60, pidfile)
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w", encoding="utf-8") as stderr:
        proc = subprocess.Popen(
            [PEGBOARD, "tools", "--config", str(config), "--wait-mcp", "8"],
            cwd=workdir, env=serve_env(), stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
        assert proc.wait(timeout=60) == 0
    pid = int(wait_for_file(pidfile, timeout=1))
    gone = time.monotonic() + 2  # the kill has landed; give a loaded machine a moment to finish it
    while alive(pid) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not alive(pid), "the MCP server outlived the pegboard that started it"
    text = stderr_path.read_text(encoding="utf-8")
    assert "still connecting" in text
    assert "Traceback" not in text and "BrokenPipeError" not in text


async def test_api_close_stops_servers_and_pending_calls_say_why(workdir, monkeypatch, tmp_path):
    from pegboard_mcp_client.tools import MANAGER

    pidfile = tmp_path / "server.pid"
    monkeypatch.setenv("PEGBOARD_MCP_STARTUP_WAIT", "0.1")
    pb = Pegboard(config_files=[slow_config(workdir, 20, pidfile)], cwd=workdir)
    try:
        assert any("'slow' is still connecting" in w for w in pb.warnings)
        for name in ("mcp__slow__add", "MCP__Slow__Anything"):
            result = await pb.call(name, {})
            assert result.reason == "unavailable" and "still connecting" in result.text, result.text
        other = await pb.call("mcp__other__add", {})
        assert other.reason == "unknown_tool"
        pid = int(wait_for_file(pidfile))
        assert alive(pid)
    finally:
        await pb.aclose()
    assert MANAGER not in pb.stash
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)

