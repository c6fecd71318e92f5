"""Test tools for serving across processes: a persisted counter that also names the serving process."""

from __future__ import annotations

import os

from pydantic import BaseModel

from pegboard import SessionKey, ToolContext, ToolRegister, hookimpl, tool

COUNT: SessionKey[int] = SessionKey("test-scale-count", int, persist=True, default=int)


class NoInput(BaseModel):
    pass


@tool(name="CountHere", read_only=True)
async def count_here(input: NoInput, ctx: ToolContext) -> str:
    """Add one to this session's counter; answer the count and the serving process id."""
    assert ctx.session is not None
    value = ctx.session.state.update(COUNT, lambda n: (n or 0) + 1)
    return f"{value} {os.getpid()}"


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(count_here)
