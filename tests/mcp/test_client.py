"""MCP servers as tool sources: Pegboard's own ``serve`` (round trip) and a small SDK server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pegboard import ImageBlock, Pegboard

from .conftest import PEGBOARD, SUPPORT, serve_env

SDK_SERVER = str(SUPPORT / "sdk_server.py")


def approve(call: Any, decision: Any) -> bool:
    return True


def write_config(workdir: Path, servers: dict[str, Any], **extra: Any) -> Path:
    path = workdir / "mcp-config.json"
    path.write_text(json.dumps({"mcpServers": servers, **extra}), encoding="utf-8")
    return path


def sdk_entry(**env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SDK_SERVER], "env": env}


def peg_entry(workdir: Path) -> dict[str, Any]:
    return {
        "command": PEGBOARD,
        "args": ["serve", "--plugin", "pegboard_mcp_testtools", "--cwd", str(workdir)],
        "env": serve_env(),
    }


def wait_until(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def manager_of(pb: Pegboard) -> Any:
    from pegboard_mcp_client.tools import manager_for

    manager = manager_for(pb)
    assert manager is not None
    return manager


@pytest.fixture
def pegboards() -> Iterator[list[Pegboard]]:
    made: list[Pegboard] = []
    yield made
    for pb in made:
        from pegboard_mcp_client.tools import manager_for

        if (manager := manager_for(pb)) is not None:
            manager.close()


def build(pegboards: list[Pegboard], workdir: Path, config: Path, monkeypatch: Any, wait: float = 20) -> Pegboard:
    monkeypatch.setenv("PEGBOARD_MCP_STARTUP_WAIT", str(wait))
    pb = Pegboard(config_files=[config], cwd=workdir)
    pegboards.append(pb)
    return pb


async def test_round_trip_through_pegboard_serve(workdir, monkeypatch, pegboards):
    config = write_config(workdir, {"peg": peg_entry(workdir)})
    pb = build(pegboards, workdir, config, monkeypatch)
    enabled = set(pb.tools().enabled)
    assert {"mcp__peg__Echo", "mcp__peg__Read", "mcp__peg__Picture"} <= enabled
    echo = pb.tool("mcp__peg__Echo")
    assert echo is not None and echo.read_only and not echo.destructive
    assert echo.input_schema()["properties"]["text"]["type"] == "string"

    result = await pb.call("mcp__peg__Echo", {"text": "round trip"}, approver=approve)
    assert not result.is_error and result.text == "round trip" and result.structured == {"length": 10}

    read = await pb.call("mcp__peg__Read", {"file_path": str(workdir / "hello.txt")}, approver=approve)
    assert not read.is_error and "hello" in read.text

    picture = await pb.call("mcp__peg__Picture", {}, approver=approve)
    assert any(isinstance(b, ImageBlock) for b in picture.content), picture

    boom = await pb.call("mcp__peg__Boom", {}, approver=approve)
    assert boom.is_error and "boom" in boom.text

    # MCP tools ask unless a rule allows them; with nobody to ask the call is refused
    refused = await pb.call("mcp__peg__Echo", {"text": "x"})
    assert refused.is_error and refused.reason == "not_approved"

    # with every in-repo tool installed the MCP tools are past the defer threshold: they are
    # loaded through ToolSearch, not sent up front
    schema = pb.schema("mcp")
    names = {d["name"] for d in schema}
    assert "mcp__peg__Echo" in names or "ToolSearch" in names, sorted(names)


async def test_sdk_server_names_resources_and_errors(workdir, monkeypatch, pegboards):
    config = write_config(workdir, {"sdk": sdk_entry()})
    pb = build(pegboards, workdir, config, monkeypatch)
    names = [n for n in pb.tools().enabled if n.startswith("mcp__sdk__")]
    assert "mcp__sdk__add" in names
    upper = [n for n in names if n.startswith("mcp__sdk__Add")]
    assert len(upper) == 1 and upper[0] != "mcp__sdk__Add"  # collides with add (names ignore case)
    long = [n for n in names if n.startswith("mcp__sdk__do_something")]
    assert len(long) == 1 and len(long[0]) <= 64
    for name in names:
        assert len(name) <= 64 and all(c.isalnum() or c in "_-" for c in name)

    added = await pb.call("mcp__sdk__add", {"a": 2, "b": 3}, approver=approve)
    assert added.text == "5" and added.structured == {"result": 5}
    plus = await pb.call(upper[0], {"a": 2, "b": 3}, approver=approve)
    assert plus.text == "1005"
    odd = await pb.call(long[0], {"text": "x"}, approver=approve)
    assert odd.text == "long:x"

    failed = await pb.call("mcp__sdk__fail", {}, approver=approve)
    assert failed.is_error and "fail" in failed.text
    bad = await pb.call("mcp__sdk__add", {"a": "not a number"}, approver=approve)
    assert bad.is_error

    listed = await pb.call("ListMcpResourcesTool", {})
    assert not listed.is_error and "memo://greeting" in listed.text
    assert listed.structured is not None and listed.structured["resources"][0]["server"] == "sdk"
    alias = await pb.call("list_mcp_resources", {"server": "sdk"})
    assert "memo://greeting" in alias.text
    templates = await pb.call("ListMcpResourceTemplatesTool", {})
    assert "memo://notes/{topic}" in templates.text
    read = await pb.call("ReadMcpResourceTool", {"server": "sdk", "uri": "memo://greeting"})
    assert read.text == "hello from a resource"
    filled = await pb.call("read_mcp_resource", {"server": "sdk", "uri": "memo://notes/bees"})
    assert filled.text == "note about bees"
    missing = await pb.call("ReadMcpResourceTool", {"server": "nope", "uri": "memo://greeting"})
    assert missing.is_error


async def test_policy_and_server_level_names(workdir, monkeypatch, pegboards):
    config = write_config(workdir, {"sdk": sdk_entry()}, tools={"deny": ["mcp__sdk__fail"]})
    pb = build(pegboards, workdir, config, monkeypatch)
    enabled = pb.tools().enabled
    assert "mcp__sdk__add" in enabled and "mcp__sdk__fail" not in enabled
    refused = await pb.call("mcp__sdk__fail", {}, approver=approve)
    assert refused.is_error and refused.reason == "denied"


async def test_crash_mid_call_is_reported_and_reconnected(workdir, monkeypatch, pegboards, tmp_path):
    mark = tmp_path / "starts.txt"
    config = write_config(workdir, {"sdk": sdk_entry(SDK_SERVER_MARK=str(mark))})
    pb = build(pegboards, workdir, config, monkeypatch)
    manager = manager_of(pb)
    crashed = await pb.call("mcp__sdk__crash", {}, approver=approve)
    assert crashed.is_error and crashed.reason == "tool_error"
    assert "disconnected" in crashed.text or "closed" in crashed.text.lower()
    wait_until(lambda: manager.states["sdk"].status != "connected" or len(mark.read_text().split()) >= 2)
    wait_until(lambda: manager.states["sdk"].status == "connected" and len(mark.read_text().split()) >= 2)
    again = await pb.call("mcp__sdk__add", {"a": 1, "b": 1}, approver=approve)
    assert not again.is_error and again.text == "2"


async def test_dead_server_tools_are_unavailable(workdir, monkeypatch, pegboards):
    config = write_config(workdir, {"sdk": sdk_entry()})
    pb = build(pegboards, workdir, config, monkeypatch)
    state = manager_of(pb).states["sdk"]
    state.status, state.error = "reconnecting", "test says so"  # as the supervisor marks a dropped server
    try:
        tool = pb.tool("mcp__sdk__add")
        assert tool is not None and "test says so" in (tool.unavailable_reason() or "")
        assert "mcp__sdk__add" not in pb.tools().enabled  # the policy drops unavailable tools
        result = await pb.call("mcp__sdk__add", {"a": 1, "b": 1}, approver=approve)
        assert result.is_error and result.reason in ("unavailable", "denied")
    finally:
        state.status, state.error = "connected", None


async def test_slow_server_and_wait_for_mcp_servers(workdir, monkeypatch, pegboards):
    config = write_config(workdir, {"slow": sdk_entry(SDK_SERVER_SLOW="1.5")})
    pb = build(pegboards, workdir, config, monkeypatch, wait=0.05)
    assert not any(n.startswith("mcp__slow__") for n in pb.tools().enabled)
    assert manager_of(pb).states["slow"].status in ("connecting", "pending")
    waited = await pb.call("WaitForMcpServers", {"servers": ["slow"], "timeout": 30})
    assert not waited.is_error and waited.structured is not None
    assert waited.structured["servers"][0]["status"] == "connected"
    assert "mcp__slow__add" in waited.text
    assert "mcp__slow__add" in pb.tools().enabled
    unknown = await pb.call("WaitForMcpServers", {"servers": ["nope"]})
    assert unknown.is_error and "slow" in unknown.text


async def test_unreachable_server_is_reported(workdir, monkeypatch, pegboards):
    config = write_config(workdir, {"broken": {"command": str(workdir / "no-such-binary")}})
    pb = build(pegboards, workdir, config, monkeypatch, wait=10)
    state = manager_of(pb).states["broken"]
    assert state.status in ("failed", "reconnecting") and state.error
    waited = await pb.call("WaitForMcpServers", {"timeout": 1})
    assert ("broken: " in waited.text and "failed" in waited.text) or "reconnecting" in waited.text


def test_mcp_json_and_cli(workdir):
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"sdk": sdk_entry()}}), encoding="utf-8")
    env = {**serve_env(), "PEGBOARD_MCP_STARTUP_WAIT": "20"}
    env.pop("PEGBOARD_TRUST_PROJECT", None)
    untrusted = subprocess.run(
        [PEGBOARD, "mcp", "list", "--json"], cwd=workdir, env=env, capture_output=True, text=True, timeout=60
    )
    assert json.loads(untrusted.stdout)["servers"] == [], "an untrusted project's .mcp.json starts nothing"
    assert "not started" in untrusted.stderr and "pegboard trust" in untrusted.stderr
    trusted = subprocess.run([PEGBOARD, "trust"], cwd=workdir, env=env, capture_output=True, text=True, timeout=60)
    assert trusted.returncode == 0, trusted.stderr
    listed = subprocess.run(
        [PEGBOARD, "mcp", "list", "--json"], cwd=workdir, env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    server = data["servers"][0]
    assert server["name"] == "sdk" and server["status"] == "connected"
    assert {"name": "mcp__sdk__add", "original": "add", "deferred": False} in server["tools"]

    called = subprocess.run(
        [PEGBOARD, "mcp", "call", "sdk.add", "--input", '{"a": 20, "b": 22}', "--yes", "--json"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structured"] == {"result": 42}

    wrong = subprocess.run(
        [PEGBOARD, "mcp", "call", "sdk.nope", "--yes"], cwd=workdir, env=env, capture_output=True, text=True, timeout=60
    )
    assert wrong.returncode != 0 and "no tool 'nope'" in wrong.stderr


def test_names_are_safe_and_stable():
    from pegboard_mcp_client.names import tool_name

    assert tool_name("github", "get_issue") == "mcp__github__get_issue"
    assert tool_name("my.server", "a b/c") == "mcp__my_server__a_b_c"
    long = tool_name("srv", "x" * 100)
    assert len(long) == 64 and long == tool_name("srv", "x" * 100)
    taken = {"mcp__srv__tool"}
    other = tool_name("srv", "tool", lambda n: n in taken)
    assert other != "mcp__srv__tool" and other.startswith("mcp__srv__tool_") and len(other) <= 64


def test_mcp_servers_is_the_client_plugins_config_section(tmp_path: Path) -> None:
    import pegboard_mcp_client
    from pegboard import ConfigError, ConfigLayer

    def board(servers: dict[str, Any]) -> Pegboard:
        layers = [ConfigLayer("cli", {"mcpServers": servers}, path=tmp_path / "c.json")]
        return Pegboard(layers=layers, plugins=[pegboard_mcp_client], load_entrypoints=False, cwd=tmp_path)

    pb = board({"off": {"url": "http://127.0.0.1:9/mcp", "disabled": True, "timout": 3}})
    try:
        assert pb.settings("mcpServers").root["off"].disabled is True
        assert [w for w in pb.warnings if "unknown key" in w] == [
            f"{tmp_path / 'c.json'}: unknown key 'mcpServers.off.timout' (ignored); "
            "did you mean 'mcpServers.off.timeout'?"
        ]
    finally:
        pb.close()
    with pytest.raises(ConfigError, match="needs either 'command'"):
        board({"bad": {"args": ["x"]}})


async def test_a_server_that_dies_between_calls_is_noticed_without_waiting_for_a_ping(
    workdir, monkeypatch, pegboards, tmp_path
):
    """The end of the server's stream is seen as it happens (the watched transport), not at
    the next ping, which comes only every 15 seconds."""
    import signal

    mark, pidfile = tmp_path / "starts.txt", tmp_path / "pid.txt"
    config = write_config(workdir, {"sdk": sdk_entry(SDK_SERVER_MARK=str(mark), SDK_SERVER_PIDFILE=str(pidfile))})
    pb = build(pegboards, workdir, config, monkeypatch)
    manager = manager_of(pb)
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    wait_until(lambda: manager.states["sdk"].status != "connected" or len(mark.read_text().split()) >= 2,
               timeout=10.0)
    wait_until(lambda: manager.states["sdk"].status == "connected" and len(mark.read_text().split()) >= 2)
    again = await pb.call("mcp__sdk__add", {"a": 2, "b": 2}, approver=approve)
    assert not again.is_error and again.text == "4"


def test_the_client_reads_no_private_attribute_of_the_sdk() -> None:
    """Plugin state and connection health come from public SDK protocols only."""
    import ast

    import pegboard_mcp_client

    for source in Path(pegboard_mcp_client.__file__).parent.glob("*.py"):
        tree = ast.parse(source.read_text("utf-8"))
        private = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                   and n.attr.startswith("_") and not n.attr.startswith("__")
                   and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))]
        assert private == [], f"{source.name} reads {private}"


def test_a_call_longer_than_the_keep_alive_prints_no_deprecation_warning(workdir):
    """The 2026-07-28 protocol removed ping; the keep-alive must not use it (the SDK warns)."""
    config = write_config(workdir, {"sdk": sdk_entry()})
    env = {**serve_env(), "PEGBOARD_MCP_STARTUP_WAIT": "20", "PEGBOARD_MCP_KEEPALIVE": "0.1",
           "PYTHONWARNINGS": "default"}
    called = subprocess.run(
        [PEGBOARD, "mcp", "call", "sdk.nap", "--input", '{"seconds": 0.6}', "--yes", "--json",
         "--config", str(config)],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=60,
    )
    assert called.returncode == 0, called.stderr
    assert "slept 0.6" in called.stdout
    assert "MCPDeprecationWarning" not in called.stderr and "ping is removed" not in called.stderr, called.stderr


async def test_a_large_stdio_result_arrives_whole_and_is_stored_in_a_session(workdir, monkeypatch, pegboards):
    """A real stdio server sends one 4 MiB line; the client reads it whole (in linear time:
    benchmarks/bench_mcp_client_big.py times 50 MiB) and a session keeps it as a stored result."""
    config = write_config(workdir, {"sdk": sdk_entry()})
    pb = build(pegboards, workdir, config, monkeypatch)
    line = "0123456789" * 7 + "\n"
    expected = line * int(4 * (1 << 20) / len(line))
    async with pb.session(approver=approve) as session:
        cut = await session.call("mcp__sdk__big", {"mib": 4})
        assert not cut.is_error and cut.text.startswith(expected[:1000]) and len(cut.text) < len(expected)
        found = re.search(r"tr_[0-9a-f]+", cut.text)
        assert found is not None, cut.text[-300:]
        stored = session.results.get(found.group(0))
        assert stored is not None and stored.text == expected
