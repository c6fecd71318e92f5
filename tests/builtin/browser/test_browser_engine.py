"""The engine's life cycle, profiles, timeouts and a DNS answer that changes: each test its own session."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import pegboard_browser
from pegboard import PermissionUpdate
from pegboard.testing import isolated_pegboard
from pegboard_browser import RUNTIME
from pegboard_toolkit.webfetch import RESOLVER
from tests.builtin.browser.site import FamilyPlugin, board, site, skip_without_chromium

pytestmark = skip_without_chromium()


def st(result: Any) -> dict[str, Any]:
    """A result's structured value (the tests know it has one)."""
    assert isinstance(result.structured, dict), result.text
    return result.structured


class FlippingResolver:
    """Answers 127.0.0.1 until ``flipped``, then a documentation address: a rebinding DNS server."""

    def __init__(self, after: int | None = None) -> None:
        self.calls = 0
        self.after = after
        self.flipped = False

    def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls += 1
        if self.after is not None and self.calls > self.after:
            self.flipped = True
        return ["192.0.2.7"] if self.flipped else ["127.0.0.1"]


async def test_one_check_per_connection_and_no_second_lookup() -> None:
    """A DNS answer that changes between check and connect: the proxy connects to what it checked."""
    from pegboard_browser.proxy import GuardProxy
    from pegboard_toolkit.netguard import GuardPolicy, NetworkGuard

    with site() as srv:
        resolver = FlippingResolver(after=1)
        blocked: list[Any] = []
        proxy = GuardProxy(NetworkGuard(GuardPolicy(allow_private_hosts=("127.0.0.1",)), resolver),
                           lambda host: None, blocked.append)
        await proxy.start()
        try:
            port = srv.server_address[1]
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(f"GET http://rebind.test:{port}/ HTTP/1.1\r\nHost: rebind.test:{port}\r\n\r\n".encode())
            await writer.drain()
            answer = await reader.read()
            writer.close()
            assert answer.startswith(b"HTTP/1.0 200") or answer.startswith(b"HTTP/1.1 200"), answer[:100]
            assert b"Welcome" in answer
            assert resolver.calls == 1  # a second lookup would have answered 192.0.2.7
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(f"CONNECT rebind.test:{port} HTTP/1.1\r\n\r\n".encode())
            await writer.drain()
            refused = await reader.read()
            writer.close()
            assert refused.startswith(b"HTTP/1.1 403") and b"192.0.2.7" in refused
            assert blocked and "192.0.2.7" in blocked[-1].reason
        finally:
            await proxy.close()


