"""A tool that writes a file when its session closes, to see when serve closes a client's session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pegboard import ToolContext, hookimpl, tool


class PathInput(BaseModel):
    path: str


@tool(name="WatchClose", read_only=True)
async def watch_close(input: PathInput, ctx: ToolContext) -> str:
    """Write 'closed' to the path when this session closes."""
    assert ctx.session is not None
    target = Path(input.path)
    ctx.session.on_close(lambda: target.write_text("closed", encoding="utf-8"))
    return "watching"


@hookimpl
def register_tools(register: Any) -> None:
    register(watch_close)
