"""``BubblewrapBackend``: the local backend with every command wrapped in ``bwrap``."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from pegboard import ExecBackend, ExecError, ExecProcess
from pegboard_sandbox.layout import Layout, SandboxRefused, bwrap_args

BRIDGE = Path(__file__).with_name("bridge.py")
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


class SandboxUnavailable(ExecError):
    """bubblewrap is missing or cannot create namespaces here; the message says how to fix it."""


class BubblewrapBackend:
    """Starts ``argv`` inside a bubblewrap namespace laid out by ``layout()``.

    ``layout`` is called per command (the deny-rule expansion sees the tree as it is then);
    ``proxy`` returns the unix socket of the filtering proxy, or ``None`` for no network.
    """

    name = "bubblewrap"

    def __init__(
        self,
        inner: ExecBackend,
        layout: Callable[[], Layout],
        *,
        bwrap: str = "bwrap",
        proxy: Callable[[], Awaitable[Path | None]] | None = None,
    ) -> None:
        self.inner = inner
        self._layout = layout
        self.bwrap = bwrap
        self._proxy = proxy

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
        proxy_socket = await self._proxy() if self._proxy is not None else None
        full = self.command(argv, layout, cwd=Path(cwd), proxy_socket=proxy_socket)
        env = dict(env)
        if layout.temp_dir is not None:
            env["TMPDIR"] = str(layout.temp_dir)
        return await self.inner.start(full, cwd=cwd, env=env, stdin=stdin, pty=pty, merge_stderr=merge_stderr)
