"""The Task tools: ids, fields, dependencies and cycles, the user list, events, two processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pegboard_tasks
from pegboard import Pegboard, Session, SQLiteSessionStore
from pegboard.testing import isolated_pegboard
from tests.builtin.tasks.support import Events


def board(tmp_path: Path, *plugins: object, env: dict[str, str] | None = None, **kw: Any) -> Pegboard:
    return isolated_pegboard(
        pegboard_tasks, *plugins, cwd=tmp_path, env={"PEGBOARD_DATA_DIR": str(tmp_path / "data"), **(env or {})}, **kw
    )


async def create(s: Session, subject: str, **extra: Any) -> str:
    result = await s.call("TaskCreate", {"subject": subject, **extra})
    assert not result.is_error, result.text
    assert result.structured is not None
    task_id: str = result.structured["task"]["id"]
    return task_id


async def test_create_get_list_update(tmp_path: Path) -> None:
    events = Events()
    pb = board(tmp_path, events)
    async with pb.session(persist=False) as s:
        first = await create(s, "Write the parser", description="tokens, then a tree", activeForm="Writing")
        second = await create(s, "Test the parser", metadata={"area": "parser"})
        assert (first, second) == ("1", "2")
        got = await s.call("TaskGet", {"taskId": "#1"})
        assert got.structured is not None and got.structured["task"]["description"] == "tokens, then a tree"
        assert "tokens, then a tree" in got.text
        updated = await s.call(
            "TaskUpdate", {"taskId": "2", "owner": "alice", "status": "in_progress", "metadata": {"area": None, "x": 1}}
        )
        assert updated.structured is not None and updated.structured["task"]["metadata"] == {"x": 1}
        listed = await s.call("TaskList", {"owner": "alice"})
        assert listed.structured is not None and [t["id"] for t in listed.structured["tasks"]] == ["2"]
        assert "#2 [in_progress] Test the parser (owner: alice)" in listed.text
        deleted = await s.call("TaskUpdate", {"taskId": "1", "status": "deleted"})
        assert deleted.text == "Task #1 deleted"
        assert await create(s, "Third") == "3"
        missing = await s.call("TaskGet", {"taskId": "1"})
        assert missing.is_error and missing.metadata["error_kind"] == "not_found"
    assert len(events.seen) == 5 and events.seen[-1].data["scope"] == "session"
    assert [t["id"] for t in events.seen[-1].data["tasks"]] == ["2", "3"]


async def test_dependencies_unblock_and_cycles(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session(persist=False) as s:
        a, b, c = [await create(s, name) for name in ("a", "b", "c")]
        await s.call("TaskUpdate", {"taskId": a, "addBlocks": [b]})
        await s.call("TaskUpdate", {"taskId": c, "addBlockedBy": [b, a]})
        listed = await s.call("TaskList", {})
        assert "#3 [pending] c [blocked by #2, #1]" in listed.text
        for change in (
            {"taskId": c, "addBlocks": [a]},
            {"taskId": b, "addBlocks": [a]},
            {"taskId": a, "addBlockedBy": [c]},
            {"taskId": a, "addBlocks": [a]},
        ):
            refused = await s.call("TaskUpdate", change)
            assert refused.is_error and refused.metadata["error_kind"] == "cycle", change
        unknown = await s.call("TaskUpdate", {"taskId": a, "addBlocks": ["99"]})
        assert unknown.metadata["error_kind"] == "not_found"
        done_a = await s.call("TaskUpdate", {"taskId": a, "status": "completed"})
        assert done_a.structured is not None and done_a.structured["unblocked"] == [b]
        done_b = await s.call("TaskUpdate", {"taskId": b, "status": "completed"})
        assert done_b.structured is not None and done_b.structured["unblocked"] == [c]
        assert "Unblocked: #3" in done_b.text
        got = await s.call("TaskGet", {"taskId": c})
        assert got.structured is not None and got.structured["task"]["openBlockers"] == []
        await s.call("TaskUpdate", {"taskId": b, "status": "deleted"})
        after = await s.call("TaskGet", {"taskId": c})
        assert after.structured is not None and after.structured["task"]["blockedBy"] == [a]


async def test_seed_spellings_use_the_durable_user_list(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session(persist=False) as s:
        made = await s.call("task_create", {"subject": "Renew passport"})
        assert made.structured is not None and made.structured["task"]["scope"] == "user"
        assert (await s.call("TaskList", {})).text == "No tasks found."
        await s.call("task_update", {"taskId": "1", "description": "before June"})
        done = await s.call("task_complete", {"taskId": "1", "note": "done at the office"})
        assert not done.is_error, done.text
    pb.close()
    again = board(tmp_path)
    async with again.session(persist=False) as s:
        listed = await s.call("task_list", {"status": "completed"})
        assert listed.structured is not None and listed.structured["scope"] == "user"
        got = await s.call("TaskGet", {"taskId": "1", "scope": "user"})
        assert got.structured is not None and got.structured["task"]["note"] == "done at the office"
        assert got.structured["task"]["description"] == "before June"
    again.close()


async def test_default_scope_setting(tmp_path: Path) -> None:
    pb = board(tmp_path, config={"tools": {"tasks": {"defaultScope": "user"}}})
    async with pb.session(persist=False) as s:
        made = await s.call("TaskCreate", {"subject": "x"})
        assert made.structured is not None and made.structured["task"]["scope"] == "user"
    pb.close()


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    import pegboard_tasks
    from pegboard import SQLiteSessionStore
    from pegboard.testing import isolated_pegboard

    async def main():
        env = {"PEGBOARD_DATA_DIR": sys.argv[3]}
        pb = isolated_pegboard(pegboard_tasks, store=SQLiteSessionStore(sys.argv[1]), env=env)
        async with pb.session(session_id=sys.argv[2]) as s:
            for i in range(25):
                r = await s.call("TaskCreate", {"subject": f"{sys.argv[4]}-{i}"})
                assert not r.is_error, r.text

    asyncio.run(main())
    """
)


async def test_two_processes_write_tasks_to_one_session(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    pb = board(tmp_path, store=SQLiteSessionStore(db))
    async with pb.session() as s:
        sid = s.id
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db), sid, str(tmp_path / "data"), name])
        for name in ("left", "right")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    async with board(tmp_path, store=SQLiteSessionStore(db)).session(session_id=sid) as s:
        listed = await s.call("TaskList", {})
        assert listed.structured is not None
        tasks = listed.structured["tasks"]
        assert sorted(int(t["id"]) for t in tasks) == list(range(1, 51))
        assert sum(t["subject"].startswith("left-") for t in tasks) == 25
        assert pegboard_tasks.session_tasks(s)["tasks"][0]["id"] == "1"
