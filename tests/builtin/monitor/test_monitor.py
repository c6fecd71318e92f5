"""Monitor: every output line is an event, in order, and in the task's output file."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pegboard_monitor
from pegboard.testing import check_tool
from pegboard_toolkit.availability import monitor_unavailable
from tests.builtin.runtime_support import Events, runtime_pegboard


def test_conforms() -> None:
    check_tool(pegboard_monitor.monitor, {"command": "tail -f log", "description": "log", "timeout_ms": 1000,
                                          "persistent": False})


async def wait_until(check, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


async def test_each_line_is_an_event_in_order_and_in_the_file(tmp_path: Path) -> None:
    events = Events()
    pb = runtime_pegboard(tmp_path, events)
    async with pb.session() as session:
        started = await session.call("Monitor", {"command": "for i in $(seq 1 200); do echo line-$i; done",
                                                 "description": "count"})
        s = started.structured
        assert s is not None and s["timeoutMs"] == 300_000 and s["persistent"] is False
        task_id = s["taskId"]
        assert task_id.startswith("m")
        await wait_until(lambda: bool(events.of("task_exited")))
        out = await session.call("TaskOutput", {"task_id": task_id})
    lines = [e.data["line"] for e in events.of("task_output") if e.data["task_id"] == task_id]
    assert lines == [f"line-{i}" for i in range(1, 201)]
    assert [e.data["seq"] for e in events.of("task_output")] == list(range(1, 201))
    assert Path(s["output_file"]).read_text().splitlines() == lines
    assert out.structured is not None and out.structured["task"]["output"].splitlines() == lines


async def test_the_deadline_ends_a_monitor_unless_persistent(tmp_path: Path) -> None:
    events = Events()
    pb = runtime_pegboard(tmp_path, events)
    async with pb.session() as session:
        short = await session.call("Monitor", {"command": "echo tick; sleep 30", "timeout_ms": 300})
        keep = await session.call("Monitor", {"command": "echo tock; sleep 30", "timeout_ms": 300, "persistent": True})
        short_id = short.structured["taskId"]  # type: ignore[index]
        keep_id = keep.structured["taskId"]  # type: ignore[index]
        await wait_until(lambda: any(e.data["task_id"] == short_id for e in events.of("task_exited")))
        await asyncio.sleep(0.5)
        kept = await session.call("TaskOutput", {"task_id": keep_id, "block": False})
        assert kept.structured["task"]["status"] == "running"  # type: ignore[index]
        stopped = await session.call("TaskStop", {"task_id": keep_id})
        assert stopped.structured["status"] == "killed"  # type: ignore[index]
    ended = {e.data["task_id"]: e.data["status"] for e in events.of("task_exited")}
    assert ended == {short_id: "timeout", keep_id: "killed"}


async def test_timeout_is_clamped_to_an_hour(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        started = await session.call("Monitor", {"command": "true", "timeout_ms": 99_000_000})
    assert started.structured is not None and started.structured["timeoutMs"] == 3_600_000


async def test_monitor_answers_to_bash_rules(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    config = {"permissions": {"allow": ["Bash(echo *)"], "deny": ["Bash(touch *)"]}}
    pb = runtime_pegboard(tmp_path, config=config)
    async with pb.session() as session:
        denied = await session.call("Monitor", {"command": f"echo go && touch {marker}"})
        allowed = await session.call("Monitor", {"command": "echo go"})
    assert denied.is_error and denied.reason == "denied" and not marker.exists()
    assert not allowed.is_error


async def test_command_and_ws_are_exclusive(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        both = await session.call("Monitor", {"command": "true", "ws": {"url": "ws://127.0.0.1:1/"}})
        neither = await session.call("Monitor", {"description": "nothing"})
    assert both.reason == "invalid_input" and neither.reason == "invalid_input"
    assert both.metadata["error_kind"] == "invalid_input" == neither.metadata["error_kind"]
    assert "exactly one of command and ws" in both.text


@pytest.mark.parametrize("switch", ["DISABLE_TELEMETRY", "FUXI_CODE_DISABLE_NONESSENTIAL_TRAFFIC"])
def test_unavailable_while_nonessential_traffic_is_off(tmp_path: Path, switch: str) -> None:
    env = {**os.environ, switch: "1"}
    env.pop("DISABLE_TELEMETRY" if switch != "DISABLE_TELEMETRY" else "FUXI_CODE_DISABLE_NONESSENTIAL_TRAFFIC", None)
    proc = subprocess.run([sys.executable, "-m", "pegboard", "tools", "--json"], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)
    listed = json.loads(proc.stdout)
    assert "Monitor" not in listed["enabled"]
    reason = next(d["reason"] for d in listed["disabled"] if d["name"] == "Monitor")
    assert f"while {switch} is set" in reason


def test_available_when_the_switches_are_unset_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUXI_CODE_DISABLE_NONESSENTIAL_TRAFFIC", raising=False)
    monkeypatch.setenv("DISABLE_TELEMETRY", "")
    assert monitor_unavailable() is None


async def test_a_line_without_end_is_reported_in_pieces(tmp_path: Path) -> None:
    events = Events()
    pb = runtime_pegboard(tmp_path, events)
    async with pb.session() as session:
        await session.call("Monitor", {"command": "head -c 3000000 /dev/zero | tr '\\0' y"})
        await wait_until(lambda: bool(events.of("task_exited")))
    pieces = [e.data["line"] for e in events.of("task_output")]
    assert len(pieces) >= 2 and all(len(p) <= (1 << 20) + 65536 for p in pieces)
    assert "".join(pieces) == "y" * 3_000_000
