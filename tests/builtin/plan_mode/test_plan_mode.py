"""EnterPlanMode / ExitPlanMode: the mode switch, the approve_plan hook, refusal and restore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pegboard_plan_mode as plan
import pegboard_write
from pegboard import Pegboard, PlanDecision, PlanRequest, hookimpl
from pegboard.testing import check_tool, isolated_pegboard


class Reviewer:
    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.seen: list[PlanRequest] = []

    @hookimpl
    def approve_plan(self, request: PlanRequest) -> Any:
        self.seen.append(request)
        return self.answers.pop(0)


def board(tmp_path: Path, *plugins: object) -> Pegboard:
    env = {"PEGBOARD_DATA_DIR": str(tmp_path / "d")}
    return isolated_pegboard(plan, pegboard_write, *plugins, cwd=tmp_path, env=env)


def test_conforms() -> None:
    check_tool(plan.enter_plan_mode, {})
    check_tool(plan.exit_plan_mode, {"plan": "1. do it"})


async def test_enter_blocks_edits_and_approval_restores_the_mode(tmp_path: Path) -> None:
    reviewer = Reviewer(PlanDecision(approved=False, feedback="add tests"), True)
    pb = board(tmp_path, reviewer)
    async with pb.session(mode="acceptEdits") as s:
        entered = await s.call("EnterPlanMode", {})
        assert not entered.is_error and s.mode == "plan"
        blocked = await s.call("Write", {"file_path": str(tmp_path / "x.txt"), "content": "x"})
        assert blocked.is_error and not (tmp_path / "x.txt").exists()
        refused = await s.call("ExitPlanMode", {"plan": "1. write x"})
        assert refused.is_error and refused.metadata["error_kind"] == "plan_rejected"
        assert "add tests" in refused.text and s.mode == "plan"
        approved = await s.call("ExitPlanMode", {"plan": "1. write x\n2. test"})
        assert not approved.is_error and s.mode == "acceptEdits"
        assert reviewer.seen[1] == PlanRequest("1. write x\n2. test", "acceptEdits")
        written = await s.call("Write", {"file_path": str(tmp_path / "x.txt"), "content": "x"})
        assert not written.is_error, written.text
        session_id = s.id
    async with pb.session(session_id=session_id) as again:
        assert again.mode == "acceptEdits"


async def test_approval_may_name_the_mode_and_the_mode_survives_resume(tmp_path: Path) -> None:
    pb = board(tmp_path, Reviewer(PlanDecision(approved=True, mode="bypassPermissions")))
    async with pb.session() as s:
        await s.call("EnterPlanMode", {})
        session_id = s.id
    async with pb.session(session_id=session_id) as s:
        assert s.mode == "plan"
        done = await s.call("ExitPlanMode", {"plan": "go"})
        assert done.structured == {"approved": True, "mode": "bypassPermissions", "plan": "go"}
        assert s.mode == "bypassPermissions"


async def test_exit_outside_plan_mode_and_without_a_host(tmp_path: Path) -> None:
    pb = board(tmp_path, Reviewer(True))
    async with pb.session(persist=False) as s:
        result = await s.call("ExitPlanMode", {"plan": "x"})
        assert result.is_error and result.metadata["error_kind"] == "not_in_plan_mode"
    lonely = board(tmp_path)
    disabled = {d.name: d.reason for d in lonely.tools().disabled}
    assert "approve_plan" in disabled["ExitPlanMode"] and "EnterPlanMode" in lonely.tools().enabled


async def test_a_bad_host_answer_is_an_error_result(tmp_path: Path) -> None:
    pb = board(tmp_path, Reviewer("yes please"))
    async with pb.session(persist=False) as s:
        await s.call("EnterPlanMode", {})
        result = await s.call("ExitPlanMode", {"plan": "x"})
    assert result.is_error and result.metadata["error_kind"] == "host_error"
