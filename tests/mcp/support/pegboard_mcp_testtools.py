"""Test-only Pegboard plugin for the MCP tests, loaded with ``pegboard serve --plugin``.

It is put on ``PYTHONPATH`` by the tests; nothing installs it.
"""

from __future__ import annotations

import asyncio
import base64
import os

from pydantic import BaseModel

from pegboard import ImageBlock, TextBlock, ToolContext, ToolResult, hookimpl, tool

# A 1x1 transparent PNG.
PNG_1x1 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode("ascii")


class EchoInput(BaseModel):
    text: str


class SleepInput(BaseModel):
    seconds: float = 0.1


class NoInput(BaseModel):
    pass


@tool(name="Echo", read_only=True, idempotent=True)
async def echo(input: EchoInput, ctx: ToolContext) -> ToolResult:
    """Echo the text back, with its length as structured content."""
    return ToolResult(content=[TextBlock(text=input.text[:200])], structured={"length": len(input.text)})


@tool(name="Picture", read_only=True)
async def picture(input: NoInput, ctx: ToolContext) -> ToolResult:
    """Return a one-pixel PNG image."""
    return ToolResult(content=[TextBlock(text="a pixel"), ImageBlock(data=PNG_1x1, mime_type="image/png")])


@tool(name="Sleep", read_only=True)
async def sleep(input: SleepInput, ctx: ToolContext) -> str:
    """Sleep for a while, then say so."""
    await asyncio.sleep(input.seconds)
    return f"slept {input.seconds}"


class MeetInput(BaseModel):
    group: str
    count: int
    timeout: float = 30.0


#: Calls waiting in each meeting group, for ``Meet``.
_MEETINGS: dict[str, list[asyncio.Event]] = {}


@tool(name="Meet", read_only=True)
async def meet(input: MeetInput, ctx: ToolContext) -> str:
    """Wait until ``count`` calls of ``group`` are running at once; say how many met. A server
    that ran calls one after another would never get past the first."""
    here = asyncio.Event()
    waiting = _MEETINGS.setdefault(input.group, [])
    waiting.append(here)
    if len(waiting) >= input.count:
        for event in waiting:
            event.set()
    try:
        await asyncio.wait_for(here.wait(), input.timeout)
    except TimeoutError:
        return f"only {len(waiting)} of {input.count} met"
    return f"{input.count} met"


@tool(name="Guarded", requires_permission=True, destructive=True)
async def guarded(input: EchoInput, ctx: ToolContext) -> str:
    """A tool that needs approval before it runs."""
    return f"guarded ran with {input.text}"


@tool(name="Secret", read_only=True)
async def secret(input: NoInput, ctx: ToolContext) -> str:
    """A tool the test config denies."""
    return "the secret"


@tool(name="Boom")
async def boom(input: NoInput, ctx: ToolContext) -> str:
    """A tool that raises."""
    raise RuntimeError("boom")


@tool(name="Noisy", read_only=True)
async def noisy(input: NoInput, ctx: ToolContext) -> str:
    """A tool that prints to stdout (must not corrupt the protocol stream)."""
    print("this goes to stdout")
    os.system("echo child process output")
    return "quiet result"


@hookimpl
def register_tools(register) -> None:
    for t in (echo, picture, sleep, meet, guarded, secret, boom, noisy):
        register(t)
