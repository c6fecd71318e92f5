"""The bubblewrap sandbox on real processes: masked and read-only paths, writes, the network proxy."""

from __future__ import annotations

import asyncio
import http.server
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pegboard_sandbox.plugin as sandbox_plugin
from pegboard.testing import isolated_pegboard
from pegboard_sandbox import BubblewrapBackend, SandboxRefused, build_layout
from pegboard_sandbox.check import probe
from pegboard_sandbox.config import SANDBOX_SECTION
from pegboard_sandbox.layout import bwrap_args
from pegboard_sandbox.proxy import FilteringProxy, make_guard
from pegboard_toolkit import LocalBackend
from tests.builtin.runtime_support import RUNTIME, runtime_pegboard

WHY = probe()
needs_bwrap = pytest.mark.skipif(WHY is not None, reason=f"bubblewrap cannot run here: {WHY}")
MODULES = (*RUNTIME, sandbox_plugin)
READ_ENV = f"{sys.executable} -c \"print(open('.env').read())\""


def sandboxed(tmp_path: Path, **sandbox: Any) -> Any:
    config = {
        "permissions": {"allow": ["Bash"], "deny": ["Read(./.env)", "Edit(./locked)"]},
        "sandbox": {"enabled": True, **sandbox},
    }
    return runtime_pegboard(tmp_path, config=config, modules=MODULES)


async def bash(pb: Any, command: str, **extra: Any) -> Any:
    async with pb.session() as session:
        return await session.call("Bash", {"command": command, **extra})


