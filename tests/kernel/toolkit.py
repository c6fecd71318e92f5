"""Small real tools and plugins the kernel tests register."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, Field

from pegboard import ImageBlock, Tool, ToolContext, ToolResult, hookimpl, tool


class EchoInput(BaseModel):
    text: str = Field(description="Text to echo back.")
    times: int = Field(default=1, ge=1, le=10, description="How often.")


@tool(name="Echo", groups=["demo"], aliases=["say"], read_only=True)
async def echo(input: EchoInput, ctx: ToolContext) -> str:
    """Repeat the given text back, optionally several times."""
    return " ".join([input.text] * input.times)


class NoInput(BaseModel):
    pass


@tool(name="Boom", groups=["demo"])
async def boom(input: NoInput, ctx: ToolContext) -> str:
    """Always raises, to test failure handling."""
    raise RuntimeError("kaboom")


class SleepInput(BaseModel):
    seconds: float


@tool(name="Sleep", timeout=0.2)
async def sleep(input: SleepInput, ctx: ToolContext) -> str:
    """Sleep for the given number of seconds."""
    await asyncio.sleep(input.seconds)
    return "woke"


@tool(name="Guarded", requires_permission=True, destructive=True)
async def guarded(input: EchoInput, ctx: ToolContext) -> str:
    """A tool that needs permission before it runs."""
    return f"ran {input.text}"


@tool(name="Picture")
async def picture(input: NoInput, ctx: ToolContext) -> ToolResult:
    """Return a tiny image and a structured value."""
    return ToolResult(content=[ImageBlock(data="iVBORw0KGgo=", mime_type="image/png")], structured={"w": 1})


class BigInput(BaseModel):
    size: int


@tool(name="Big", max_result_chars=100)
async def big(input: BigInput, ctx: ToolContext) -> str:
    """Return a long text of the given size."""
    return "é" * input.size


class ToolsPlugin:
    """A plugin object registering the given tools (and groups)."""

    def __init__(self, *tools: Tool, groups: dict[str, list[str]] | None = None, name: str | None = None):
        self.tools = tools
        self.groups = groups or {}
        if name:
            self.__name__ = name

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        for t in self.tools:
            register(t)

    @hookimpl
    def register_groups(self, register: Callable[..., None]) -> None:
        for name, members in self.groups.items():
            register(name, members, f"{name} tools")


def plugin_with_hooks(**impls: Callable[..., Any]) -> object:
    """A plugin object whose hook implementations are the given functions."""
    ns: dict[str, Any] = {name: hookimpl(fn) for name, fn in impls.items()}
    return type("HookPlugin", (), {k: staticmethod(v) for k, v in ns.items()})()


ALL_TOOLS: Iterable[Tool] = (echo, boom, sleep, guarded, picture, big)
