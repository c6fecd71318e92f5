"""The local execution backend: asyncio subprocesses, each in its own process group.

Every process starts with ``start_new_session``, so it leads a new session and process
group; signals go to the group (``os.killpg``), which reaches grandchildren that a plain
``kill`` of the child would leave running. ``terminate`` sends TERM, waits, then KILL.
``LocalBackend(new_session="if-terminal")`` starts a new session only when this process
has a controlling terminal (the session is what keeps a command from pushing input into
it) and otherwise just a new process group: under bubblewrap a new session costs about
15 ms a command.
With ``pty=True`` the process gets a pseudo-terminal from the ``pty`` module as stdin,
stdout and stderr; its output is read from the master side.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard import ExecBackend, ExecError, ExecProcess, ToolContext

READ_SIZE = 65536


class LocalProcess:
    """An :class:`pegboard.ExecProcess` over an ``asyncio.subprocess.Process``."""

    def __init__(self, proc: asyncio.subprocess.Process, master_fd: int | None = None) -> None:
        self._proc = proc
        self._pgid = proc.pid
        self._master = master_fd
        self._pty_reader: asyncio.StreamReader | None = None
        self._status: int | None = None
        self._exited: asyncio.Future[int] | None = None
        self._poller: asyncio.Future[None] | None = None
        if master_fd is not None:
            self._pty_reader = self._attach_pty(master_fd)

    def _attach_pty(self, fd: int) -> asyncio.StreamReader:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=READ_SIZE * 4, loop=loop)
        os.set_blocking(fd, False)

        def ready() -> None:
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                return
            except OSError as exc:  # EIO: every holder of the slave side has closed it
                if exc.errno not in (errno.EIO, errno.EBADF):
                    reader.set_exception(exc)
                data = b""
            if data:
                reader.feed_data(data)
            else:
                loop.remove_reader(fd)
                reader.feed_eof()

        loop.add_reader(fd, ready)
        return reader

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._status if self._status is not None else self._proc.returncode

    async def read(self, stream: str = "stdout", size: int = READ_SIZE) -> bytes:
        if self._pty_reader is not None:
            return await self._pty_reader.read(size) if stream == "stdout" else b""
        reader = self._proc.stdout if stream == "stdout" else self._proc.stderr
        if reader is None:
            return b""
        return await reader.read(size)

    async def write(self, data: bytes) -> None:
        if self._master is not None:
            await asyncio.get_running_loop().run_in_executor(None, os.write, self._master, data)
            return
        writer = self._proc.stdin
        if writer is None or writer.is_closing():
            raise BrokenPipeError("the process's stdin is closed")
        writer.write(data)
        await writer.drain()

    async def close_stdin(self) -> None:
        if self._master is not None:
            with contextlib.suppress(OSError):
                os.write(self._master, b"\x04")
            return
        writer = self._proc.stdin
        if writer is not None and not writer.is_closing():
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._pgid, signum)

    async def wait(self, timeout: float | None = None) -> int | None:
        if self._status is None and self._proc.returncode is not None:
            self._status = self._proc.returncode
        if self._status is not None:
            return self._status
        if self._exited is None:
            self._exited = self._watch_exit()
        try:
            return await asyncio.wait_for(asyncio.shield(self._exited), timeout)
        except TimeoutError:
            return None

    def _watch_exit(self) -> asyncio.Future[int]:
        """A future set when the process itself exits.

        asyncio's ``Process.wait`` (before Python 3.12) also waits until every holder of the
        output pipes closed them, so a command that leaves ``sleep 60 &`` behind would count as
        running. A pidfd says when the process exits; ``waitid(WNOWAIT)`` reads its status and
        leaves the reaping to asyncio.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()

        def done(status: int) -> None:
            if not future.done():
                self._status = status
                future.set_result(status)

        try:
            pidfd = os.pidfd_open(self._proc.pid)
        except (AttributeError, OSError):
            self._poller = asyncio.ensure_future(self._poll_exit(done))
            return future

        def ready() -> None:
            loop.remove_reader(pidfd)
            try:
                info = os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                info = None  # asyncio reaped it first; its status arrives on its own
            finally:
                os.close(pidfd)
            if info is not None:
                done(info.si_status if info.si_code == os.CLD_EXITED else -info.si_status)
            else:
                self._poller = asyncio.ensure_future(self._poll_exit(done))

        loop.add_reader(pidfd, ready)
        return future

    async def _poll_exit(self, done: Callable[[int], None]) -> None:
        # asyncio's watcher reaped the child and has queued the news: usually a turn of the
        # loop or two brings it
        spins, delay = 0, 0.0005
        while self._proc.returncode is None:
            if spins < 20:
                spins += 1
                await asyncio.sleep(0)
            else:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.05)
        done(self._proc.returncode)

    async def terminate(self, grace: float = 2.0) -> int:
        self.signal(signal.SIGTERM)
        status = await self.wait(grace)
        # KILL the group even when the leader went: its children may ignore TERM
        self.signal(signal.SIGKILL)
        if status is None:
            status = await self.wait()
        self.close()
        return status if status is not None else -signal.SIGKILL

    def close(self) -> None:
        """Stop reading: release the pipes (a process the command left behind may still hold
        their other end) and the pty master; safe to call more than once."""
        transport = getattr(self._proc, "_transport", None)
        # only once asyncio saw the exit: closing earlier would reap the child under its watcher
        if transport is not None and self._proc.returncode is not None:
            with contextlib.suppress(Exception):
                transport.close()
        fd, self._master = self._master, None
        if fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
            if self._pty_reader is not None and not self._pty_reader.at_eof():
                self._pty_reader.feed_eof()


@functools.cache
def has_controlling_terminal() -> bool:
    """Whether this process has a controlling terminal (``/dev/tty`` opens)."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


class LocalBackend:
    """Runs processes on this machine; the default when no ``exec_backend`` hook answers."""

    name = "local"

    def __init__(self, *, new_session: Literal["always", "if-terminal"] = "always") -> None:
        if new_session not in ("always", "if-terminal"):
            raise ValueError(f"new_session must be 'always' or 'if-terminal', not {new_session!r}")
        self.new_session = new_session

    def _group(self) -> dict[str, Any]:
        if self.new_session == "always" or has_controlling_terminal():
            return {"start_new_session": True}
        return {"process_group": 0}

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
        if not Path(cwd).is_dir():
            raise ExecError(f"working directory {cwd} does not exist")
        if pty:
            return await self._start_pty(argv, cwd, env)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                env=dict(env),
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                limit=READ_SIZE * 4,
                **self._group(),
            )
        except OSError as exc:
            raise ExecError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        return LocalProcess(proc)

    async def _start_pty(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> ExecProcess:
        import pty

        master, slave = pty.openpty()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                env=dict(env),
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(master)
            raise ExecError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        finally:
            os.close(slave)
        return LocalProcess(proc, master_fd=master)


_LOCAL = LocalBackend()


async def backend_for(ctx: ToolContext) -> ExecBackend:
    """The backend for this call: an ``exec_backend`` hook's, else the local one."""
    return await ctx.exec_backend(default=_LOCAL)


def process_env(ctx: ToolContext, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command gets: this process's, then the Pegboard instance's, then ``extra``."""
    env = {**os.environ, **dict(ctx.env)}
    if extra:
        env.update(extra)
    return env


__all__ = ["LocalBackend", "LocalProcess", "backend_for", "process_env"]
