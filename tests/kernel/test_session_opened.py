"""The ``session_opened`` hook: called for every session ``Pegboard.session`` opens, new or resumed."""

from __future__ import annotations

from pathlib import Path

from pegboard import Session, hookimpl
from pegboard.testing import isolated_pegboard


class Watcher:
    def __init__(self) -> None:
        self.opened: list[tuple[str, bool]] = []
        self.closed: list[str] = []

    @hookimpl
    def session_opened(self, session: Session) -> None:
        self.opened.append((session.id, session.resumed))
        session.on_close(lambda: self.closed.append(session.id))


class Broken:
    @hookimpl
    def session_opened(self, session: Session) -> None:
        raise RuntimeError("watcher down")


async def test_new_and_resumed_sessions_are_announced(tmp_path: Path) -> None:
    watcher = Watcher()
    pb = isolated_pegboard(watcher, cwd=tmp_path)
    async with pb.session() as first:
        sid = first.id
    async with pb.session(session_id=sid):
        pass
    assert watcher.opened == [(sid, False), (sid, True)] and watcher.closed == [sid, sid]
    await pb.call("Nothing")
    assert len(watcher.opened) == 2


def test_a_failing_implementation_is_a_notice(tmp_path: Path) -> None:
    pb = isolated_pegboard(Broken(), cwd=tmp_path)
    with pb.session_sync() as s:
        assert any("session_opened failed: RuntimeError: watcher down" in n for n in s.notices)
    pb.close()
