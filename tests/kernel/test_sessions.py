"""Sessions: state slots, the SQLite store, events, resume, ownership, the new hooks."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from pegboard import (
    MapKey,
    MemorySessionStore,
    Pegboard,
    PermissionUpdate,
    SessionError,
    SessionEvent,
    SessionKey,
    SessionStoreError,
    SQLiteSessionStore,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    tool,
)
from pegboard.core.store import SessionRecord
from pegboard.testing import SessionStoreContract, isolated_pegboard


class CountInput(BaseModel):
    n: int = 1


class SayInput(BaseModel):
    text: str


COUNTER: SessionKey[int] = SessionKey("test-counter", int, persist=True, default=int)
LIVE: SessionKey[list[str]] = SessionKey("test-live", list, default=list)
NOTES: MapKey[dict[str, Any]] = MapKey("test-notes", dict, persist=True)


@tool(name="Count", groups=["test"])
async def count(input: CountInput, ctx: ToolContext) -> ToolResult:
    """Add n to a persisted counter and report progress while doing it."""
    assert ctx.session is not None
    for i in range(input.n):
        ctx.progress(i + 1, input.n, "counting")
    value = ctx.session.state.update(COUNTER, lambda v: (v or 0) + input.n)
    ctx.session.state[LIVE].append(f"+{input.n}")
    return ToolResult.from_text(str(value), structured={"value": value})


class Plugin:
    @hookimpl
    def register_tools(self, register: ToolRegister) -> None:
        register(count)


def board(tmp_path: Path, **kw: Any) -> Pegboard:
    return isolated_pegboard(Plugin(), cwd=tmp_path, **kw)


class TestSQLiteStoreContract(SessionStoreContract):
    def make_store(self, tmp_path: Path) -> SQLiteSessionStore:
        return SQLiteSessionStore(tmp_path / "sessions.sqlite3")


class TestMemoryStoreContract(SessionStoreContract):
    shared_between_instances = False

    def make_store(self, tmp_path: Path) -> MemorySessionStore:
        return MemorySessionStore()


async def test_slots_persist_and_resume(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "db.sqlite3")
    pb = board(tmp_path, store=store)
    async with pb.session(mode="acceptEdits") as s:
        assert (await s.call("Count", {"n": 2})).text == "2"
        assert (await s.call("Count", {"n": 3})).text == "5"
        assert s.state[LIVE] == ["+2", "+3"]
        s.state.map(NOTES)["a"] = {"x": 1}
        sid = s.id
    again = board(tmp_path, store=SQLiteSessionStore(tmp_path / "db.sqlite3"))
    async with again.session(session_id=sid) as resumed:
        assert resumed.resumed and resumed.mode == "acceptEdits"
        assert resumed.state[COUNTER] == 5
        assert resumed.state[LIVE] == []  # not persisted
        assert resumed.state.map(NOTES)["a"] == {"x": 1}
        assert (await resumed.call("Count", {})).text == "6"


async def test_an_unknown_id_creates_and_a_bad_id_is_refused(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session(session_id="my-id_1") as s:
        assert s.id == "my-id_1" and not s.resumed
    for bad in ("", "a b", "x" * 200, "../etc"):
        with pytest.raises(SessionError, match="invalid session id"):
            pb.session(session_id=bad)


async def test_generated_ids_are_opaque_and_unique(tmp_path: Path) -> None:
    pb = board(tmp_path)
    ids = {pb.session().id for _ in range(50)}
    assert len(ids) == 50 and all(len(i) >= 20 and i.replace("_", "").replace("-", "").isalnum() for i in ids)


async def test_a_session_belongs_to_its_owner(tmp_path: Path) -> None:
    pb = board(tmp_path)
    s = pb.session(owner="client-a")
    with pytest.raises(SessionError, match="another client"):
        pb.session(session_id=s.id, owner="client-b")
    assert pb.session(session_id=s.id, owner="client-a").resumed


async def test_events_in_order_with_progress(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session() as s:
        seen: list[SessionEvent] = []

        async def read() -> None:
            async for event in s.events():
                seen.append(event)
                if event.kind == "call_finished":
                    return

        reader = asyncio.create_task(read())
        await asyncio.sleep(0)
        await s.call("Count", {"n": 3}, tool_use_id="toolu_1")
        await asyncio.wait_for(reader, 5)
    kinds = [e.kind for e in seen]
    assert kinds == ["call_started", "progress", "progress", "progress", "call_finished"]
    assert [e.data["done"] for e in seen if e.kind == "progress"] == [1, 2, 3]
    assert all(e.tool_use_id == "toolu_1" for e in seen)
    assert seen[1].tool == "Count"


async def test_a_slow_consumer_never_blocks_a_tool(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session() as s:
        events = s.events(queue_size=10)
        first = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0)
        result = await asyncio.wait_for(s.call("Count", {"n": 500}), 5)
        assert result.text == "500"
        assert s.dropped_events() > 0
        assert (await first).kind == "call_started"
        await events.aclose()


async def test_on_event_hook_sees_every_event(tmp_path: Path) -> None:
    seen: list[str] = []

    class Watcher:
        @hookimpl
        def on_event(self, event: SessionEvent, session: Any) -> None:
            seen.append(f"{session.id}:{event.kind}")

    pb = isolated_pegboard(Plugin(), Watcher(), cwd=tmp_path)
    async with pb.session(session_id="w") as s:
        await s.call("Count", {"n": 1})
    assert seen == ["w:call_started", "w:progress", "w:call_finished"]


async def test_session_store_hook_and_pegboard_close(tmp_path: Path) -> None:
    supplied = MemorySessionStore()
    closed: list[bool] = []

    class StorePlugin:
        @hookimpl
        def session_store(self, pegboard: Pegboard) -> MemorySessionStore:
            return supplied

        @hookimpl
        async def pegboard_close(self, pegboard: Pegboard) -> None:
            closed.append(True)

    pb = Pegboard(plugins=[Plugin(), StorePlugin()], load_entrypoints=False, layers=[], cwd=tmp_path, env={})
    async with pb:
        s = pb.session()
        await s.call("Count", {"n": 4})
        assert supplied.load(s.id) is not None
    assert s.closed and closed == [True]


async def test_remembered_permission_applies_to_that_session_only(tmp_path: Path) -> None:
    asked: list[str] = []

    def approver(call: Any, decision: Any) -> PermissionUpdate:
        asked.append(call.name)
        return PermissionUpdate(rules=["Count"])

    pb = isolated_pegboard(Plugin(), cwd=tmp_path, config={"permissions": {"ask": []}})
    count.requires_permission = True
    try:
        async with pb.session(approver=approver) as s:
            assert not (await s.call("Count", {})).is_error
            assert not (await s.call("Count", {})).is_error
            assert asked == ["Count"]
            assert s.check("Count", {}).decision == "allow"
        async with pb.session() as other:
            assert other.check("Count", {}).decision == "ask"
    finally:
        count.requires_permission = False


def test_sync_session(tmp_path: Path) -> None:
    pb = board(tmp_path)
    with pb.session_sync() as s:
        assert s.call_sync("Count", {"n": 2}).text == "2"
        assert s.tools().enabled == ["Count"]
        assert [d["name"] for d in s.schema("anthropic")] == ["Count"]


def test_corrupt_store_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    store = SQLiteSessionStore(path)
    assert store.notices and "moved to" in store.notices[0]
    assert any(p.name.startswith("sessions.sqlite3.corrupt-") for p in tmp_path.iterdir())
    store.put("s", "x", "1")
    assert store.get("s", "x") == "1"


def test_newer_schema_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(SessionStoreError, match="newer Pegboard"):
        SQLiteSessionStore(path)


def test_unwritable_directory_is_a_clear_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        blocker = tmp_path / "file"
        blocker.write_text("x")
        target = blocker / "sessions.sqlite3"  # a file where a directory must be
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = locked / "sub" / "sessions.sqlite3"
    with pytest.raises(SessionStoreError, match="cannot use the session store"):
        SQLiteSessionStore(target)


def _hammer(path: str, slot: str, n: int) -> None:
    store = SQLiteSessionStore(path)
    for _ in range(n):
        store.update("shared", slot, lambda raw: str(int(raw or "0") + 1))


def test_two_processes_lose_no_update(tmp_path: Path) -> None:
    path = str(tmp_path / "sessions.sqlite3")
    SQLiteSessionStore(path)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(path, "n", 100)) for _ in range(3)]
    for p in procs:
        p.start()
    _hammer(path, "n", 100)
    for p in procs:
        p.join(60)
    assert SQLiteSessionStore(path).get("shared", "n") == "400"


WRITER = """
import sys
from pegboard import SQLiteSessionStore
store = SQLiteSessionStore(sys.argv[1])
i = 0
while True:
    i += 1
    store.put("s", "counter", str(i))
    store.put("s", "big", "x" * 50000 + str(i))
    if i == 20:
        print("ready", flush=True)
