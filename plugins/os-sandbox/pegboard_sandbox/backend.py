"""``BubblewrapBackend``: the local backend with every command wrapped in ``bwrap``.

Before a command starts, the missing protected paths of its layout get their placeholders
(held in the ledger); the process returned releases them once it has ended.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pegboard import ExecBackend, ExecError, ExecProcess, default_data_dir
from pegboard_sandbox.layout import Layout, SandboxRefused, bwrap_args
from pegboard_sandbox.placeholders import Hold, Ledger

BRIDGE = Path(__file__).with_name("bridge.py")
LEDGER_DIR = "sandbox"
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


class SandboxUnavailable(ExecError):
    """bubblewrap is missing or cannot create namespaces here; the message says how to fix it."""


class HeldProcess:
    """A sandboxed process: releases its placeholders once ``wait`` or ``terminate`` saw it end."""

    def __init__(self, process: ExecProcess, hold: Hold) -> None:
        self._process = process
        self._hold = hold

    def __getattr__(self, name: str) -> Any:
        return getattr(self._process, name)

    def _ended(self, status: int | None) -> int | None:
        if status is not None:
            self._hold.release()
        return status

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._ended(self._process.returncode)

    async def read(self, stream: Any = "stdout", size: int = 65536) -> bytes:
        return await self._process.read(stream, size)

    async def write(self, data: bytes) -> None:
        await self._process.write(data)

    async def close_stdin(self) -> None:
        await self._process.close_stdin()

    def signal(self, signum: int) -> None:
        self._process.signal(signum)

    async def wait(self, timeout: float | None = None) -> int | None:
        return self._ended(await self._process.wait(timeout))

    async def terminate(self, grace: float = 2.0) -> int:
        status = await self._process.terminate(grace)
        self._ended(status)
        return status


class BubblewrapBackend:
    """Starts ``argv`` inside a bubblewrap namespace laid out by ``layout()``.

    ``layout`` is called per command (the deny-rule expansion sees the tree as it is then);
    ``proxy`` returns the unix socket of the filtering proxy, or ``None`` for no network;
    ``ledger`` records the placeholders of missing protected paths (default: the one in the
    data directory, ``LEDGER_DIR``).
    """

    name = "bubblewrap"

    def __init__(
        self,
        inner: ExecBackend,
        layout: Callable[[], Layout],
        *,
        bwrap: str = "bwrap",
        proxy: Callable[[], Awaitable[Path | None]] | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.inner = inner
        self._layout = layout
        self.bwrap = bwrap
        self._proxy = proxy
        self.ledger = ledger if ledger is not None else Ledger(default_data_dir() / LEDGER_DIR)

    def command(self, argv: Sequence[str], layout: Layout, *, cwd: Path, proxy_socket: Path | None) -> list[str]:
        """The full command line that runs ``argv`` in the namespace."""
        binary = shutil.which(self.bwrap)
        if binary is None:
            raise SandboxUnavailable(f"the sandbox is enabled but {self.bwrap} is not on PATH; {INSTALL_HINT}")
        args = bwrap_args(layout, bwrap=binary)
        args += ["--chdir", str(cwd), "--"]
        if proxy_socket is not None:
            args += [sys.executable, "-I", str(BRIDGE), str(proxy_socket), "--"]
        return [*args, *argv]

    async def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bool = False,
        pty: bool = False,
        merge_stderr: bool = True,
    ) -> ExecProcess:
        if not argv:
            raise ExecError("nothing to run: argv is empty")
        try:
            layout = self._layout()
        except SandboxRefused as exc:
            raise ExecError(str(exc)) from exc
        if layout.temp_dir is not None:
            layout.temp_dir.mkdir(parents=True, exist_ok=True)
        hold = self._hold(layout)
        try:
            proxy_socket = await self._proxy() if self._proxy is not None else None
            full = self.command(argv, layout, cwd=Path(cwd), proxy_socket=proxy_socket)
            env = dict(env)
            if layout.temp_dir is not None:
                env["TMPDIR"] = str(layout.temp_dir)
            process = await self.inner.start(full, cwd=cwd, env=env, stdin=stdin, pty=pty, merge_stderr=merge_stderr)
        except BaseException:
            if hold is not None:
                hold.release()
            raise
        if hold is None:
            return process
        hold.transfer(process.pid)
        return HeldProcess(process, hold)

    def _hold(self, layout: Layout) -> Hold | None:
        if not layout.protected:
            return None
        try:
            return self.ledger.hold(layout.protected)
        except OSError as exc:
            raise ExecError(
                f"the sandbox cannot start: it cannot record the placeholders of missing protected paths in "
                f"{self.ledger.path}: {exc}; make that directory writable (it is in the data directory, "
                f"PEGBOARD_DATA_DIR)"
            ) from exc
