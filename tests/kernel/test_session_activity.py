"""A session's ``updated`` follows its use: calls, events, state changes and results advance it."""

from __future__ import annotations

from pathlib import Path

from pegboard import MemorySessionStore, Pegboard, SessionKey, SQLiteSessionStore
from pegboard.core.session import TOUCH_INTERVAL

COUNTER: SessionKey[int] = SessionKey("activity-counter", int, persist=True, default=int)


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _open(tmp_path: Path, clock: Clock) -> tuple[Pegboard, SQLiteSessionStore]:
    store = SQLiteSessionStore(tmp_path / "s.sqlite3", clock=clock)
    return Pegboard(cwd=tmp_path, store=store), store


def _updated(store: SQLiteSessionStore | MemorySessionStore, sid: str) -> float:
    record = store.load(sid)
    assert record is not None
    return record.updated


async def test_a_call_advances_updated(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    clock = Clock()
    pb, store = _open(tmp_path, clock)
    session = pb.session(session_id="used")
    assert _updated(store, "used") == clock.now
    clock.now += 3600
    result = await session.call("Read", {"file_path": "a.txt"})
    assert not result.is_error, result.text
    assert _updated(store, "used") == clock.now
    assert store.sessions()[0].updated == clock.now
    await session.close()


async def test_calls_within_the_interval_write_once_and_close_writes_the_last_use(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    clock = Clock()
    pb, store = _open(tmp_path, clock)
    session = pb.session(session_id="busy")
    clock.now += 60
    await session.call("Read", {"file_path": "a.txt"})
    first = clock.now
    clock.now += TOUCH_INTERVAL / 4
    await session.call("Read", {"file_path": "a.txt"})
    assert _updated(store, "busy") == first  # not written again so soon
    await session.close()
    assert _updated(store, "busy") == clock.now  # but the session's last use is kept when it closes


async def test_an_event_and_a_state_change_advance_updated(tmp_path: Path) -> None:
    clock = Clock()
    pb, store = _open(tmp_path, clock)
    session = pb.session(session_id="eventful")
    clock.now += 100
    session.emit("progress", {"done": 1, "total": 2})
    assert _updated(store, "eventful") == clock.now
    clock.now += 0.01  # well inside the interval: a state change is written with its own transaction
    session.state[COUNTER] = 7
    assert _updated(store, "eventful") == clock.now
    clock.now += 0.01
    session.results.put("Read", "kept text")
    assert _updated(store, "eventful") == clock.now
    await session.close()


async def test_a_resumed_session_in_another_instance_is_advanced_too(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    clock = Clock()
    pb, _store = _open(tmp_path, clock)
    pb.session(session_id="again").close_sync()
    clock.now += 7200
    later, store = _open(tmp_path, clock)
    async with later.session(session_id="again") as resumed:
        await resumed.call("Read", {"file_path": "a.txt"})
    assert _updated(store, "again") == clock.now


async def test_sessions_are_listed_most_recently_used_first(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    clock = Clock()
    pb, store = _open(tmp_path, clock)
    sessions = {}
    for sid in ("first", "second", "third"):
        sessions[sid] = pb.session(session_id=sid)
        clock.now += 10
    assert [r.id for r in store.sessions()] == ["third", "second", "first"]
    await sessions["first"].call("Read", {"file_path": "a.txt"})
    assert [r.id for r in store.sessions()] == ["first", "third", "second"]
    for session in sessions.values():
        await session.close()


async def test_prune_keeps_a_session_in_use(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    clock = Clock()
    pb, store = _open(tmp_path, clock)
    pb.session(session_id="idle").close_sync()
    pb.session(session_id="active").close_sync()
    clock.now += 3600
    later = Pegboard(cwd=tmp_path, store=store)
    async with later.session(session_id="active") as active:
        await active.call("Read", {"file_path": "a.txt"})
    clock.now += 1
    assert later.prune_sessions(5, now=clock.now) == ["idle"]
    assert [r.id for r in store.sessions()] == ["active"]


def test_the_memory_store_advances_updated_on_writes() -> None:
    clock = Clock()
    store = MemorySessionStore(clock=clock)
    pb = Pegboard(store=store, load_entrypoints=False)
    session = pb.session(session_id="mem")
    clock.now += 50
    session.state[COUNTER] = 1
    assert _updated(store, "mem") == clock.now
    clock.now += 50
    store.touch("mem", clock.now - 200)  # never moves backwards
    assert _updated(store, "mem") == clock.now - 50
    session.close_sync()
