"""session_status: the fields it reports, the model override, host-reported usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pegboard_memory
import pegboard_session_status as status_tool
import pegboard_tasks
from pegboard import Pegboard
from pegboard.testing import check_tool, isolated_pegboard


def board(tmp_path: Path, config: dict[str, Any] | None = None) -> Pegboard:
    return isolated_pegboard(
        status_tool, pegboard_tasks, pegboard_memory, cwd=tmp_path, config=config,
        env={"PEGBOARD_DATA_DIR": str(tmp_path / "data")},
    )


def test_conforms() -> None:
    check_tool(status_tool.session_status, {"model": "default"})


async def test_reports_every_field(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    pb = board(tmp_path)
    async with pb.session(
        persist=False, agent="coder", provider="anthropic", model="claude-x", mode="plan", additional_dirs=[extra]
    ) as s:
        s.results.put("Read", "x" * 100)
        s.state.map(status_tool.BACKGROUND_TASKS)["b1"] = {"status": "running", "command": "npm run dev"}
        s.state.map(status_tool.BACKGROUND_TASKS)["b2"] = {"status": "exited", "command": "ls"}
        status_tool.report_usage(s, context_tokens=1200, context_window=200_000, token_budget=50_000)
        status_tool.report_usage(s, token_budget=None, tokens_used=900)
        result = await s.call("session_status", {})
        fields = result.structured
        assert fields is not None and not result.is_error
        assert fields["sessionId"] == s.id and fields["agent"] == "coder"
        assert (fields["provider"], fields["model"], fields["permissionMode"]) == ("anthropic", "claude-x", "plan")
        assert fields["workingDirs"] == [str(s.cwd), str(extra)]
        assert fields["tools"]["enabled"] == 9 and fields["tools"]["unavailable"] == 1
        assert "TodoWrite" in fields["tools"]["unavailableReasons"] and fields["tools"]["deferred"] == 0
        assert fields["backgroundTasks"]["running"] == 1
        assert fields["backgroundTasks"]["tasks"][0]["command"] == "npm run dev"
        assert fields["storedResults"] == {"count": 1, "bytes": 100}
        assert fields["usage"] == {"context_tokens": 1200, "context_window": 200_000, "tokens_used": 900}
        assert "Permission mode: plan" in result.text and "TodoWrite: unavailable: switched off" in result.text
        mine = await s.call("session_status", {"sessionKey": "main"})
        assert mine.structured is not None and mine.structured["sessionId"] == s.id
        other = await s.call("session_status", {"sessionId": "s_someone_else"})
        assert other.is_error and other.metadata["error_kind"] == "out_of_scope"


async def test_model_override_and_default(tmp_path: Path) -> None:
    pb = board(tmp_path, config={"tools": {"byProvider": {"acme": {"deny": ["group:memory"]}}}})
    async with pb.session(persist=False, provider="anthropic", model="claude-x") as s:
        assert "memory" in s.tools().enabled
        changed = await s.call("session_status", {"model": "acme/rocket-1"})
        assert changed.structured is not None and changed.structured["modelOverride"] == "acme/rocket-1"
        assert (s.selection.provider, s.selection.model) == ("acme", "rocket-1")
        assert "memory" not in s.tools().enabled and "session_status" in s.tools().enabled
        refused = await s.call("memory", {"action": "add", "content": "x"})
        assert refused.is_error
        renamed = await s.call("session_status", {"model": "rocket-2"})
        assert renamed.structured is not None and renamed.structured["provider"] == "acme"
        back = await s.call("session_status", {"model": "default"})
        assert back.structured is not None and back.structured["modelOverride"] is None
        assert (s.selection.provider, s.selection.model) == ("anthropic", "claude-x")
        assert "memory" in s.tools().enabled


async def test_results_are_never_cut(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session(persist=False) as s:
        status_tool.report_usage(s, note="n" * 300_000)
        result = await s.call("session_status", {})
        assert "truncated" not in result.metadata and len(result.text) > 300_000
