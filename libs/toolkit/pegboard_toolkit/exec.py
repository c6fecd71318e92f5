"""The local execution backend: each process in its own process group.

Every process starts with ``start_new_session``, so it leads a new session and process
group; signals go to the group (``os.killpg``), which reaches grandchildren that a plain
``kill`` of the child would leave running. ``terminate`` sends TERM, waits, then KILL.
``LocalBackend(new_session="if-terminal")`` starts a new session only when this process
has a controlling terminal (the session is what keeps a command from pushing input into
it) and otherwise just a new process group: under bubblewrap a new session costs about
15 ms a command.
With ``pty=True`` the process gets a pseudo-terminal from the ``pty`` module as stdin,
stdout and stderr; its output is read from the master side.

Where the kernel has pidfds (Linux 5.3+), a process is a :class:`PidfdProcess`: started
with ``subprocess.Popen`` on pipes this module owns, its output read straight from the
pipes by the event loop and its exit seen when its pidfd turns readable, then reaped here.
That skips asyncio's child watcher, which before Python 3.12 starts a thread for every
child. Elsewhere (or with ``LocalBackend(pidfd=False)``) it is a :class:`LocalProcess` over
an asyncio subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard import ExecBackend, ExecError, ExecProcess, ToolContext

READ_SIZE = 65536
#: How much already-written output a closed pipe still hands out (an asyncio stream's buffer).
KEPT_ON_CLOSE = READ_SIZE * 4


async def _terminate(proc: LocalProcess | PidfdProcess, grace: float) -> int:
    """TERM the group, wait ``grace`` seconds, then KILL the group even when the leader went
    (its children may ignore TERM); close the pipes; the exit status (``-KILL`` if unknown)."""
    proc.signal(signal.SIGTERM)
    status = await proc.wait(grace)
    proc.signal(signal.SIGKILL)
    if status is None:
        status = await proc.wait()
    proc.close()
    return status if status is not None else -signal.SIGKILL


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
        return await _terminate(self, grace)

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


class _Pipe:
    """The parent's end of one of a child's pipes (or a pty master, read and written), non-blocking
    and waited on through the event loop; closing it keeps what was already written, up to a bound."""

    def __init__(self, fd: int, *, pty: bool = False, readable: bool = True) -> None:
        os.set_blocking(fd, False)
        self.fd: int | None = fd
        self._pty = pty
        self._readable = readable
        self._loop = asyncio.get_running_loop()
        self._reading: asyncio.Future[None] | None = None
        self._writing: asyncio.Future[None] | None = None
        self._left = b""

    async def read(self, size: int) -> bytes:
        while True:
            fd = self.fd
            if fd is None:
                data, self._left = self._left[:size], self._left[size:]
                return data
            try:
                data = os.read(fd, size)
            except BlockingIOError:
                if self._reading is not None:
                    raise RuntimeError("another read is already waiting on this stream") from None
                waiter = self._reading = self._loop.create_future()
                self._loop.add_reader(fd, _settle, waiter)
                try:
                    await waiter
                finally:
                    self._reading = None
                    if self.fd == fd:
                        self._loop.remove_reader(fd)
                continue
            except OSError as exc:  # a pty's EIO: every holder of the slave side has closed it
                if not self._pty or exc.errno not in (errno.EIO, errno.EBADF):
                    raise
                data = b""
            if not data:
                self.close(keep=False)
            return data

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            fd = self.fd
            if fd is None:
                raise BrokenPipeError("the process's stdin is closed")
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                if self._writing is not None:
                    raise RuntimeError("another write is already waiting on this stream") from None
                waiter = self._writing = self._loop.create_future()
                self._loop.add_writer(fd, _settle, waiter)
                try:
                    await waiter
                finally:
                    self._writing = None
                    if self.fd == fd:
                        self._loop.remove_writer(fd)

    def close(self, *, keep: bool = True) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        if keep and self._readable:  # what the process wrote stays readable, as in a stream's buffer
            kept = bytearray()
            with contextlib.suppress(OSError):
                while len(kept) < KEPT_ON_CLOSE and (chunk := os.read(fd, READ_SIZE)):
                    kept += chunk
            self._left += kept
        if self._reading is not None:
            self._loop.remove_reader(fd)
            _settle(self._reading)
        if self._writing is not None:
            self._loop.remove_writer(fd)
            _settle(self._writing)
        with contextlib.suppress(OSError):
            os.close(fd)

    def __del__(self) -> None:
        # only reached once no loop waits on it (a closed loop, an abandoned process)
        fd = getattr(self, "fd", None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class PidfdProcess:
    """An :class:`pegboard.ExecProcess` over a ``subprocess.Popen`` child whose exit a pidfd
    reports; this object reaps it, asyncio's child watcher never sees it."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        *,
        stdout: int,
        stderr: int | None = None,
        stdin: int | None = None,
        pty: bool = False,
    ) -> None:
        self._popen = popen
        self._pid = popen.pid
        self._loop = asyncio.get_running_loop()
        self._stdout = _Pipe(stdout, pty=pty)
        self._stderr = _Pipe(stderr) if stderr is not None else None
        self._stdin = (self._stdout if pty else _Pipe(stdin, readable=False)) if stdin is not None else None
        self._pty = pty
        self._exited: asyncio.Future[int] = self._loop.create_future()
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self._pid)
        except OSError:  # out of descriptors: a thread waits instead
            threading.Thread(target=self._wait_in_thread, daemon=True).start()
        else:
            self._loop.add_reader(self._pidfd, self._reap)

    def __del__(self) -> None:
        # only reached once no loop watches the pidfd (the loop closed while the child ran)
        pidfd = getattr(self, "_pidfd", None)
        if pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(pidfd)

    def _reap(self) -> None:
        pidfd, self._pidfd = self._pidfd, None
        if pidfd is None:
            return
        self._loop.remove_reader(pidfd)
        try:
            info = os.waitid(os.P_PIDFD, pidfd, os.WEXITED)
        except ChildProcessError:  # reaped by someone else (a waitpid(-1) child watcher)
            info = None
        finally:
            os.close(pidfd)
        if info is None:
            status = 255
        else:
            status = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        self._exit(status)

    def _wait_in_thread(self) -> None:
        status = self._popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop closed first
            self._loop.call_soon_threadsafe(self._exit, status)

    def _exit(self, status: int) -> None:
        self._popen.returncode = status
        if not self._exited.done():
            self._exited.set_result(status)

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    async def read(self, stream: str = "stdout", size: int = READ_SIZE) -> bytes:
        pipe = self._stdout if stream == "stdout" else self._stderr
        return await pipe.read(size) if pipe is not None else b""

    async def write(self, data: bytes) -> None:
        if self._stdin is None:
            raise BrokenPipeError("the process's stdin is closed")
        await self._stdin.write(data)

    async def close_stdin(self) -> None:
        if self._pty:
            with contextlib.suppress(OSError):
                await self._stdout.write(b"\x04")
        elif self._stdin is not None:
            self._stdin.close(keep=False)

    def signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._pid, signum)

    async def wait(self, timeout: float | None = None) -> int | None:
        if self._exited.done():
            return self._exited.result()
        if timeout is None:
            return await asyncio.shield(self._exited)
        try:
            return await asyncio.wait_for(asyncio.shield(self._exited), timeout)
        except TimeoutError:
            return None

    async def terminate(self, grace: float = 2.0) -> int:
        return await _terminate(self, grace)

    def close(self) -> None:
        """Stop reading: release the pipes (a process the command left behind may still hold
        their other end) and the pty master; safe to call more than once."""
        for pipe in (self._stdin, self._stdout, self._stderr):
            if pipe is not None:
                pipe.close()


