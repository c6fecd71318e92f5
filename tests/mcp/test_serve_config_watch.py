"""``pegboard serve`` applies config changes while a client stays connected: a deny added to
the project settings refuses the next call, removing it allows the call again, and the client
hears ``notifications/tools/list_changed`` both times (stdio and HTTP, the official client)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters

from .conftest import PEGBOARD, http_serving, serve_env

FAST_POLL = {"PEGBOARD_CONFIG_POLL": "0.05"}


def write(path: Path, data: dict[str, Any] | str) -> None:
    """Replace the file whole, as editors save (a new inode each time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    tmp.replace(path)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


class Changes:
    """Counts the ``tools/list_changed`` notifications a client receives."""

    def __init__(self) -> None:
        self.count = 0
        self.event = asyncio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self.event.set()

    async def next(self, timeout: float = 20.0) -> None:
        await asyncio.wait_for(self.event.wait(), timeout)
        self.event.clear()


async def deny_then_allow(client: Client, changes: Changes, settings: Path) -> None:
    await client.list_tools()
    ran = await client.call_tool("Bash", {"command": "echo before"})
    assert not ran.is_error and text_of(ran).strip() == "before"
    write(settings, {"permissions": {"deny": ["Bash(echo *)"]}})
    await changes.next()
    refused = await client.call_tool("Bash", {"command": "echo during"})
    assert refused.is_error and "Bash(echo *)" in text_of(refused) and str(settings) in text_of(refused)
    write(settings, {"permissions": {"deny": []}})
    await changes.next()
    again = await client.call_tool("Bash", {"command": "echo after"})
    assert not again.is_error and text_of(again).strip() == "after"
    assert changes.count == 2


async def test_a_deny_added_and_removed_while_a_stdio_client_stays_connected(workdir: Path) -> None:
    settings = workdir / ".pegboard" / "settings.json"
    changes = Changes()
    params = StdioServerParameters(
        command=PEGBOARD, args=["serve", "--cwd", str(workdir)], env=serve_env(FAST_POLL), cwd=str(workdir)
    )
    async with Client(params, mode="legacy", message_handler=changes) as client:
        await deny_then_allow(client, changes, settings)


async def test_a_tools_deny_over_http_changes_the_list_and_is_logged(workdir: Path) -> None:
    settings = workdir / ".pegboard" / "settings.json"
    write(settings, {"permissions": {"deny": ["Bash(rm *)"]}})
    with http_serving(["serve", "--cwd", str(workdir)], workdir, env=FAST_POLL) as server:
        changes = Changes()
        async with Client(server.url, mode="legacy", message_handler=changes) as client:
            assert "Bash" in {t.name for t in (await client.list_tools()).tools}
            write(settings, {"permissions": {"deny": ["Bash(rm *)"]}, "tools": {"deny": ["Bash"]}})
            await changes.next()
            assert "Bash" not in {t.name for t in (await client.list_tools()).tools}
            assert (await client.call_tool("Bash", {"command": "echo x"})).is_error
            write(settings, '{"tools": {"deny": ["Bash"]')  # half saved: the last good config stays
            await asyncio.sleep(0.3)
            assert (await client.call_tool("Bash", {"command": "echo x"})).is_error
            write(settings, {"permissions": {"deny": ["Bash(rm *)"]}})
            await changes.next()
            assert "Bash" in {t.name for t in (await client.list_tools()).tools}
            again = await client.call_tool("Bash", {"command": "echo back"})
            assert not again.is_error and text_of(again).strip() == "back"
            assert changes.count == 2
    assert server.proc.stderr is not None
    log = server.proc.stderr.read().decode()
    assert f'config change widens what the agent may do: {settings}: tools.deny no longer holds "Bash"' in log
    assert log.count("cannot parse as JSON") == 1, log
    assert "the last content of this file that loaded stays in force" in log


async def test_a_stdio_server_with_watching_off_keeps_its_config(workdir: Path) -> None:
    settings = workdir / ".pegboard" / "settings.json"
    params = StdioServerParameters(
        command=PEGBOARD,
        args=["serve", "--cwd", str(workdir)],
        env=serve_env({"PEGBOARD_CONFIG_POLL": "0"}),
        cwd=str(workdir),
    )
    changes = Changes()
    async with Client(params, mode="legacy", message_handler=changes) as client:
        await client.list_tools()
        write(settings, {"permissions": {"deny": ["Bash(echo *)"]}})
        await asyncio.sleep(0.5)
        assert not (await client.call_tool("Bash", {"command": "echo still"})).is_error
        assert changes.count == 0


def test_the_poll_interval_comes_from_the_environment() -> None:
    from pegboard_mcp_server.configreload import DEFAULT_POLL, POLL_ENV, poll_interval

    assert poll_interval({}) == DEFAULT_POLL
    assert poll_interval({POLL_ENV: "0.25"}) == 0.25
    assert poll_interval({POLL_ENV: "0"}) == 0.0 and poll_interval({POLL_ENV: "-3"}) == 0.0
    assert poll_interval({POLL_ENV: "soon"}) == DEFAULT_POLL
    assert poll_interval({POLL_ENV: "nan"}) == DEFAULT_POLL


async def test_a_client_that_cannot_be_told_is_dropped(workdir: Path) -> None:
    from pegboard import Pegboard
    from pegboard.testing import isolated_pegboard
    from pegboard_mcp_server.configreload import ConfigReload

    assert ConfigReload.for_pegboard(isolated_pegboard(cwd=workdir)) is None, "config given in code: no files"
    pb = Pegboard(cwd=workdir, env={**serve_env(), "PEGBOARD_CONFIG_POLL": "5"}, load_entrypoints=False)
    reload = ConfigReload.for_pegboard(pb)
    assert reload is not None and reload.watcher.interval == 5.0
    told: list[str] = []

    async def fine() -> None:
        told.append("fine")

    async def gone() -> None:
        raise ConnectionError("the session is closed")

    reload.listen("a", fine)
    reload.listen("b", gone)
    write(workdir / ".pegboard" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    change = await reload.tick()
    assert change is not None and change.applied == (workdir / ".pegboard" / "settings.json",)
    assert told == ["fine"] and list(reload.listeners) == ["a"]
    assert await reload.tick() is None and told == ["fine"]
