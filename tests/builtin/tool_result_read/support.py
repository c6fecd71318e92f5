"""A tool that returns exactly the text it is given, with a small size limit, for projection tests."""

from __future__ import annotations

from pydantic import BaseModel

from pegboard import ToolContext, ToolRegister, hookimpl, tool

LIMIT = 1_000


class EmitInput(BaseModel):
    text: str = ""
    repeat: int = 1


@tool(name="Emit", max_result_chars=LIMIT)
async def emit(input: EmitInput, ctx: ToolContext) -> str:
    """Return the given text, repeated."""
    return input.text * input.repeat


class EmitPlugin:
    @hookimpl
    def register_tools(self, register: ToolRegister) -> None:
        register(emit)