@needs_bwrap
async def test_read_denied_file_is_masked_inside_and_readable_outside(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SECRET=1\n")
    inside = await bash(sandboxed(tmp_path), READ_ENV)
    assert "SECRET" not in inside.text
    outside = await bash(runtime_pegboard(tmp_path), READ_ENV)
    assert not outside.is_error and "SECRET=1" in outside.text


@needs_bwrap
async def test_write_outside_the_working_dirs_fails(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    project = tmp_path / "project"
    project.mkdir()
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    pb = sandboxed(project)
    result = await bash(pb, f"echo x > {elsewhere}/out; echo x > $HOME/pegboard-out; echo in > inside.txt")
    assert result.text.count("Read-only file system") == 2, result.text
    assert not (elsewhere / "out").exists()
    assert (project / "inside.txt").read_text() == "in\n"


@needs_bwrap
async def test_edit_denied_path_is_read_only_inside_a_working_dir(tmp_path: Path) -> None:
    (tmp_path / "locked").write_text("old\n")
    result = await bash(sandboxed(tmp_path), "echo new > locked")
    assert result.is_error
    assert (tmp_path / "locked").read_text() == "old\n"


@needs_bwrap
async def test_session_temp_dir_is_writable(tmp_path: Path) -> None:
    result = await bash(sandboxed(tmp_path), 'echo hi > "$TMPDIR/t" && cat "$TMPDIR/t"')
    assert not result.is_error, result.text
    assert result.text == "hi"


async def test_pattern_rules_expand_against_the_tree(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "key.pem").write_text("k")
    (tmp_path / ".env").write_text("e")
    layout = build_layout(cwd=tmp_path, project=tmp_path, working_dirs=[tmp_path],
                          deny_rules=["Read(.env)", "Read(**/*.pem)", "Bash(rm:*)", "Edit(/a)"], temp_dir=None)
    assert set(layout.masked) == {tmp_path / ".env", tmp_path / "a" / "b" / "key.pem"}
    assert layout.read_only == (tmp_path / "a",)
    args = bwrap_args(layout)
    assert args[:4] == ["bwrap", "--ro-bind", "/", "/"] and "--unshare-net" in args
    assert ["--ro-bind", "/dev/null", str(tmp_path / ".env")] == args[args.index("/dev/null") - 1:][:3]


def test_a_pattern_past_the_bound_refuses_and_names_the_rule(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i}").write_text("")
    with pytest.raises(SandboxRefused, match=r"Read\(\*\*/\*.key\)"):
        build_layout(cwd=tmp_path, project=tmp_path, working_dirs=[tmp_path],
                     deny_rules=["Read(**/*.key)"], temp_dir=None, limit=10)


@needs_bwrap
async def test_refused_layout_refuses_the_command(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i}").write_text("")
    config = {"permissions": {"allow": ["Bash"], "deny": ["Read(*.key)"]},
              "sandbox": {"enabled": True, "maxExpandedPaths": 5}}
    marker = tmp_path / "ran"
    result = await bash(runtime_pegboard(tmp_path, config=config, modules=MODULES), f"touch {marker}")
    assert result.is_error and "Read(*.key)" in result.text
    assert not marker.exists()


async def test_missing_bwrap_refuses_with_how_to_install(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    result = await bash(sandboxed(tmp_path, bwrap="no-such-bwrap"), f"touch {marker}")
    assert result.is_error and "apt-get install bubblewrap" in result.text
    assert not marker.exists()
    ran = await bash(sandboxed(tmp_path, bwrap="no-such-bwrap", failIfUnavailable=False), f"touch {marker}")
    assert not ran.is_error and marker.exists()


async def test_unsandboxed_command_is_refused_when_not_allowed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    pb = sandboxed(tmp_path, allowUnsandboxedCommands=False)
    result = await bash(pb, f"touch {marker}", dangerouslyDisableSandbox=True)
    assert result.is_error and "allowUnsandboxedCommands" in result.text
    assert not marker.exists()


@needs_bwrap
async def test_unsandboxed_command_asks_and_runs_outside_when_approved(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SECRET=1\n")
    asked: list[str] = []

    class Approver:
        @sandbox_plugin.hookimpl
        def request_approval(self, call: Any, decision: Any, context: Any) -> bool:
            asked.append(decision.reason)
            return True

    config = {"permissions": {"allow": ["Bash"], "deny": ["Read(./.env)"]}, "sandbox": {"enabled": True}}
    pb = runtime_pegboard(tmp_path, Approver(), config=config, modules=MODULES)
    result = await bash(pb, READ_ENV, dangerouslyDisableSandbox=True)
    assert any("outside the sandbox" in a for a in asked)
    assert "SECRET=1" in result.text


def test_section_declares_widening_keys() -> None:
    keys = {k.removeprefix("sandbox.") for k, marker in SANDBOX_SECTION.declarations().items()
            if marker is not None and marker.widening}
    assert {"failIfUnavailable", "allowUnsandboxedCommands", "autoAllowBashIfSandboxed",
            "network.allowedDomains", "network.allowPrivateHosts", "enabled"} <= keys


def test_check_command_reports(tmp_path: Path) -> None:
    result = CliRunner().invoke(sandbox_plugin.sandbox_cli, ["check"])
    assert "bubblewrap binary" in result.output
    assert result.exit_code == (0 if WHY is None else 1)
    missing = CliRunner().invoke(sandbox_plugin.sandbox_cli, ["check", "--bwrap", "no-such-bwrap"])
    assert missing.exit_code == 1 and "NO  bubblewrap binary" in missing.output


# -- network ---------------------------------------------------------------------------------

class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from loopback"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


class TestNames:
    """Resolves the test names to loopback; everything else resolves to nothing."""

    def resolve(self, host: str, port: int) -> Sequence[str]:
        if host.endswith(".test"):
            return ["127.0.0.1"]
        raise OSError(f"no such host {host}")


def _client(url: str) -> list[str]:
    code = ("import urllib.request,sys\n"
            "try:\n"
            f"    print(urllib.request.urlopen({url!r}, timeout=5).read().decode())\n"
            "except Exception as e:\n"
            "    print('FAILED', e); sys.exit(7)\n")
    return [sys.executable, "-c", code]


async def _run(backend: Any, argv: list[str], cwd: Path) -> tuple[int | None, str]:
    proc = await backend.start(argv, cwd=cwd, env={"PATH": "/usr/bin:/bin"})
    out = b""
    while chunk := await proc.read():
        out += chunk
    return await proc.wait(10), out.decode()


def _layout(tmp_path: Path) -> Any:
    return build_layout(cwd=tmp_path, project=tmp_path, working_dirs=[tmp_path], deny_rules=[],
                        temp_dir=tmp_path / "tmp")


@needs_bwrap
async def test_network_is_off_without_allowed_domains(tmp_path: Path, server: int) -> None:
    url = f"http://127.0.0.1:{server}/"
    outside = await _run(LocalBackend(), _client(url), tmp_path)
    assert outside == (0, "hello from loopback\n")
    backend = BubblewrapBackend(LocalBackend(), lambda: _layout(tmp_path))
    status, out = await _run(backend, _client(url), tmp_path)
    assert status == 7 and "FAILED" in out
    if shutil.which("curl"):
        status, out = await _run(backend, ["curl", "-sS", "--max-time", "5", url], tmp_path)
        assert status != 0 and "hello" not in out


@needs_bwrap
async def test_proxy_lets_an_allowed_name_through_and_refuses_others(tmp_path: Path, server: int) -> None:
    guard = make_guard(["allowed.test"], ["allowed.test"], resolver=TestNames())
    proxy = FilteringProxy(tmp_path / "proxy.sock", guard)
    await proxy.start()

    async def socket_path() -> Path:
        return proxy.path

    try:
        backend = BubblewrapBackend(LocalBackend(), lambda: _layout(tmp_path), proxy=socket_path)
        status, out = await _run(backend, _client(f"http://allowed.test:{server}/"), tmp_path)
        assert (status, out) == (0, "hello from loopback\n")
        if shutil.which("curl"):
            status, out = await _run(backend, ["curl", "-sS", "--max-time", "5", f"http://allowed.test:{server}/"],
                                     tmp_path)
            assert status == 0 and out == "hello from loopback"
        status, out = await _run(backend, _client(f"http://other.test:{server}/"), tmp_path)
        assert status == 7 and "403" in out
        assert any("sandbox.network.allowedDomains" in r for r in proxy.refusals)
    finally:
        await proxy.close()


async def test_proxy_refuses_private_addresses_of_an_allowed_name(tmp_path: Path, server: int) -> None:
    guard = make_guard(["allowed.test"], resolver=TestNames())
    proxy = FilteringProxy(tmp_path / "p.sock", guard)
    await proxy.start()
    try:
        reader, writer = await asyncio.open_unix_connection(str(proxy.path))
        writer.write(f"CONNECT allowed.test:{server} HTTP/1.1\r\nHost: allowed.test\r\n\r\n".encode())
        await writer.drain()
        head = await reader.read(4096)
        assert head.startswith(b"HTTP/1.1 403") and b"127.0.0.1" in head
        writer.close()
    finally:
        await proxy.close()


@needs_bwrap
async def test_auto_allow_runs_a_sandboxed_command_without_the_ask(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    plain = {"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": False}}
    asked = await bash(isolated_pegboard(*MODULES, config=plain, cwd=tmp_path), f"touch {marker}")
    assert asked.is_error and not marker.exists()
    auto = {"sandbox": {"enabled": True}, "permissions": {"ask": ["Bash(rm:*)"], "deny": ["Bash(curl:*)"]}}
    pb = isolated_pegboard(*MODULES, config=auto, cwd=tmp_path)
    ran = await bash(pb, f"touch {marker}")
    assert not ran.is_error, ran.text
    assert marker.exists()
    asks = await bash(pb, f"rm {marker}")
    assert asks.is_error and marker.exists()
    denied = await bash(pb, "curl http://127.0.0.1:9/")
    assert denied.is_error and "denied" in denied.text.lower()


@needs_bwrap
async def test_a_denied_directory_is_empty_inside(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key").write_text("k")
    config = {"permissions": {"allow": ["Bash"], "deny": ["Read(./secrets/**)"]}, "sandbox": {"enabled": True}}
    result = await bash(runtime_pegboard(tmp_path, config=config, modules=MODULES),
                        f"{sys.executable} -c \"import os; print(os.listdir('secrets'))\"")
    assert result.text == "[]", result.text
    assert (tmp_path / "secrets" / "key").read_text() == "k"
