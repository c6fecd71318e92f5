"""The host hooks as first-result services: availability, first answer wins, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pegboard import (
    HostServiceError,
    MessageDelivery,
    SubagentRequest,
    ToolContext,
    ask_host,
    has_host_service,
    hookimpl,
    unavailable_without,
)
from pegboard.testing import isolated_pegboard


class First:
    @hookimpl
    def run_subagent(self, request: SubagentRequest) -> str:
        return f"ran {request.subagent_type} with {','.join(request.tools)}"

    @hookimpl
    def deliver_message(self, request: MessageDelivery) -> str | None:
        return None


class Second:
    @hookimpl
    async def deliver_message(self, request: MessageDelivery) -> str:
        return f"reply to {request.text}"

    @hookimpl
    def run_subagent(self, request: SubagentRequest) -> str:
        return "never asked"


class Broken:
    @hookimpl
    def deliver_message(self, request: MessageDelivery) -> str:
        raise RuntimeError("inbox on fire")


async def test_first_answer_wins_and_none_passes(tmp_path: Path) -> None:
    pb = isolated_pegboard(First(), Second(), cwd=tmp_path)
    ctx = ToolContext(cwd=tmp_path, _pegboard=pb)
    ran = await ask_host(ctx, "run_subagent", request=SubagentRequest("Explore", "look", tools=("Read", "Grep")))
    assert ran == "ran Explore with Read,Grep"
    assert await ask_host(ctx, "deliver_message", request=MessageDelivery("s_1", "hi")) == "reply to hi"


async def test_availability_follows_the_implementations(tmp_path: Path) -> None:
    own = First()
    pb = isolated_pegboard(own, cwd=tmp_path)
    assert has_host_service(pb, "run_subagent") and not has_host_service(pb, "ask_user")
    assert not has_host_service(pb, "run_subagent", ignore=[own])
    assert unavailable_without(pb, "run_subagent", "run subagents")() is None
    reason = unavailable_without(pb, "approve_plan", "approve plans")()
    assert reason is not None and "approve_plan" in reason


async def test_an_implementation_that_raises_is_reported(tmp_path: Path) -> None:
    pb = isolated_pegboard(Broken(), cwd=tmp_path)
    ctx = ToolContext(cwd=tmp_path, _pegboard=pb)
    with pytest.raises(HostServiceError, match="inbox on fire"):
        await ask_host(ctx, "deliver_message", request=MessageDelivery("s_1", "hi"))
    assert await ask_host(ToolContext(cwd=tmp_path), "deliver_message", request=MessageDelivery("s", "x")) is None


class Sometimes:
    """A host that can answer only while it has a way to (an MCP client's capability)."""

    def __init__(self) -> None:
        self.why: str | None = "the client cannot sample"

    def host_service_unavailable(self, hook: str) -> str | None:
        return self.why

    @hookimpl
    def run_subagent(self, request: SubagentRequest) -> str:
        return "ran"


class Confused(Sometimes):
    def host_service_unavailable(self, hook: str) -> str | None:
        raise ValueError("no idea")


def test_an_implementation_may_say_it_cannot_answer_now(tmp_path: Path) -> None:
    host = Sometimes()
    pb = isolated_pegboard(host, cwd=tmp_path)
    check = unavailable_without(pb, "run_subagent", "run subagents")
    assert not has_host_service(pb, "run_subagent")
    assert check() == "the host cannot run subagents: the client cannot sample"
    host.why = None
    assert has_host_service(pb, "run_subagent") and check() is None
    confused = isolated_pegboard(Confused(), cwd=tmp_path)
    assert unavailable_without(confused, "run_subagent", "run subagents")() == (
        "the host cannot run subagents: ValueError: no idea"
    )
    assert unavailable_without(isolated_pegboard(cwd=tmp_path), "run_subagent", "run subagents")() == (
        "the host does not run subagents (no plugin implements the run_subagent hook)"
    )
