"""Background subagents: tasks of the session's one task table, run through the run_subagent hook."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import pegboard_agent as agent
import pegboard_background
import pegboard_bash
import pegboard_messages
import pegboard_read
import pegboard_write
from pegboard import MessageDelivery, Pegboard, PermissionDecision, SubagentRequest, ToolCall, hookimpl
from pegboard.testing import check_tool, isolated_pegboard


class Host:
    """Runs each subagent as a real session of the same Pegboard; a run waits for ``release``."""

    def __init__(self, pb_ref: list[Pegboard], *, write: Path | None = None) -> None:
        self.pb_ref = pb_ref
        self.write = write
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.requests: list[SubagentRequest] = []
        self.delivered: list[MessageDelivery] = []
        self.cancelled: list[str] = []
        self.results: list[Any] = []

    @hookimpl
    async def run_subagent(self, request: SubagentRequest) -> str:
        self.requests.append(request)
        self.started.set()
        async with self.pb_ref[0].session(**request.session_options()) as session:
            session.record_message("user", request.prompt)
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled.append(request.prompt)
                raise
            note = ""
            if self.write is not None:
                result = await session.call("Write", {"file_path": str(self.write), "content": "from the subagent"})
                self.results.append(result)
                note = f" (write: {'refused' if result.is_error else 'done'})"
            session.record_message("assistant", f"finished {request.prompt}{note}")
        return f"report for {request.prompt}{note}\nsecond line"

    @hookimpl
    def deliver_message(self, request: MessageDelivery) -> bool:
        self.delivered.append(request)
        return True


class Approver:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, call: ToolCall, decision: PermissionDecision) -> bool:
        self.asked.append((call.name, decision.reason))
        return self.answer


def board(tmp_path: Path, host_kwargs: dict[str, Any] | None = None,
          config: dict[str, Any] | None = None) -> tuple[Pegboard, Host]:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    env = {"PEGBOARD_CONFIG_DIR": str(tmp_path / "user"), "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    ref: list[Pegboard] = []
    host = Host(ref, **(host_kwargs or {}))
    plugs = (agent, pegboard_background, pegboard_messages, pegboard_read, pegboard_write, pegboard_bash, host)
    pb = isolated_pegboard(*plugs, cwd=project, env=env, config=config)
    ref.append(pb)
    return pb, host


def test_conforms() -> None:
    check_tool(agent.background_job, {"task": "index the docs"})
    check_tool(agent.subagent_list, {})
    check_tool(agent.subagent_history, {"task_id": "a123"})
    check_tool(agent.subagent_cancel, {"task_id": "a123"})


async def test_a_background_agent_returns_at_once_and_task_output_reads_its_report(tmp_path: Path) -> None:
    pb, host = board(tmp_path)
    async with pb.session() as s:
        launched = await s.call("Agent", {"description": "survey docs", "prompt": "survey", "run_in_background": True})
        assert not launched.is_error, launched.text
        data = launched.structured or {}
        task_id = data["task_id"]
        assert data["status"] == "async_launched" and task_id.startswith("a")
        assert not host.release.is_set()  # the call came back while the subagent still runs
        await host.started.wait()
        request = host.requests[0]
        assert request.background and request.parent_session_id == s.id and request.session_id
        early = await s.call("TaskOutput", {"task_id": task_id, "block": False})
        assert (early.structured or {})["retrieval_status"] == "not_ready"
        assert (early.structured or {})["task"]["status"] == "running"
        host.release.set()
        done = await s.call("TaskOutput", {"task_id": task_id, "timeout": 30_000})
        task = (done.structured or {})["task"]
        assert (done.structured or {})["retrieval_status"] == "success"
        assert task["status"] == "completed" and task["task_type"] == "agent"
        assert task["output"] == "report for survey\nsecond line\n"
        assert Path(task["output_file"]).read_text() == "report for survey\nsecond line\n"
        notice = host.delivered[-1]
        assert notice.kind == "task_notification" and notice.session_id == s.id
        assert "report for survey" in notice.text and notice.metadata["task_id"] == task_id
        history = await s.call("subagent_history", {"task_id": task_id})
        assert [m["content"] for m in (history.structured or {})["messages"]] == ["survey", "finished survey"]
        assert "report for survey" in ((history.structured or {})["report"] or "")


async def test_task_stop_cancels_a_background_agent_by_id_or_name(tmp_path: Path) -> None:
    pb, host = board(tmp_path)
    async with pb.session() as s:
        first = await s.call("Task", {"description": "long job", "prompt": "one", "run_in_background": True})
        await host.started.wait()
        first_id = (first.structured or {})["task_id"]
        missing = await s.call("TaskStop", {"task_id": "nope"})
        assert missing.is_error and missing.metadata["error_kind"] == "unknown_task"
        assert f"- {first_id}: long job" in missing.text
        stopped = await s.call("TaskStop", {"task_id": first_id})
        assert not stopped.is_error and (stopped.structured or {})["status"] == "killed"
        assert host.cancelled == ["one"]
        second = await s.call("Agent", {"description": "other job", "prompt": "two", "run_in_background": True})
        second_id = (second.structured or {})["task_id"]
        by_name = await s.call("TaskStop", {"task_id": "other job"})
        assert not by_name.is_error and (by_name.structured or {})["task_id"] == second_id
        again = await s.call("TaskStop", {"task_id": second_id})
        assert again.is_error and again.metadata["error_kind"] == "not_running"
        output = await s.call("TaskOutput", {"task_id": second_id})
        assert "stopped with TaskStop" in output.text


async def test_permission_asks_reach_the_main_session_named_by_the_subagent(tmp_path: Path) -> None:
    target = tmp_path / "project" / "out.txt"
    pb, host = board(tmp_path, {"write": target})
    approver = Approver(answer=False)
    async with pb.session(approver=approver) as s:
        launched = await s.call("Agent", {"description": "write it", "prompt": "write", "run_in_background": True})
        host.release.set()
        done = await s.call("TaskOutput", {"task_id": (launched.structured or {})["task_id"]})
    assert approver.asked and approver.asked[0][0] == "Write"
    assert approver.asked[0][1].startswith("subagent general-purpose asks:")
    refused = host.results[0]
    assert refused.is_error and refused.reason == "not_approved"
    # refusing one call does not stop the subagent: it carries on and reports
    assert (done.structured or {})["task"]["status"] == "completed"
    assert "write: refused" in (done.structured or {})["task"]["output"]
    assert not target.exists()


async def test_an_approved_ask_runs_the_subagents_call(tmp_path: Path) -> None:
    target = tmp_path / "project" / "out.txt"
    pb, host = board(tmp_path, {"write": target})
    approver = Approver(answer=True)
    async with pb.session(approver=approver) as s:
        host.release.set()
        result = await s.call("Agent", {"description": "write it", "prompt": "write"})
    assert not result.is_error and "write: done" in result.text
    assert target.read_text() == "from the subagent"
    assert approver.asked[0][1].startswith("subagent general-purpose asks:")


async def test_sessions_spawn_is_a_task_and_its_deadline_uses_the_clock(tmp_path: Path) -> None:
    class InstantClock:
        def now(self) -> float:
            return 0.0

        async def sleep(self, seconds: float) -> None:
            await asyncio.sleep(0)

    config = {"agents": {"list": [{"id": "main", "subagents": {"allowAgents": ["helper"]}}, {"id": "helper"}]}}
    pb, host = board(tmp_path, config=config)
    async with pb.session(agent="main") as s:
        spawned = await s.call("sessions_spawn", {"task": "tidy", "agentId": "helper", "label": "tidy"})
        run_id = (spawned.structured or {})["runId"]
        assert (spawned.structured or {})["status"] == "accepted"
        listed = await s.call("subagent_list", {})
        assert [(r["task_id"], r["command"]) for r in (listed.structured or {})["agents"]] == [(run_id, "helper")]
        host.release.set()
        done = await s.call("TaskOutput", {"task_id": run_id})
        assert (done.structured or {})["task"]["output"].startswith("report for tidy")
        announce = host.delivered[-1]
        assert announce.kind == "announce" and "report for tidy" in announce.text

        kept = (spawned.structured or {})["childSessionKey"]
        assert pb.session_store.load(kept) is not None
        gone = await s.call("sessions_spawn", {"task": "scratch", "agentId": "helper", "cleanup": "delete"})
        await s.call("TaskOutput", {"task_id": (gone.structured or {})["runId"]})
        assert pb.session_store.load((gone.structured or {})["childSessionKey"]) is None

        pb.stash[agent.CLOCK] = InstantClock()
        host.release.clear()
        late = await s.call("sessions_spawn", {"task": "slow", "agentId": "helper", "runTimeoutSeconds": 60})
        timed_out = await s.call("TaskOutput", {"task_id": (late.structured or {})["runId"]})
        assert (timed_out.structured or {})["task"]["status"] == "timeout"
        assert host.delivered[-1].metadata["status"] == "timeout"


async def test_background_job_list_and_cancel(tmp_path: Path) -> None:
    pb, host = board(tmp_path)
    async with pb.session() as s:
        job = await s.call("background_job", {"task": "index everything", "description": "indexer"})
        job_id = (job.structured or {})["task_id"]
        await host.started.wait()
        running = await s.call("subagent_list", {"running_only": True})
        assert [r["task_id"] for r in (running.structured or {})["agents"]] == [job_id]
        unknown = await s.call("subagent_cancel", {"task_id": "ghost"})
        assert unknown.is_error and job_id in unknown.text
        cancelled = await s.call("subagent_cancel", {"task_id": "indexer"})
        assert not cancelled.is_error and (cancelled.structured or {})["status"] == "killed"
        bash = await s.call("Bash", {"command": "echo hi", "run_in_background": True})
        listed = await s.call("subagent_list", {})
        assert [r["task_id"] for r in (listed.structured or {})["agents"]] == [job_id]  # only agents
        shell_id = (bash.structured or {}).get("backgroundTaskId") or (bash.structured or {}).get("task_id")
        assert shell_id and not shell_id.startswith("a")
        stop_shell = await s.call("subagent_cancel", {"task_id": shell_id})
        assert stop_shell.is_error


async def test_closing_the_session_cancels_running_agents(tmp_path: Path) -> None:
    pb, host = board(tmp_path)
    async with pb.session() as s:
        await s.call("Agent", {"description": "forever", "prompt": "wait", "run_in_background": True})
        await host.started.wait()
    assert host.cancelled == ["wait"]


async def test_subagents_get_no_child_managing_tools(tmp_path: Path) -> None:
    pb, host = board(tmp_path)
    host.release.set()
    async with pb.session() as s:
        await s.call("Agent", {"description": "x", "prompt": "y"})
    tools = set(host.requests[0].tools)
    assert not tools & {"Agent", "background_job", "subagent_list", "subagent_history", "subagent_cancel",
                        "sessions_spawn"}
    assert {"TaskOutput", "TaskStop", "Read"} <= tools


@pytest.mark.parametrize("name", ["background_job", "Agent"])
async def test_an_unknown_subagent_type_is_refused(tmp_path: Path, name: str) -> None:
    pb, _host = board(tmp_path)
    payload = {"task": "x"} if name == "background_job" else {"description": "x", "prompt": "y",
                                                              "run_in_background": True}
    async with pb.session() as s:
        result = await s.call(name, {**payload, "subagent_type": "ghost"})
    assert result.is_error and result.metadata["error_kind"] == "not_found"


async def test_an_ambiguous_agent_name_stops_nothing_and_lists_the_agents(tmp_path: Path) -> None:
    pb, host = board(tmp_path)
    async with pb.session() as s:
        one = await s.call("Agent", {"description": "first", "prompt": "a", "run_in_background": True})
        two = await s.call("Agent", {"description": "second", "prompt": "b", "run_in_background": True})
        await host.started.wait()
        refused = await s.call("TaskStop", {"task_id": "general-purpose"})
        assert refused.is_error and refused.metadata["error_kind"] == "unknown_task"
        ids = {(one.structured or {})["task_id"], (two.structured or {})["task_id"]}
        assert set(refused.metadata["running"]) == ids
        listed = await s.call("subagent_list", {"running_only": True})
        assert {r["task_id"] for r in (listed.structured or {})["agents"]} == ids
