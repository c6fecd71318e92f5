"""Fixtures for the MCP tests: how to start ``pegboard serve`` as a subprocess."""

from __future__ import annotations

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
