"""Monitor's WebSocket source against a real WebSocket server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from pegboard import PermissionUpdate
from tests.builtin.runtime_support import Events, runtime_pegboard

LOOPBACK = {"network": {"allowPrivateHosts": ["127.0.0.1"]}}


class Approver:
    """Approves every ask (remembering a rule when told to) and counts them."""

    def __init__(self, remember: bool = False, answer: bool = True) -> None:
        self.asked: list[str] = []
        self.remember = remember
        self.answer = answer

    def __call__(self, call: Any, decision: Any) -> bool | PermissionUpdate:
        self.asked.append(decision.reason)
        if self.remember:
            return PermissionUpdate(rules=["Monitor"])
        return self.answer


async def wait_until(check: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


Handler = Callable[[ServerConnection], Awaitable[None]]


@contextlib.asynccontextmanager
async def ws_server(handler: Handler) -> AsyncIterator[tuple[str, list[str]]]:
    """A WebSocket server on 127.0.0.1 running ``handler``; yields its URL and the paths it saw."""
    seen: list[str] = []

    async def wrapped(ws: ServerConnection) -> None:
        seen.append(ws.request.path if ws.request else "")
        await handler(ws)

    async with serve(wrapped, "127.0.0.1", 0, subprotocols=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/feed", seen


@pytest.fixture
async def feed() -> AsyncIterator[tuple[str, list[str]]]:
    async def handler(ws: ServerConnection) -> None:
        await ws.send("hello")
        await ws.send("two\nlines")
        await ws.send(b"\x00" * 512)
        await ws.close(code=4001, reason="done")

    async with ws_server(handler) as item:
        yield item


async def test_messages_are_events_and_a_close_ends_the_monitor(tmp_path: Path, feed: tuple[str, list[str]]) -> None:
    url, seen = feed
    events = Events()
    approver = Approver()
    pb = runtime_pegboard(tmp_path, events, config=LOOPBACK)
    async with pb.session(approver=approver) as session:
        started = await session.call("Monitor", {"ws": {"url": url}, "description": "feed"})
        assert not started.is_error, started.text
        task_id = started.structured["taskId"]  # type: ignore[index]
        await wait_until(lambda: bool(events.of("task_exited")))
        out = await session.call("TaskOutput", {"task_id": task_id})
    lines = [e.data["line"] for e in events.of("task_output")]
    assert lines == ["hello", "two\nlines", "[binary frame, 512 bytes]"]
    exited = events.of("task_exited")[0].data
    assert exited["status"] == "completed" and "code 4001" in exited["note"]
    assert out.structured is not None and "code 4001" in out.structured["task"]["note"]
    assert seen == ["/feed"]
    assert len(approver.asked) == 1


async def test_opening_a_socket_always_asks(tmp_path: Path, feed: tuple[str, list[str]]) -> None:
    url, _seen = feed
    approver = Approver(remember=True)
    config = {**LOOPBACK, "permissions": {"allow": ["Monitor", "Bash"]}}
    pb = runtime_pegboard(tmp_path, config=config)
    async with pb.session(approver=approver) as session:
        for _ in range(2):
            result = await session.call("Monitor", {"ws": {"url": url}})
            assert not result.is_error, result.text
    assert len(approver.asked) == 2 and "always asks" in approver.asked[0]


@pytest.mark.parametrize("mode", ["default", "dontAsk", "bypassPermissions"])
async def test_the_refusal_never_suggests_a_rule(tmp_path: Path, feed: tuple[str, list[str]], mode: str) -> None:
    url, seen = feed
    config = {**LOOPBACK, "permissions": {"allow": ["Monitor", "Bash"], "defaultMode": mode}}
    pb = runtime_pegboard(tmp_path, config=config)
    async with pb.session() as session:
        result = await session.call("Monitor", {"ws": {"url": url}})
    assert result.is_error and result.reason in {"not_approved", "denied"}
    assert "Bash" not in result.text and "permissions.allow" not in result.text
    assert "suggested_rules" not in result.metadata
    assert "allow rule" not in result.metadata.get("how_to_approve", "")
    assert "no rule can allow it" in result.text
    assert seen == []


async def test_a_refused_approval_never_connects(tmp_path: Path, feed: tuple[str, list[str]]) -> None:
    url, seen = feed
    pb = runtime_pegboard(tmp_path, config=LOOPBACK)
    async with pb.session(approver=Approver(answer=False)) as session:
        result = await session.call("Monitor", {"ws": {"url": url}})
    assert result.is_error and result.reason == "not_approved"
    await asyncio.sleep(0.1)
    assert seen == []


async def test_a_frame_over_1_mib_ends_the_monitor(tmp_path: Path) -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.send("small")
        await ws.send("x" * ((1 << 20) + 1))
        await ws.wait_closed()

    events = Events()
    pb = runtime_pegboard(tmp_path, events, config=LOOPBACK)
    async with ws_server(handler) as (url, _seen), pb.session(approver=Approver()) as session:
        started = await session.call("Monitor", {"ws": {"url": url}})
        assert not started.is_error, started.text
        await wait_until(lambda: bool(events.of("task_exited")))
    assert [e.data["line"] for e in events.of("task_output")] == ["small"]
    assert "1 MiB" in events.of("task_exited")[0].data["note"]


async def test_taskstop_and_the_deadline_end_a_socket_monitor(tmp_path: Path) -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.send("tick")
        await ws.wait_closed()

    events = Events()
    pb = runtime_pegboard(tmp_path, events, config=LOOPBACK)
    async with ws_server(handler) as (url, _seen), pb.session(approver=Approver()) as session:
        short = await session.call("Monitor", {"ws": {"url": url}, "timeout_ms": 300})
        keep = await session.call("Monitor", {"ws": {"url": url}, "persistent": True})
        short_id, keep_id = short.structured["taskId"], keep.structured["taskId"]  # type: ignore[index]
        await wait_until(lambda: any(e.data["task_id"] == short_id for e in events.of("task_exited")))
        stopped = await session.call("TaskStop", {"task_id": keep_id})
        assert stopped.structured["status"] == "killed"  # type: ignore[index]
    ended = {e.data["task_id"]: e.data["status"] for e in events.of("task_exited")}
    assert ended == {short_id: "timeout", keep_id: "killed"}


async def test_loopback_is_refused_without_the_setting(tmp_path: Path, feed: tuple[str, list[str]]) -> None:
    url, seen = feed
    pb = runtime_pegboard(tmp_path)
    async with pb.session(approver=Approver()) as session:
        result = await session.call("Monitor", {"ws": {"url": url}})
        metadata = await session.call("Monitor", {"ws": {"url": "ws://169.254.169.254/latest"}})
    assert result.is_error and result.metadata["error_kind"] == "blocked_address"
    assert "network.allowPrivateHosts" in result.text
    assert metadata.is_error and metadata.metadata["error_kind"] == "blocked_address"
    assert seen == []


@pytest.mark.parametrize(
    "ws",
    [
        {"url": "http://127.0.0.1/feed"},
        {"url": "ws://user:pw@127.0.0.1/feed"},
        {"url": "ws://127.0.0.1/fe ed"},
        {"url": "ws://bücher.example/feed"},
        {"url": "ws://127.0.0.1/feed", "protocols": ["chat", "chat"]},
        {"url": "ws://127.0.0.1/feed", "protocols": ["bad token"]},
    ],
)
async def test_bad_urls_and_protocols_are_invalid_input(tmp_path: Path, ws: dict[str, Any]) -> None:
    pb = runtime_pegboard(tmp_path, config=LOOPBACK)
    async with pb.session(approver=Approver()) as session:
        result = await session.call("Monitor", {"ws": ws})
    assert result.is_error and result.reason == "invalid_input"


async def test_an_untrusted_project_cannot_allow_private_hosts(tmp_path: Path, feed: tuple[str, list[str]]) -> None:
    from pegboard import ConfigLayer, MemorySessionStore, Pegboard
    from tests.builtin.runtime_support import RUNTIME

    url, seen = feed
    project = ConfigLayer("project", LOOPBACK, root=tmp_path, trusted=False)
    pb = Pegboard(plugins=list(RUNTIME), load_entrypoints=False, layers=[project], cwd=tmp_path, env={},
                  store=MemorySessionStore())
    async with pb.session(approver=Approver()) as session:
        result = await session.call("Monitor", {"ws": {"url": url}})
    assert result.is_error and result.metadata["error_kind"] == "blocked_address"
    assert seen == []
