"""In-process hook implementations (pluggy): sync and async, composing deterministically."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pegboard_command_hooks
from pegboard import HookDecision, Pegboard, Reason, ToolResult, hookimpl
from tests.hooks.support import Approver, ToolsPlugin, board, cmd, hooks, json_out, project_layer


class SyncGuard:
    @hookimpl
    def pre_tool_use(self, call: Any) -> HookDecision | None:
        if "rm -rf" in call.input.get("command", ""):
            return HookDecision(decision="deny", reason="sync guard")
        return None


class AsyncGuard:
    @hookimpl
    async def pre_tool_use(self, call: Any) -> HookDecision | None:
        await asyncio.sleep(0)
        if "shutdown" in call.input.get("command", ""):
            return HookDecision(decision="deny", reason="async guard")
        return None


class Append:
    """Rewrites the command by appending a flag; sync or async."""

    def __init__(self, flag: str, *, is_async: bool = False, delay: float = 0.0) -> None:
        self.flag, self.is_async, self.delay = flag, is_async, delay
        self.__name__ = f"append{flag}"

    def _rewrite(self, call: Any) -> HookDecision:
        return HookDecision(updated_input={**call.input, "command": call.input["command"] + self.flag})

    @hookimpl
    def pre_tool_use(self, call: Any) -> Any:
        if not self.is_async:
            return self._rewrite(call)

        async def later() -> HookDecision:
            await asyncio.sleep(self.delay)
            return self._rewrite(call)

        return later()


async def test_sync_and_async_implementations_both_block(tmp_path: Path) -> None:
    pb = board(tmp_path, {}, SyncGuard(), AsyncGuard(), with_command_hooks=False)
    first = await pb.call("Bash", {"command": "rm -rf /"}, mode="bypassPermissions")
    second = await pb.call("Bash", {"command": "shutdown now"}, mode="bypassPermissions")
    assert (first.reason, second.reason) == (Reason.HOOK_BLOCKED, Reason.HOOK_BLOCKED)
    assert "sync guard" in first.text and "async guard" in second.text


async def test_rewrites_compose_in_registration_order(tmp_path: Path) -> None:
    # the async one sleeps, so "finishing order" would differ from registration order
    forward = board(tmp_path, {}, Append(" -a", is_async=True, delay=0.05), Append(" -b"), with_command_hooks=False)
    backward = board(tmp_path, {}, Append(" -b"), Append(" -a", is_async=True, delay=0.05), with_command_hooks=False)
    for _ in range(3):
        one = await forward.call("Bash", {"command": "make"}, approver=Approver())
        two = await backward.call("Bash", {"command": "make"}, approver=Approver())
        assert one.structured is not None and one.structured["stdout"] == "ran: make -a -b"
        assert two.structured is not None and two.structured["stdout"] == "ran: make -b -a"


async def test_command_hooks_take_their_place_in_registration_order(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    config = hooks("PreToolUse", cmd(f"cat > {seen}"))
    after = board(tmp_path, config, Append(" -x"))  # command hooks registered before Append
    await after.call("Bash", {"command": "make"}, approver=Approver())
    assert json.loads(seen.read_text())["tool_input"]["command"] == "make"
    layers = [project_layer(tmp_path, config)]
    plugins = [ToolsPlugin(), Append(" -x"), pegboard_command_hooks]
    before = Pegboard(plugins=plugins, load_entrypoints=False, layers=layers, cwd=tmp_path)
    await before.call("Bash", {"command": "make"}, approver=Approver())
    assert json.loads(seen.read_text())["tool_input"]["command"] == "make -x"


async def test_in_process_deny_beats_a_command_hook_allow(tmp_path: Path) -> None:
    allow = json_out({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
    pb = board(tmp_path, hooks("PreToolUse", cmd(allow)), SyncGuard())
    result = await pb.call("Bash", {"command": "rm -rf /"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "sync guard" in result.text


class Broken:
    @hookimpl
    def pre_tool_use(self) -> None:
        raise RuntimeError("hook bug")


async def test_a_raising_hook_is_reported_not_fatal(tmp_path: Path) -> None:
    result = await board(tmp_path, {}, Broken(), with_command_hooks=False).call(
        "Bash", {"command": "make"}, approver=Approver()
    )
    assert not result.is_error
    assert result.metadata["hook_errors"][0]["error"] == "RuntimeError: hook bug"


class PostHooks:
    @hookimpl
    def post_tool_use(self, call: Any, result: ToolResult) -> HookDecision | None:
        if call.name == "Write":
            return HookDecision(additional_context="run the formatter")
        return None


class AsyncRedact:
    @hookimpl
    async def post_tool_use(self, result: ToolResult) -> ToolResult:
        await asyncio.sleep(0)
        return ToolResult.from_text(result.text.replace("secret", "******"))


async def test_post_tool_use_sync_context_and_async_replacement(tmp_path: Path) -> None:
    pb = board(tmp_path, {}, PostHooks(), AsyncRedact(), with_command_hooks=False)
    result = await pb.call("Write", {"file_path": "secret.txt", "content": "x"}, approver=Approver())
    assert "secret" not in result.text and "******.txt" in result.text
    assert result.metadata["additional_context"] == ["run the formatter"]


class Sessions:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    @hookimpl
    def session_start(self, session_id: str, source: str) -> HookDecision:
        self.events.append(("start", session_id, source))
        return HookDecision(additional_context=f"hello {session_id}")

    @hookimpl
    async def session_end(self, session_id: str, reason: str) -> None:
        await asyncio.sleep(0)
        self.events.append(("end", session_id, reason))


async def test_session_events_fire_in_process_and_command_hooks(tmp_path: Path) -> None:
    sessions = Sessions()
    config = hooks("SessionStart", cmd("echo from-config"), matcher="startup|resume")
    pb = board(tmp_path, config, sessions)
    answers = await pb.fire("session_start", session_id="abc", source="resume")
    assert sorted(a.additional_context or "" for a in answers) == ["from-config", "hello abc"]
    assert await pb.fire("session_end", session_id="abc", reason="exit") == []
    assert sessions.events == [("start", "abc", "resume"), ("end", "abc", "exit")]
