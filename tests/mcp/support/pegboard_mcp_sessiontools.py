"""Tools for the per-session serve tests: one that reports progress, deferred ones to load."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pegboard import SessionKey, ToolContext, hookimpl, tool

TALLY: SessionKey[int] = SessionKey("test-serve-tally", int, persist=True, default=int)


class StepsInput(BaseModel):
    n: int = 3


@tool(name="Steps", read_only=True)
async def steps(input: StepsInput, ctx: ToolContext) -> str:
    """Count to n, reporting progress at each step."""
    for i in range(input.n):
        ctx.progress(i + 1, input.n, f"step {i + 1}")
    return f"counted to {input.n}"


@tool(name="ThreadSteps", read_only=True)
async def thread_steps(input: StepsInput, ctx: ToolContext) -> str:
    """Count to n in a worker thread, reporting progress (and a log line) from there."""
    import asyncio

    def count() -> None:
        for i in range(input.n):
            ctx.progress(i + 1, input.n, f"step {i + 1}")
        ctx.emit("log", "counted in a thread")

    await asyncio.to_thread(count)
    return f"counted to {input.n} in a thread"


class NoInput(BaseModel):
    pass


@tool(name="Tally", read_only=True)
async def tally(input: NoInput, ctx: ToolContext) -> str:
    """Add one to this session's tally and return it."""
    assert ctx.session is not None
    return str(ctx.session.state.update(TALLY, lambda n: (n or 0) + 1))


@tool(name="Chatty", read_only=True)
async def chatty(input: NoInput, ctx: ToolContext) -> str:
    """Log two messages while running."""
    ctx.emit("log", {"level": "warning", "message": "careful", "logger": "chatty"})
    ctx.emit("log", "plain words")
    return "said it"


class AskInput(BaseModel):
    question: str


@tool(name="AskModel", read_only=True, input_model=AskInput)
async def ask_model(input: AskInput, ctx: ToolContext) -> str:
    """Ask the small model a question about a fixed text."""
    from pegboard import CompletionRequest, request_completion

    answer = await request_completion(ctx, CompletionRequest(input.question, "the sky is green", "test"))
    return f"model said: {answer}"


def _deferred(name: str, description: str) -> Any:
    async def run(input: NoInput, ctx: ToolContext) -> str:
        return f"{name} ran"

    return tool(name=name, description=description, deferred=True, read_only=True)(run)


@hookimpl
def register_tools(register: Any) -> None:
    register(steps)
    register(thread_steps)
    register(tally)
    register(chatty)
    register(ask_model)
    register(_deferred("LazyWeather", "Current weather for a city, loaded on demand."))