"""


def test_kill_9_during_writes_keeps_the_last_committed_state(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = SQLiteSessionStore(path)
    counter = int(store.get("s", "counter") or "0")
    big = store.get("s", "big") or ""
    assert counter >= 20
    assert big.startswith("x" * 50000) and int(big[50000:]) in (counter, counter - 1, counter + 1)


async def test_closing_runs_close_callbacks_and_ends_readers(tmp_path: Path) -> None:
    pb = board(tmp_path)
    s = pb.session()
    calls: list[str] = []
    s.on_close(lambda: calls.append("sync"))

    async def later() -> None:
        calls.append("async")

    s.on_close(later)
    reader = s.events()
    waiting = asyncio.ensure_future(reader.__anext__())
    await asyncio.sleep(0)
    await s.close()
    with pytest.raises(StopAsyncIteration):
        await waiting
    assert calls == ["async", "sync"]
    closed = await s.call("Count", {})
    assert closed.is_error and "closed" in closed.text


async def test_results_are_kept_per_session(tmp_path: Path) -> None:
    pb = board(tmp_path)
    a, b = pb.session(), pb.session()
    ref = a.results.put("Tool", "whole text")
    assert ref.startswith("tr_")
    stored = a.results.get(ref)
    assert stored is not None and stored.text == "whole text"
    assert b.results.get(ref) is None and b.results.owner_of(ref) == a.id


async def test_mode_is_settable_and_validated(tmp_path: Path) -> None:
    pb = board(tmp_path)
    s = pb.session()
    s.mode = "plan"
    assert pb.session(session_id=s.id).mode == "plan"
    with pytest.raises(ValueError, match="unknown permission mode"):
        s.mode = "yolo"


async def test_configured_secrets_are_redacted_in_results_and_stored_records(tmp_path: Path) -> None:
    @tool(name="Say", max_result_chars=50, input_model=SayInput)
    async def say(input: SayInput, ctx: ToolContext) -> str:
        """Repeat the text many times."""
        return input.text * 20

    class SayPlugin:
        @hookimpl
        def register_tools(self, register: ToolRegister) -> None:
            register(say)

    config = {"redaction": {"secrets": ["hunter2-token"], "secretEnv": ["DEPLOY_WORD"]}}
    pb = isolated_pegboard(SayPlugin(), cwd=tmp_path, config=config, env={"DEPLOY_WORD": "swordfish-9"})
    async with pb.session() as s:
        result = await s.call("Say", {"text": "a hunter2-token b swordfish-9 "})
        assert "hunter2-token" not in result.text and "swordfish-9" not in result.text
        assert "[REDACTED]" in result.text and result.metadata["truncated"] is True
        stored = s.results.get(result.metadata["details_ref"])
        assert stored is not None and "hunter2-token" not in stored.text and "swordfish-9" not in stored.text


async def test_files_in_the_session_directory_count_against_the_result_quota(tmp_path: Path) -> None:
    pb = isolated_pegboard(cwd=tmp_path, config={"sessions": {"resultQuotaMib": 0.001}})
    async with pb.session() as s:
        first = s.results.put("T", "x" * 400)
        assert s.results.get(first) is not None
        (s.directory / "spill.txt").write_bytes(b"y" * 900)
        second = s.results.put("T", "z" * 400)
        assert s.results.get(second) is not None and s.results.get(first) is None


async def test_a_store_that_is_not_durable_keeps_session_files_out_of_the_data_directory(tmp_path: Path) -> None:
    import tempfile

    data = tmp_path / "data"
    durable = Pegboard(plugins=[], load_entrypoints=False, cwd=tmp_path, env={"PEGBOARD_DATA_DIR": str(data)},
                       store=SQLiteSessionStore(tmp_path / "sessions.db"))
    async with durable.session() as s:
        assert s.directory.is_relative_to(data)
    memory = Pegboard(plugins=[], load_entrypoints=False, cwd=tmp_path, env={"PEGBOARD_DATA_DIR": str(data)},
                      store=MemorySessionStore())
    async with memory.session() as s:
        where = s.directory
        assert not where.is_relative_to(data) and where.is_relative_to(tempfile.gettempdir())
        (where / "kept.txt").write_text("x")
    async with memory.session(session_id=s.id) as again:
        assert again.directory == where and (where / "kept.txt").exists()
    assert MemorySessionStore.durable is False


@dataclasses.dataclass
class _Inner:
    label: str
    values: list[int]


@dataclasses.dataclass
class _Record:
    name: str
    count: int
    ratio: float | None
    flags: dict[str, bool]
    ranges: list[list[int]]
    inner: _Inner | None = None
    extra: tuple[int, ...] = ()


_records = st.builds(
    _Record,
    name=st.text(max_size=5),
    count=st.integers(),
    ratio=st.none() | st.floats(allow_nan=False),
    flags=st.dictionaries(st.text(max_size=3), st.booleans(), max_size=3),
    ranges=st.lists(st.lists(st.integers(), max_size=2), max_size=3),
    inner=st.none() | st.builds(_Inner, label=st.text(max_size=3), values=st.lists(st.integers(), max_size=2)),
    extra=st.tuples() | st.tuples(st.integers()),
)


@given(_records)
def test_a_dataclass_slot_is_stored_as_asdict_stores_it(record: _Record) -> None:
    from pegboard import SessionKey

    key: SessionKey[_Record] = SessionKey("test-record", _Record)
    assert json.loads(key.dumps(record)) == json.loads(json.dumps(dataclasses.asdict(record)))


def test_an_update_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    """Reading an unchanged file again must not cost a write transaction."""
    store = SQLiteSessionStore(tmp_path / "s.sqlite3")
    store.create(SessionRecord(id="s1", cwd=str(tmp_path)))
    store.update("s1", "slot", lambda raw: "v1", "e")
    statements: list[str] = []
    store._connection().set_trace_callback(statements.append)
    assert store.update("s1", "slot", lambda raw: raw, "e") == "v1"
    assert statements == ["SELECT value FROM slots WHERE session_id = 's1' AND slot = 'slot' AND entry = 'e'"]
    store.close()


def test_an_update_raced_by_another_process_is_worked_out_again(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store, other = SQLiteSessionStore(path), SQLiteSessionStore(path)
    store.create(SessionRecord(id="s1", cwd=str(tmp_path)))
    store.update("s1", "n", lambda raw: "1")
    seen: list[str | None] = []

    def add_one(raw: str | None) -> str:
        seen.append(raw)
        if len(seen) == 1:  # another process adds one while this update runs
            other.update("s1", "n", lambda r: str(int(r or 0) + 1))
        return str(int(raw or 0) + 1)

    assert store.update("s1", "n", add_one) == "3"
    assert seen == ["1", "2"] and other.get("s1", "n") == "3"
    store.close()
    other.close()
