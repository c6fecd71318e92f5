"""How the local backend sees a process end, on both paths: pidfds (the default where the
kernel has them) and asyncio's subprocesses (``LocalBackend(pidfd=False)``, the fallback)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from pegboard import ExecProcess
from pegboard_toolkit import LocalBackend, LocalProcess
from pegboard_toolkit.exec import PidfdProcess, environ, pidfds_work, spawn_env
from tests.builtin.runtime_support import pid_gone, wait_for_file

needs_pidfd = pytest.mark.skipif(not pidfds_work(), reason="this kernel cannot open pidfds (Linux 5.3+)")
MODES = [pytest.param(True, id="pidfd", marks=needs_pidfd), pytest.param(False, id="asyncio")]


@pytest.fixture(params=MODES)
def backend(request: pytest.FixtureRequest) -> LocalBackend:
    return LocalBackend(pidfd=request.param)


async def read_all(proc: ExecProcess, stream: str = "stdout") -> bytes:
    out = b""
    while chunk := await proc.read(stream):  # type: ignore[arg-type]
        out += chunk
    return out


async def run(backend: LocalBackend, script: str, cwd: Path) -> ExecProcess:
    return await backend.start(["bash", "-c", script], cwd=cwd, env=environ())


def test_the_switch_picks_the_path() -> None:
    assert not LocalBackend(pidfd=False).uses_pidfd
    assert LocalBackend().uses_pidfd == pidfds_work()


async def test_each_path_gives_its_own_process(tmp_path: Path) -> None:
    fallback = await run(LocalBackend(pidfd=False), "true", tmp_path)
    assert isinstance(fallback, LocalProcess) and await fallback.wait(10) == 0
    if pidfds_work():
        watched = await run(LocalBackend(pidfd=True), "true", tmp_path)
        assert isinstance(watched, PidfdProcess) and await watched.wait(10) == 0


async def test_without_pidfds_the_default_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    pidfds_work.cache_clear()
    try:
        assert not pidfds_work()
        with pytest.raises(ValueError, match="cannot open pidfds"):
            LocalBackend(pidfd=True)
        proc = await run(LocalBackend(), "echo fallback; exit 3", tmp_path)
        assert isinstance(proc, LocalProcess)
        assert await read_all(proc) == b"fallback\n" and await proc.wait(10) == 3
    finally:
        monkeypatch.undo()
        pidfds_work.cache_clear()


@pytest.mark.parametrize("code", [0, 1, 3, 255])
async def test_exit_codes(backend: LocalBackend, tmp_path: Path, code: int) -> None:
    proc = await run(backend, f"echo out; exit {code}", tmp_path)
    assert await read_all(proc) == b"out\n"
    assert await proc.wait(10) == code and proc.returncode == code


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT])
async def test_a_signal_is_reported_negative(backend: LocalBackend, tmp_path: Path, signum: int) -> None:
    proc = await run(backend, f"trap - INT; kill -{int(signum)} $$; sleep 5", tmp_path)
    assert await proc.wait(10) == -signum and proc.returncode == -signum


async def test_the_child_is_reaped(backend: LocalBackend, tmp_path: Path) -> None:
    proc = await run(backend, "exit 0", tmp_path)
    assert await proc.wait(10) == 0
    for _ in range(100):  # asyncio's watcher reaps on its own thread
        try:
            os.waitpid(proc.pid, os.WNOHANG)
        except ChildProcessError:
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("the child was left a zombie")


async def test_a_child_that_closes_its_output_early_still_runs(backend: LocalBackend, tmp_path: Path) -> None:
    go = tmp_path / "go"
    proc = await run(backend, f"echo early; exec >&- 2>&-; until [ -f {go} ]; do sleep 0.01; done; exit 4", tmp_path)
    assert await read_all(proc) == b"early\n"
    assert proc.returncode is None and await proc.wait(0.05) is None
    go.touch()
    assert await proc.wait(10) == 4


async def test_a_grandchild_holding_the_pipe_does_not_hold_the_exit(backend: LocalBackend, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    proc = await run(backend, f"sleep 30 & echo $! > {pidfile}; echo hi", tmp_path)
    try:
        assert await proc.wait(10) == 0
        grandchild = int(wait_for_file(pidfile))
        assert await proc.read() == b"hi\n"
        pending = asyncio.ensure_future(proc.read())
        await asyncio.sleep(0)
        assert not pending.done(), "the grandchild still holds the pipe open"
        proc.close()  # type: ignore[attr-defined]
        if isinstance(proc, PidfdProcess):
            assert await asyncio.wait_for(pending, 10) == b"", "closing ends a pending read"
            assert await proc.read() == b""
        else:  # asyncio's stream ends only once its watcher saw the exit: the shell runner cancels the read
            pending.cancel()
    finally:
        proc.signal(signal.SIGKILL)
    assert pid_gone(grandchild)


@needs_pidfd
async def test_output_written_before_close_is_kept(tmp_path: Path) -> None:
    proc = await run(LocalBackend(pidfd=True), "echo kept; sleep 30 & exit 0", tmp_path)
    try:
        assert await proc.wait(10) == 0
        proc.close()  # type: ignore[attr-defined]
        assert await read_all(proc) == b"kept\n", "written before the exit, so in the pipe when it was closed"
    finally:
        proc.signal(signal.SIGKILL)


async def test_a_timeout_kills_the_whole_group(backend: LocalBackend, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; while true; do sleep 0.1; done' & wait"
    proc = await run(backend, script, tmp_path)
    child = int(wait_for_file(pidfile))
    assert await proc.wait(0.05) is None
    assert await proc.terminate(grace=0.3) == -signal.SIGTERM
    assert pid_gone(child)
    assert await read_all(proc) == b""


async def test_many_concurrent_processes_lose_no_exit(backend: LocalBackend, tmp_path: Path) -> None:
    async def one(i: int) -> tuple[bytes, int | None]:
        proc = await run(backend, f"echo {i}; exit {i % 7}", tmp_path)
        return await read_all(proc), await proc.wait(30)

    results = await asyncio.gather(*(one(i) for i in range(50)))
    assert results == [(f"{i}\n".encode(), i % 7) for i in range(50)]


async def test_stdin_stderr_and_a_pty_on_both_paths(backend: LocalBackend, tmp_path: Path) -> None:
    piped = await backend.start([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"],
                                cwd=tmp_path, env=environ(), stdin=True)
    await piped.write(b"x" * 300_000)
    await piped.close_stdin()
    assert await read_all(piped) == b"X" * 300_000 + b"\n" and await piped.wait(10) == 0
    with pytest.raises(BrokenPipeError):
        await piped.write(b"more")
    split = await backend.start(["bash", "-c", "echo out; echo err >&2"], cwd=tmp_path, env=environ(),
                                merge_stderr=False)
    assert await read_all(split, "stderr") == b"err\n" and await read_all(split) == b"out\n"
    assert await split.wait(10) == 0
    tty = await backend.start(["bash", "-c", "read line; echo got-$line; test -t 1 && exit 5"], cwd=tmp_path,
                              env=environ(), pty=True)
    await tty.write(b"abc\n")
    assert b"got-abc" in await read_all(tty)
    assert await tty.wait(10) == 5


async def test_an_unchanged_environment_is_inherited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert spawn_env(dict(os.environ)) is None
    changed = {**os.environ, "PEGBOARD_EXIT_WATCH_TEST": "1"}
    assert spawn_env(changed) == changed
    monkeypatch.setenv("PEGBOARD_EXIT_WATCH_TEST", "2")
    assert environ()["PEGBOARD_EXIT_WATCH_TEST"] == "2", "a changed os.environ is seen"
    proc = await LocalBackend().start(["bash", "-c", "echo $PEGBOARD_EXIT_WATCH_TEST"], cwd=tmp_path,
                                      env=dict(os.environ))
    assert await read_all(proc) == b"2\n"
    await proc.wait(10)
    proc = await LocalBackend().start(["bash", "-c", "echo ${PEGBOARD_EXIT_WATCH_TEST-unset}"], cwd=tmp_path,
                                      env={k: v for k, v in os.environ.items() if k != "PEGBOARD_EXIT_WATCH_TEST"})
    assert await read_all(proc) == b"unset\n"
    await proc.wait(10)


async def test_a_pty_takes_input_while_a_read_waits(backend: LocalBackend, tmp_path: Path) -> None:
    tty = await backend.start(["bash", "-c", "read line; echo got-$line"], cwd=tmp_path, env=environ(), pty=True)
    reading = asyncio.ensure_future(read_all(tty))
    await asyncio.sleep(0)
    await tty.write(b"abc\n")
    assert b"got-abc" in await asyncio.wait_for(reading, 30)
    assert await tty.wait(10) == 0


async def test_two_reads_of_one_stream_at_once_are_refused(tmp_path: Path) -> None:
    proc = await run(LocalBackend(), "sleep 30", tmp_path)
    try:
        first = asyncio.ensure_future(proc.read())
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="already waiting"):
            await proc.read()
    finally:
        await proc.terminate(0.5)
    assert await first == b""
