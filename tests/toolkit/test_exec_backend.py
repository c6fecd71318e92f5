"""The local execution backend on real processes: streams, stdin, groups, deadlines, pty."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from pegboard import ExecBackend, ExecError, ExecProcess
from pegboard_toolkit import LocalBackend
from tests.builtin.runtime_support import pid_gone, wait_for_file

ENV = dict(os.environ)


async def read_all(proc: ExecProcess, stream: str = "stdout") -> bytes:
    out = b""
    while chunk := await proc.read(stream):  # type: ignore[arg-type]
        out += chunk
    return out


def test_it_implements_the_protocols() -> None:
    backend = LocalBackend()
    assert isinstance(backend, ExecBackend)
    assert backend.name == "local"


async def test_merged_and_separate_streams(tmp_path: Path) -> None:
    backend = LocalBackend()
    script = "echo out; echo err >&2; echo out2"
    merged = await backend.start(["bash", "-c", script], cwd=tmp_path, env=ENV)
    assert await read_all(merged) == b"out\nerr\nout2\n"
    assert await merged.wait(5) == 0
    split = await backend.start(["bash", "-c", script], cwd=tmp_path, env=ENV, merge_stderr=False)
    assert await read_all(split) == b"out\nout2\n"
    assert await read_all(split, "stderr") == b"err\n"
    assert await split.wait(5) == 0


async def test_stdin_is_closed_unless_asked_for(tmp_path: Path) -> None:
    backend = LocalBackend()
    closed = await backend.start(["cat"], cwd=tmp_path, env=ENV)
    assert await read_all(closed) == b"" and await closed.wait(5) == 0
    with pytest.raises(BrokenPipeError):
        await closed.write(b"x")
    piped = await backend.start([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"],
                                cwd=tmp_path, env=ENV, stdin=True)
    await piped.write(b"hello")
    await piped.close_stdin()
    assert await read_all(piped) == b"HELLO\n" and await piped.wait(5) == 0


async def test_wait_has_a_deadline_and_terminate_reaches_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; while true; do sleep 0.1; done' & wait"
    proc = await LocalBackend().start(["bash", "-c", command], cwd=tmp_path, env=ENV)
    assert await proc.wait(0.2) is None and proc.returncode is None
    child = int(wait_for_file(pidfile))
    status = await proc.terminate(grace=0.5)
    assert status == -signal.SIGTERM and proc.returncode == status
    assert pid_gone(child)


async def test_signal_goes_to_the_whole_group(tmp_path: Path) -> None:
    proc = await LocalBackend().start(["bash", "-c", "sleep 30 & sleep 30; echo unreachable"], cwd=tmp_path, env=ENV)
    proc.signal(signal.SIGKILL)
    assert await proc.wait(5) == -signal.SIGKILL
    assert await read_all(proc) == b""


async def test_a_pty_is_a_terminal(tmp_path: Path) -> None:
    proc = await LocalBackend().start(["bash", "-c", "test -t 0 && test -t 1 && echo tty"], cwd=tmp_path,
                                      env=ENV, pty=True)
    assert (await read_all(proc)).strip() == b"tty"
    assert await proc.wait(5) == 0


async def test_start_failures_are_exec_errors(tmp_path: Path) -> None:
    backend = LocalBackend()
    with pytest.raises(ExecError, match="does not exist"):
        await backend.start(["true"], cwd=tmp_path / "missing", env=ENV)
    with pytest.raises(ExecError, match="cannot start"):
        await backend.start(["/no/such/program"], cwd=tmp_path, env=ENV)
    with pytest.raises(ExecError, match="empty"):
        await backend.start([], cwd=tmp_path, env=ENV)


async def test_a_new_session_always_by_default_and_only_with_a_terminal_when_asked(tmp_path: Path) -> None:
    from pegboard_toolkit.exec import has_controlling_terminal

    script = "python3 -c 'import os; print(os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid())'"
    always = await LocalBackend().start(["bash", "-c", f"exec {script}"], cwd=tmp_path, env=ENV)
    assert await read_all(always) == b"True True\n"
    await always.wait(5)
    maybe = await LocalBackend(new_session="if-terminal").start(["bash", "-c", f"exec {script}"], cwd=tmp_path,
                                                                 env=ENV)
    leader = "True" if has_controlling_terminal() else "False"
    assert await read_all(maybe) == f"{leader} True\n".encode()
    await maybe.wait(5)


async def test_a_process_group_without_a_session_is_still_terminated_whole(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; while true; do sleep 0.1; done' & wait"
    proc = await LocalBackend(new_session="if-terminal").start(["bash", "-c", command], cwd=tmp_path, env=ENV)
    child = int(wait_for_file(pidfile))
    await proc.terminate(0.2)
    assert pid_gone(child)


def test_new_session_takes_only_its_two_values() -> None:
    with pytest.raises(ValueError, match=r"always.*if-terminal"):
        LocalBackend(new_session="never")  # type: ignore[arg-type]