@functools.cache
def has_controlling_terminal() -> bool:
    """Whether this process has a controlling terminal (``/dev/tty`` opens)."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


@functools.cache
def pidfds_work() -> bool:
    """Whether this kernel and Python open pidfds (``os.pidfd_open``, Linux 5.3+)."""
    if not hasattr(os, "pidfd_open") or not hasattr(os, "P_PIDFD"):
        return False
    try:
        fd = os.pidfd_open(os.getpid())
    except OSError:
        return False
    os.close(fd)
    return True


class LocalBackend:
    """Runs processes on this machine; the default when no ``exec_backend`` hook answers.

    ``pidfd`` picks how exits are seen: ``None`` (the default) pidfds where they work,
    ``False`` always asyncio's subprocesses, ``True`` pidfds or a ``ValueError`` here.
    """

    name = "local"

    def __init__(self, *, new_session: Literal["always", "if-terminal"] = "always",
                 pidfd: bool | None = None) -> None:
        if new_session not in ("always", "if-terminal"):
            raise ValueError(f"new_session must be 'always' or 'if-terminal', not {new_session!r}")
        if pidfd and not pidfds_work():
            raise ValueError("pidfd=True but this system cannot open pidfds (Linux 5.3+ and Python 3.9+ can)")
        self.new_session = new_session
        self._pidfd = pidfd

    @property
    def uses_pidfd(self) -> bool:
        """Whether processes are watched through pidfds (see the class docstring)."""
        return pidfds_work() if self._pidfd is None else self._pidfd

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
        if not os.path.isdir(cwd):
            raise ExecError(f"working directory {cwd} does not exist")
        child_env = spawn_env(env)
        if self.uses_pidfd:
            return self._start_pidfd(argv, cwd, child_env, stdin, pty, merge_stderr)
        if pty:
            return await self._start_pty(argv, cwd, child_env)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                env=child_env,
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                limit=READ_SIZE * 4,
                **self._group(),
            )
        except OSError as exc:
            raise ExecError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        return LocalProcess(proc)

    def _start_pidfd(self, argv: Sequence[str], cwd: Path, env: dict[str, str] | None, stdin: bool, pty: bool,
                     merge_stderr: bool) -> ExecProcess:
        ours: list[int] = []  # the parent's ends, closed here if the start fails
        theirs: list[int] = []  # the child's ends, closed here once it started
        if pty:
            import pty as ptys

            master, slave = ptys.openpty()
            ours.append(master)
            theirs.append(slave)
            std: dict[str, Any] = {"stdin": slave, "stdout": slave, "stderr": slave, "start_new_session": True}
        else:
            out_r, out_w = os.pipe2(os.O_CLOEXEC)
            ours.append(out_r)
            theirs.append(out_w)
            std = {"stdout": out_w, "stderr": subprocess.STDOUT, "stdin": subprocess.DEVNULL, **self._group()}
            if not merge_stderr:
                err_r, err_w = os.pipe2(os.O_CLOEXEC)
                ours.append(err_r)
                theirs.append(err_w)
                std["stderr"] = err_w
            if stdin:
                in_r, in_w = os.pipe2(os.O_CLOEXEC)
                ours.append(in_w)
                theirs.append(in_r)
                std["stdin"] = in_r
        try:
            popen = subprocess.Popen(list(argv), cwd=cwd, env=env, **std)
        except OSError as exc:
            for fd in ours:
                os.close(fd)
            raise ExecError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        finally:
            for fd in theirs:
                os.close(fd)
        if pty:
            return PidfdProcess(popen, stdout=ours[0], stdin=ours[0], pty=True)
        err = ours[1] if not merge_stderr else None
        return PidfdProcess(popen, stdout=ours[0], stderr=err, stdin=ours[-1] if stdin else None)

    async def _start_pty(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None) -> ExecProcess:
        import pty

        master, slave = pty.openpty()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                env=env,
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


_environ_bytes: dict[bytes, bytes] | None = None
_environ: dict[str, str] = {}


def environ() -> dict[str, str]:
    """This process's environment as a plain dict (do not change it): copied again only
    when ``os.environ`` changed, which a comparison of its bytes tells cheaply."""
    global _environ_bytes, _environ
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return dict(os.environ)
    if raw != _environ_bytes:
        _environ, _environ_bytes = dict(os.environ), dict(raw)
    return _environ


def spawn_env(env: Mapping[str, str]) -> dict[str, str] | None:
    """What to hand ``Popen`` for ``env``: ``None`` (inherit, nothing to encode) when it is
    exactly this process's environment, else a dict of it."""
    current = environ()
    if isinstance(env, dict):
        return None if env == current else env
    env = dict(env)
    return None if env == current else env


def process_env(ctx: ToolContext, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command gets: this process's, then the Pegboard instance's, then ``extra``."""
    env = dict(environ())
    env.update(ctx.env)
    if extra:
        env.update(extra)
    return env


__all__ = [
    "LocalBackend",
    "LocalProcess",
    "PidfdProcess",
    "backend_for",
    "environ",
    "pidfds_work",
    "process_env",
    "spawn_env",
]
