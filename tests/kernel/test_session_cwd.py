"""``session.cwd``: the one working directory every call of a session follows, kept by a
stored session; a resume naming the directory it was opened in keeps where a tool moved it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from pegboard import ToolContext, ToolRegister, hookimpl, tool
from pegboard.core.sqlitestore import SQLiteSessionStore
from pegboard.testing import isolated_pegboard


class WhereInput(BaseModel):
    move_to: str | None = None


@tool(name="Where", groups=["demo"])
async def where(input: WhereInput, ctx: ToolContext) -> str:
    """Say the call's working directory, or move the session to move_to."""
    if input.move_to is not None and ctx.session is not None:
        ctx.session.cwd = input.move_to
    return str(ctx.cwd)


class Plugin:
    @hookimpl
    def register_tools(self, register: ToolRegister) -> None:
        register(where)


async def test_a_moved_session_is_where_the_next_call_runs_and_stays_there_on_resume(tmp_path: Path) -> None:
    start, moved, other = (tmp_path / n for n in ("start", "moved", "other"))
    for d in (start, moved, other):
        d.mkdir()
    store = SQLiteSessionStore(tmp_path / "sessions.sqlite")
    pb = isolated_pegboard(Plugin(), cwd=start, store=store)
    async with pb.session(cwd=start) as session:
        assert (await session.call("Where", {"move_to": str(moved)})).text == str(start.resolve())
        assert (await session.call("Where", {})).text == str(moved)
        sid = session.id
    async with pb.session(session_id=sid) as again:
        assert again.cwd == moved
    async with pb.session(session_id=sid, cwd=start) as again:
        assert again.cwd == moved and (await again.call("Where", {})).text == str(moved)
    async with pb.session(session_id=sid, cwd=other) as elsewhere:
        assert elsewhere.cwd == other.resolve()
    async with pb.session(session_id=sid, cwd=other) as same:
        assert same.cwd == other.resolve()
    await pb.aclose()


async def test_pegboard_call_runs_in_its_session_cwd_unless_told(tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    pb = isolated_pegboard(Plugin(), cwd=tmp_path)
    assert (await pb.call("Where", {"move_to": str(moved)})).text == str(tmp_path)
    assert (await pb.call("Where", {})).text == str(moved)
    assert (await pb.call("Where", {}, cwd=tmp_path)).text == str(tmp_path)
    assert (await pb.call("Where", {}, session_id="other")).text == str(tmp_path)
    await pb.aclose()
