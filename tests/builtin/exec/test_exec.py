"""The exec tool: seconds, yieldMs auto-backgrounding, background, pty, and the synchronous fallback."""

from __future__ import annotations

from pathlib import Path

import pegboard_bash
import pegboard_exec
from pegboard.testing import check_tool
from tests.builtin.runtime_support import runtime_pegboard


def test_conforms() -> None:
    check_tool(pegboard_exec.exec_, {"command": "ls", "timeout": 5, "yieldMs": 100, "background": False, "pty": True})


async def test_a_quick_command_returns_its_output(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        result = await session.call("exec", {"command": "echo hi; exit 4"})
        listed = await session.call("process", {"action": "list"})
    assert result.is_error and result.text == "hi\nExit code 4"
    assert result.structured is not None
    assert result.structured["status"] == "failed" and result.structured["exit_code"] == 4
    assert listed.text == "No background sessions.", "a command that finished in time leaves no session"


async def test_a_slow_command_moves_to_the_background_after_yield_ms(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        result = await session.call("exec", {"command": "echo first; sleep 1.5; echo second", "yieldMs": 600})
        assert result.structured is not None and result.structured["status"] == "running"
        sid = result.structured["sessionId"]
        assert "first" in result.structured["tail"]
        done = await session.call("TaskOutput", {"task_id": sid, "timeout": 5000})
    assert done.structured is not None and done.structured["task"]["output"] == "first\nsecond\n"


async def test_timeout_is_in_seconds(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        result = await session.call("exec", {"command": "sleep 30", "timeout": 1, "yieldMs": 5000})
    assert result.is_error and "timed out after 1 seconds" in result.text
    assert result.structured is not None and result.structured["interrupted"] is True


async def test_pty_gives_a_terminal(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        tty = await session.call("exec", {"command": "test -t 1 && echo is-a-tty", "pty": True})
        plain = await session.call("exec", {"command": "test -t 1 && echo is-a-tty || echo no-tty"})
    assert tty.text.strip() == "is-a-tty"
    assert plain.text == "no-tty"


async def test_without_process_exec_runs_synchronously(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path, modules=(pegboard_exec, pegboard_bash))
    async with pb.session() as session:
        result = await session.call("exec", {"command": "sleep 0.3; echo waited", "background": True, "yieldMs": 10})
    assert not result.is_error
    assert result.text == "waited"
    assert result.structured is not None and result.structured["status"] == "completed"


async def test_exec_answers_to_bash_rules(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    config = {"permissions": {"allow": ["exec"], "deny": ["Bash(touch *)"]}}
    pb = runtime_pegboard(tmp_path, config=config)
    async with pb.session() as session:
        result = await session.call("exec", {"command": f"true; touch {marker}"})
    assert result.is_error and result.reason == "denied"
    assert not marker.exists()


async def test_defaults_come_from_config(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path, config={"tools": {"exec": {"timeoutSec": 1, "yieldMs": 100}}})
    async with pb.session() as session:
        yielded = await session.call("exec", {"command": "sleep 0.5; echo late"})
        assert yielded.structured is not None and yielded.structured["status"] == "running"
        done = await session.call("TaskOutput", {"task_id": yielded.structured["sessionId"]})
        assert done.structured is not None and done.structured["task"]["output"] == "late\n"
        killed = await session.call("exec", {"command": "sleep 30", "yieldMs": 5000})
    assert killed.is_error and "timed out after 1 seconds" in killed.text


async def test_output_past_the_cap_shows_its_first_and_last_1000_characters(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        result = await session.call("exec", {"command": "seq 1 20000; echo 'fatal: at the end'; exit 2"})
    s = result.structured
    assert s is not None and s["truncated"] is True and s["output_file"]
    text = result.text
    assert text.index("First 1,000 characters:\n1\n2\n") < text.index(s["output_file"]) < text.index(
        "Last 1,000 characters:")
    assert text.endswith("20000\nfatal: at the end\nExit code 2")
    assert len(s["output"]) == 1000 and s["output_tail"].endswith("fatal: at the end\n")