async def test_started_on_first_use_and_closed_with_the_session(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions")
        async with pb.session(cwd=tmp_path) as s:
            status = await s.call("browser", {"action": "status"})
            assert st(status)["running"] is False
            assert "Chromium from" in status.text
            opened = await s.call("browser", {"action": "open", "url": srv.url("/")})
            assert not opened.is_error, opened.text
            runtime = s.state[RUNTIME]
            browser = runtime.browsers["chrome"]
            assert st(await s.call("browser", {"action": "status"}))["running"] is True
            stopped = await s.call("browser", {"action": "stop"})
            assert "stopped" in stopped.text
            assert "chrome" not in runtime.browsers
            await s.call("browser", {"action": "start"})
            browser = runtime.browsers["chrome"]
        assert "chrome" not in runtime.browsers  # the session's close stopped it
        from playwright.async_api import Error as PlaywrightError

        with pytest.raises(PlaywrightError):
            await browser.context.new_page()


async def test_profiles_create_list_delete_and_names(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions")
        async with pb.session(cwd=tmp_path) as s:
            made = await s.call("browser", {"action": "create-profile", "name": "work"})
            assert not made.is_error, made.text
            assert 18800 <= st(made)["cdpPort"] <= 18899
            remote = await s.call("browser", {"action": "create-profile", "name": "far",
                                              "cdpUrl": "http://127.0.0.1:1/"})
            assert st(remote)["cdpUrl"] == "http://127.0.0.1:1/"
            listed = await s.call("browser", {"action": "profiles"})
            names = {p["name"]: p for p in st(listed)["profiles"]}
            assert {"chrome", "work", "far"} <= set(names)
            assert names["chrome"]["default"] and names["far"]["remote"]
            assert names["work"]["cdpPort"] != names["chrome"]["cdpPort"]
            bad = await s.call("browser", {"action": "create-profile", "name": "Not_Valid"})
            assert bad.is_error and bad.metadata["error_kind"] == "invalid_profile"
            long = await s.call("browser", {"action": "create-profile", "name": "a" * 65})
            assert long.is_error
            twice = await s.call("browser", {"action": "create-profile", "name": "work"})
            assert twice.metadata["error_kind"] == "profile_exists"
            opened = await s.call("browser", {"action": "open", "url": srv.url("/"), "profile": "work"})
            assert not opened.is_error, opened.text
            assert (tmp_path / "data" / "browser" / "profiles" / "work" / "user-data").is_dir()
            unknown = await s.call("browser", {"action": "status", "profile": "nope"})
            assert unknown.metadata["error_kind"] == "unknown_profile"
            reset_remote = await s.call("browser", {"action": "reset-profile", "name": "far"})
            assert reset_remote.metadata["error_kind"] == "remote_profile"
            attach = await s.call("browser", {"action": "start", "profile": "far"})
            assert attach.is_error and attach.metadata["error_kind"] == "engine_failed"
            deleted = await s.call("browser", {"action": "delete-profile", "name": "work"})
            assert not deleted.is_error
            assert not (tmp_path / "data" / "browser" / "profiles" / "work").exists()
            assert "work" not in s.state[RUNTIME].browsers


async def test_reset_profile_ends_an_orphan_on_the_profile_port(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions")
        async with pb.session(cwd=tmp_path) as first:
            await first.call("browser", {"action": "start"})
            async with pb.session(cwd=tmp_path) as second:
                busy = await second.call("browser", {"action": "start"})
                assert busy.is_error and busy.metadata["error_kind"] == "port_in_use", busy.text
                reset = await second.call("browser", {"action": "reset-profile", "name": "chrome"})
                assert not reset.is_error, reset.text
                assert st(reset)["ended"], reset.text


async def test_target_and_node_are_refused_with_the_reason(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions")
        async with pb.session(cwd=tmp_path) as s:
            for extra in ({"target": "node"}, {"target": "sandbox"}, {"node": "office-mac"}):
                result = await s.call("browser", {"action": "status", **extra})
                assert result.is_error and result.metadata["error_kind"] == "target_unavailable"
                assert "no plugin here backs" in result.text


async def test_a_slow_page_times_out_with_the_setting_named(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions")
        async with pb.session(cwd=tmp_path) as s:
            slow = await s.call("browser", {"action": "open", "url": srv.url("/slow"), "timeoutMs": 800})
            assert slow.is_error and slow.metadata["error_kind"] == "timeout"
            assert "browser.navigationTimeoutMs" in slow.text


async def test_the_proxy_connects_to_the_address_it_checked(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions", private=["127.0.0.1"])
        resolver = FlippingResolver()
        pb.stash[RESOLVER] = resolver
        port = srv.server_address[1]
        async with pb.session(cwd=tmp_path) as s:
            first = await s.call("browser", {"action": "open", "url": f"http://rebind.test:{port}/"})
            assert not first.is_error, first.text
            assert "Welcome" in (await s.call("browser", {"action": "snapshot"})).text
            resolver.flipped = True
            second = await s.call("browser", {"action": "navigate", "url": f"http://rebind.test:{port}/form"})
            assert second.is_error and second.metadata["error_kind"] == "blocked"
            assert "192.0.2.7" in second.text


async def test_private_addresses_need_the_setting(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions", private=[])
        async with pb.session(cwd=tmp_path) as s:
            refused = await s.call("browser", {"action": "open", "url": srv.url("/")})
            assert refused.is_error and refused.metadata["error_kind"] == "blocked"
            assert "browser.allowPrivateHosts" in refused.text


async def test_navigation_and_evaluate_ask_by_default(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    def approver(call: Any, decision: Any) -> Any:
        asked.append(dict(call.input))
        return PermissionUpdate(rules=["Browser(domain:127.0.0.1)"]) if call.input.get("action") == "open" else False

    with site() as srv:
        pb = board(srv, tmp_path)
        assert pb.check("browser", {"action": "open", "url": srv.url("/")}).decision == "ask"
        assert pb.check("browser", {"action": "act", "kind": "evaluate", "fn": "1"}).decision == "ask"
        assert pb.check("browser", {"action": "snapshot"}).decision == "allow"
        async with pb.session(cwd=tmp_path, approver=approver) as s:
            assert not (await s.call("browser", {"action": "open", "url": srv.url("/")})).is_error
            evaluated = await s.call("browser", {"action": "act", "kind": "evaluate", "fn": "1 + 1"})
            assert evaluated.is_error and evaluated.reason in ("not_approved", "denied", "approval_refused"), \
                evaluated.reason
            assert [a["action"] for a in asked] == ["open", "act"]
            again = await s.call("browser", {"action": "navigate", "url": srv.url("/form")})
            assert not again.is_error and len(asked) == 2  # the domain was remembered for the session


def test_turned_off_and_unavailable_reasons(tmp_path: Path) -> None:
    off = isolated_pegboard(pegboard_browser, FamilyPlugin(), config={"browser": {"enabled": False}}, cwd=tmp_path)
    row = next(d for d in off.tools().decisions if d.name == "browser")
    assert not row.enabled and "browser.enabled" in row.reason
    missing = isolated_pegboard(pegboard_browser, FamilyPlugin(),
                                config={"browser": {"executablePath": str(tmp_path / "no-chromium")}}, cwd=tmp_path)
    row = next(d for d in missing.tools().decisions if d.name == "browser")
    assert not row.enabled and "executablePath" in row.reason


async def test_session_close_runs_even_when_the_page_hangs(tmp_path: Path) -> None:
    with site() as srv:
        pb = board(srv, tmp_path, mode="bypassPermissions")
        async with pb.session(cwd=tmp_path) as s:
            await s.call("browser", {"action": "open", "url": srv.url("/")})
            task = asyncio.ensure_future(s.call("browser", {"action": "navigate", "url": srv.url("/slow")}))
            await asyncio.sleep(0.3)
        result = await asyncio.wait_for(task, 10)
        assert result.is_error  # the closed browser ends the call with a result, not an exception


async def test_deny_rules_block_subresources_and_show_them_in_the_console(tmp_path: Path) -> None:
    from tests.builtin.web.server import Reply

    with site() as srv:
        port = srv.server_address[1]
        srv.route("/with-denied-parts", Reply(body=(
            f"<title>Parts</title><img src='http://localhost:{port}/pixel-denied' alt='x'>"
            f"<iframe src='http://localhost:{port}/frame-denied'></iframe><p>main</p>").encode()))
        pb = board(srv, tmp_path, mode="bypassPermissions", private=["127.0.0.1", "localhost"],
                   rules={"deny": ["Browser(domain:localhost)"]})
        async with pb.session(cwd=tmp_path) as s:
            opened = await s.call("browser", {"action": "open", "url": srv.url("/with-denied-parts")})
            assert not opened.is_error, opened.text
            await s.call("browser", {"action": "act", "kind": "wait", "timeMs": 300})
            console = await s.call("browser", {"action": "console", "level": "blocked"})
            assert "pixel-denied" in console.text and "Browser(domain:localhost)" in console.text
            assert "frame-denied" in console.text
            assert srv.hits("/pixel-denied") == 0 and srv.hits("/frame-denied") == 0
            assert srv.hits("/with-denied-parts") == 1
