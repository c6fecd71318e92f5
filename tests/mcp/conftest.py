"""Fixtures for the MCP tests: how to start ``pegboard serve`` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
SUPPORT = HERE / "support"
VENV_BIN = Path(sys.executable).parent
PEGBOARD = shutil.which("pegboard", path=str(VENV_BIN)) or str(VENV_BIN / "pegboard")


def serve_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a served Pegboard: isolated config dirs, the test plugin importable."""
    env = {
        "PYTHONPATH": os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "PEGBOARD_CONFIG_DIR": os.environ["PEGBOARD_CONFIG_DIR"],
        "PEGBOARD_MANAGED_CONFIG_DIR": os.environ["PEGBOARD_MANAGED_CONFIG_DIR"],
        "PEGBOARD_CACHE_DIR": os.environ["PEGBOARD_CACHE_DIR"],
        "PATH": os.environ.get("PATH", ""),
    }
    env.update(extra or {})
    return env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A project directory with a text file and a config that denies ``Secret``."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "hello.txt").write_text("hello\nworld\n", encoding="utf-8")
    (tmp_path / "test-config.json").write_text(json.dumps({"permissions": {"deny": ["Secret"]}}), encoding="utf-8")
    return tmp_path


@pytest.fixture
def serve_args(workdir: Path) -> list[str]:
    return [
        "serve",
        "--plugin",
        "pegboard_mcp_testtools",
        "--config",
        str(workdir / "test-config.json"),
        "--cwd",
        str(workdir),
    ]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass
class HttpServer:
    """A running ``pegboard serve --http`` process."""

    proc: subprocess.Popen[bytes]
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"


@contextmanager
def http_serving(
    args: list[str], cwd: Path, host: str = "127.0.0.1", env: dict[str, str] | None = None
) -> Iterator[HttpServer]:
    """Start ``pegboard ARGS --http HOST:PORT`` and wait until it accepts connections."""
    port = free_port(host)
    proc = subprocess.Popen(
        [PEGBOARD, *args, "--http", f"{host}:{port}"],
        cwd=cwd,
        env=serve_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection((host, port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(proc.stderr.read().decode() if proc.stderr else "server exited") from None
            time.sleep(0.05)
    try:
        yield HttpServer(proc, host, port)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class RawHttpSession:
    """A handshake-era MCP session over plain HTTP requests, to see exactly what the server answers."""

    HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def __init__(self, url: str, protocol: str = "2025-06-18", headers: dict[str, str] | None = None) -> None:
        import httpx

        self.url = url
        self.http = httpx.Client(headers={**self.HEADERS, **(headers or {})}, timeout=30)
        self.ids = 0
        init = self.request(
            "initialize",
            {"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        self.initialize_result = init["result"]
        self.http.headers["mcp-session-id"] = self.session_id
        self.http.headers["mcp-protocol-version"] = protocol
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request; the JSON-RPC response (from a JSON or an SSE answer)."""
        self.ids += 1
        message: dict[str, object] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        response = self.http.post(self.url, json=message)
        if "mcp-session-id" in response.headers:
            self.session_id = response.headers["mcp-session-id"]
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:"):
                    answer = json.loads(line[5:])
                    if answer.get("id") == self.ids:
                        return dict(answer)
            raise AssertionError(f"no answer to {method} in {response.text!r}")
        return dict(response.json())

    def close(self) -> None:
        self.http.close()


class RawStdioSession:
    """``pegboard serve`` over stdio driven line by line, to see exactly what the server answers."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ids = 0
        self.initialize_result: dict[str, Any] = {}

    @classmethod
    async def start(cls, args: list[str], cwd: Path, protocol: str | None = "2025-06-18") -> RawStdioSession:
        proc = await asyncio.create_subprocess_exec(
            PEGBOARD,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=serve_env(),
            cwd=str(cwd),
            limit=64 * 1024 * 1024,
        )
        session = cls(proc)
        if protocol is not None:
            init: dict[str, object] = {
                "protocolVersion": protocol,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            }
            session.initialize_result = (await session.request("initialize", init))["result"]
            await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return session

    async def send(self, message: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def read(self) -> object:
        """The next message that is not a notification."""
        assert self.proc.stdout is not None
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), 20)
            assert line, "server closed stdout"
            message = json.loads(line)
            if not (isinstance(message, dict) and "method" in message and "id" not in message):
                return message

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.ids += 1
        message: dict[str, object] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        answer = await self.read()
        assert isinstance(answer, dict) and answer.get("id") == self.ids, answer
        return answer

    async def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return await asyncio.wait_for(self.proc.wait(), 15)


#: A raw HTTP client's initialize request and the headers streamable HTTP wants.
INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
