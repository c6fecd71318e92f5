"""Background tasks end to end: Bash/exec start them, process, TaskOutput and TaskStop manage them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pegboard_background
from pegboard import SQLiteSessionStore
from pegboard.testing import check_tool
from pegboard_toolkit import TaskTable
from tests.builtin.runtime_support import Events, pid_gone, runtime_pegboard, wait_for_file


def test_conforms() -> None:
    check_tool(pegboard_background.process, {"action": "log", "sessionId": "b1", "offset": 0, "limit": 5})
    check_tool(pegboard_background.task_output, {"task_id": "b1", "block": False, "timeout": 10})
    check_tool(pegboard_background.task_stop, {"shell_id": "b1"})


async def test_lifecycle_through_process_taskoutput_and_taskstop(tmp_path: Path) -> None:
    events = Events()
    pb = runtime_pegboard(tmp_path, events)
    async with pb.session() as session:
        quick = await session.call("Bash", {"command": "echo one; echo two", "run_in_background": True,
                                            "description": "two lines"})
        qid = quick.structured["backgroundTaskId"]  # type: ignore[index]
        out = await session.call("TaskOutput", {"task_id": qid})
        assert out.structured is not None
        assert out.structured["retrieval_status"] == "success"
        assert out.structured["task"]["status"] == "completed" and out.structured["task"]["exitCode"] == 0
        assert out.structured["task"]["output"] == "one\ntwo\n"

        slow = await session.call("exec", {"command": "echo begin; sleep 30", "background": True})
        sid = slow.structured["sessionId"]  # type: ignore[index]
        assert slow.structured["status"] == "running" and sid.startswith("e")  # type: ignore[index]
        listed = await session.call("process", {"action": "list"})
        assert {row["task_id"] for row in listed.structured["sessions"]} == {qid, sid}  # type: ignore[index]
        not_ready = await session.call("TaskOutput", {"task_id": sid, "block": False})
        assert not_ready.structured["retrieval_status"] == "not_ready"  # type: ignore[index]
        waited = await session.call("TaskOutput", {"task_id": sid, "timeout": 200})
        assert waited.structured["retrieval_status"] == "timeout"  # type: ignore[index]
        poll = await session.call("process", {"action": "poll", "sessionId": sid})
        assert poll.structured["output"] == "begin\n" and poll.structured["status"] == "running"  # type: ignore[index]
        again = await session.call("process", {"action": "poll", "sessionId": sid})
        assert again.structured["output"] == ""  # type: ignore[index]

        stopped = await session.call("TaskStop", {"task_id": sid})
        assert stopped.structured is not None
        assert stopped.structured["task_type"] == "exec" and stopped.structured["status"] == "killed"
        assert "echo begin" in stopped.structured["command"]
        final = await session.call("process", {"action": "poll", "sessionId": sid})
        assert "Process exited: killed" in final.text

        cleared = await session.call("process", {"action": "clear"})
        assert set(cleared.structured["cleared"]) == {qid, sid}  # type: ignore[index]
        assert (await session.call("process", {"action": "list"})).text == "No background sessions."
    exited = events.of("task_exited")
    assert [e.data["task_id"] for e in exited] == [qid, sid]
    assert exited[1].data["status"] == "killed"


async def test_taskstop_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        started = await session.call("Bash", {
            "command": f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; while true; do sleep 0.1; done' & wait",
            "run_in_background": True,
        })
        child = int(wait_for_file(pidfile))
        tid = started.structured["backgroundTaskId"]  # type: ignore[index]
        result = await session.call("KillShell", {"shell_id": tid})
        assert not result.is_error, result.text
    assert pid_gone(child)


async def test_write_log_and_remove(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        loop = "while read line; do echo got:$line; done"
        started = await session.call("exec", {"command": loop, "background": True})
        sid = started.structured["sessionId"]  # type: ignore[index]
        for word in ("a", "b", "c"):
            await session.call("process", {"action": "write", "sessionId": sid, "data": f"{word}\n"})
        await session.call("process", {"action": "write", "sessionId": sid, "eof": True})
        out = await session.call("TaskOutput", {"task_id": sid, "timeout": 5000})
        assert out.structured["task"]["output"] == "got:a\ngot:b\ngot:c\n"  # type: ignore[index]
        tail = await session.call("process", {"action": "log", "sessionId": sid, "limit": 2})
        assert tail.structured["lines"] == ["got:b", "got:c"]  # type: ignore[index]
        window = await session.call("process", {"action": "log", "sessionId": sid, "offset": 0, "limit": 1})
        assert window.structured["lines"] == ["got:a"] and window.structured["total_lines"] == 3  # type: ignore[index]
        output_file = Path(out.structured["task"]["output_file"])  # type: ignore[index]
        removed = await session.call("process", {"action": "remove", "sessionId": sid})
        assert not removed.is_error and not output_file.exists()
        bash_task = await session.call("Bash", {"command": "sleep 5", "run_in_background": True})
        bid = bash_task.structured["backgroundTaskId"]  # type: ignore[index]
        refused = await session.call("process", {"action": "write", "sessionId": bid, "data": "x"})
        assert refused.is_error and "without stdin" in refused.text


async def test_unknown_ids_list_the_running_tasks(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        started = await session.call("Bash", {"command": "sleep 30", "run_in_background": True,
                                              "description": "a long nap"})
        tid = started.structured["backgroundTaskId"]  # type: ignore[index]
        for tool, payload in (("TaskOutput", {"task_id": "nope"}), ("TaskStop", {"task_id": "nope"}),
                              ("process", {"action": "poll", "sessionId": "nope"})):
            result = await session.call(tool, payload)
            assert result.is_error and result.metadata["error_kind"] == "unknown_task"
            assert f"- {tid}: a long nap" in result.text and "No task found with ID nope" in result.text


async def test_process_sees_only_its_agents_sessions(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session(agent="main") as session:
        started = await session.call("exec", {"command": "sleep 30", "background": True})
        sid = started.structured["sessionId"]  # type: ignore[index]
        session.select(agent="other")
        assert (await session.call("process", {"action": "list"})).text == "No background sessions."
        hidden = await session.call("process", {"action": "kill", "sessionId": sid})
        assert hidden.is_error
        session.select(agent="main")
        assert not (await session.call("process", {"action": "kill", "sessionId": sid})).is_error


async def test_the_running_task_cap_is_a_clear_error(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path, config={"tools": {"background": {"maxRunning": 2}}})
    async with pb.session() as session:
        for _ in range(2):
            ok = await session.call("Bash", {"command": "sleep 30", "run_in_background": True})
            assert not ok.is_error
        third = await session.call("Bash", {"command": "sleep 30", "run_in_background": True})
    assert third.is_error and "the limit is 2" in third.text


async def test_closing_the_session_kills_its_tasks(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    pb = runtime_pegboard(tmp_path)
    session = pb.session()
    await session.call("Bash", {"command": f"sh -c 'echo $$ > {pidfile}; exec sleep 60'", "run_in_background": True})
    child = int(wait_for_file(pidfile))
    await session.close()
    assert pid_gone(child)


def test_a_resumed_session_reports_tasks_that_died_with_the_old_process(tmp_path: Path) -> None:
    store = tmp_path / "sessions.sqlite3"
    script = textwrap.dedent(
        f"""
        import asyncio, json, os, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[3])!r})
        from pathlib import Path
        from pegboard import SQLiteSessionStore
        from tests.builtin.runtime_support import runtime_pegboard

        async def main():
            pb = runtime_pegboard(Path({str(tmp_path)!r}), store=SQLiteSessionStore(Path({str(store)!r})))
            session = pb.session()
            started = await session.call("Bash", {{"command": "sleep 1", "run_in_background": True,
                                                    "description": "doomed"}})
            print(json.dumps({{"session": session.id, "task": started.structured["backgroundTaskId"]}}), flush=True)
            os._exit(0)

        asyncio.run(main())
        """
    )
    env = {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout.strip().splitlines()[-1])
    events = Events()
    pb = runtime_pegboard(tmp_path, events, store=SQLiteSessionStore(store))

    async def resume() -> None:
        async with pb.session(session_id=info["session"]) as session:
            listed = await session.call("process", {"action": "list"})
            assert f"{info['task']} (doomed)" in listed.text and "died with the process" in listed.text
            out = await session.call("TaskOutput", {"task_id": info["task"], "block": False})
            assert out.structured["task"]["status"] == "lost"  # type: ignore[index]
            assert TaskTable.of(pb.context(session=session)).take_lost_notice() is None

    import asyncio

    asyncio.run(resume())
    assert [e.data["status"] for e in events.of("task_exited")] == ["lost"]


async def test_the_cap_can_come_from_the_environment(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path, env={"PEGBOARD_MAX_BACKGROUND_TASKS": "1"})
    async with pb.session() as session:
        first = await session.call("Bash", {"command": "sleep 30", "run_in_background": True})
        second = await session.call("Bash", {"command": "sleep 30", "run_in_background": True})
    assert not first.is_error
    assert second.is_error and "the limit is 1" in second.text


async def test_task_times_come_from_the_tables_clock(tmp_path: Path) -> None:
    ticks = iter([1000.0, 1042.5])
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        table = TaskTable.of(pb.context(session=session), clock=lambda: next(ticks))
        started = await session.call("Bash", {"command": "true", "run_in_background": True})
        task_id = started.structured["backgroundTaskId"]  # type: ignore[index]
        await session.call("TaskOutput", {"task_id": task_id})
        record = table.get(task_id)
    assert record is not None and (record.started, record.ended) == (1000.0, 1042.5)


async def test_log_cuts_over_long_lines_and_counts_them_once(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path, env={"BASH_MAX_OUTPUT_LENGTH": "1000"})
    async with pb.session() as session:
        command = "python3 -c \"print('x' * 100000); print('end')\""
        started = await session.call("exec", {"command": command, "background": True})
        sid = started.structured["sessionId"]  # type: ignore[index]
        await session.call("TaskOutput", {"task_id": sid})
        log = await session.call("process", {"action": "log", "sessionId": sid})
    assert log.structured is not None
    assert log.structured["lines"] == ["x" * 1000, "end"] and log.structured["total_lines"] == 2
