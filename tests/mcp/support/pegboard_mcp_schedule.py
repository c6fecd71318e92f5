"""A stand-in for a scheduler: a prompt delivered to the session from outside any request."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from pydantic import BaseModel

from pegboard import MessageDelivery, ToolContext, ask_host, hookimpl, tool


class TextInput(BaseModel):
    text: str


class NoInput(BaseModel):
    pass


RELEASE: dict[str, asyncio.Event] = {}
REPLIES: dict[str, asyncio.Future[Any]] = {}


@tool(name="PromptLater", read_only=True)
async def prompt_later(input: TextInput, ctx: ToolContext) -> str:
    """Deliver a prompt to this session once PromptReply is called, from a task of its own."""
    key = str(ctx.session_id)
    release = RELEASE[key] = asyncio.Event()
    reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    REPLIES[key] = reply

    async def fire() -> None:
        await release.wait()
        try:
            delivery = MessageDelivery(key, input.text, sender="scheduler", kind="prompt", wait=30)
            reply.set_result(await ask_host(ctx, "deliver_message", request=delivery))
        except Exception as exc:
            reply.set_result(f"failed: {exc}")

    asyncio.get_running_loop().create_task(fire(), context=contextvars.Context())
    return "scheduled"


@tool(name="PromptReply", read_only=True)
async def prompt_reply(input: NoInput, ctx: ToolContext) -> str:
    """Let the scheduled prompt fire and return the session's reply to it."""
    key = str(ctx.session_id)
    RELEASE[key].set()
    return str(await asyncio.wait_for(REPLIES[key], 30))


@hookimpl
def register_tools(register: Any) -> None:
    register(prompt_later)
    register(prompt_reply)
