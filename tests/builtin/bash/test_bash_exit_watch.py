"""Bash and exec behave the same on both ways the local backend sees an exit: pidfds and
asyncio's subprocesses (``LocalBackend(pidfd=False)``, the fallback where pidfds are missing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pegboard import hookimpl
from pegboard_toolkit import LocalBackend
from pegboard_toolkit.exec import pidfds_work
from tests.builtin.runtime_support import pid_gone, runtime_pegboard, wait_for_file

MODES = [
    pytest.param(True, id="pidfd", marks=pytest.mark.skipif(not pidfds_work(), reason="no pidfds on this kernel")),
    pytest.param(False, id="asyncio"),
]


class LocalWith:
    """An ``exec_backend`` plugin answering with a local backend on one exit-watch path."""

    def __init__(self, pidfd: bool) -> None:
        self.backend = LocalBackend(pidfd=pidfd)

    @hookimpl
    def exec_backend(self, context: Any) -> LocalBackend:
        return self.backend


@pytest.fixture(params=MODES)
def plugin(request: pytest.FixtureRequest) -> LocalWith:
    return LocalWith(request.param)


async def test_output_exit_codes_and_cwd(tmp_path: Path, plugin: LocalWith) -> None:
    (tmp_path / "sub").mkdir()
    pb = runtime_pegboard(tmp_path, plugin)
    async with pb.session() as session:
        merged = await session.call("Bash", {"command": "echo one; echo two >&2; echo three"})
        failed = await session.call("Bash", {"command": "echo partial; exit 3"})
        killed = await session.call("Bash", {"command": "kill -KILL $$"})
        await session.call("Bash", {"command": "cd sub"})
        where = await session.call("Bash", {"command": "pwd"})
        outside = await session.call("Bash", {"command": "cd /"})
        big = await session.call("Bash", {"command": "head -c 200000 /dev/zero | tr '\\0' x"})
        ran = await session.call("exec", {"command": "test -t 1 && echo is-a-tty", "pty": True})
    assert merged.text == "one\ntwo\nthree"
    assert failed.is_error and failed.text == "partial\nExit code 3"
    assert failed.structured is not None and failed.structured["exit_code"] == 3
    assert killed.is_error and killed.structured is not None and killed.structured["exit_code"] == -9
    assert where.text == str((tmp_path / "sub").resolve())
    assert f"Shell cwd was reset to {tmp_path}" in outside.text
    assert big.structured is not None and big.structured["truncated"]
    assert Path(big.structured["output_file"]).stat().st_size == 200_000
    assert "is-a-tty" in ran.text


async def test_a_timeout_kills_grandchildren_and_a_left_process_does_not_hold_the_result(
    tmp_path: Path, plugin: LocalWith
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    command = (
        f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; while true; do sleep 0.1; done' & "
        "trap '' TERM; echo started; while true; do sleep 0.1; done"
    )
    pb = runtime_pegboard(tmp_path, plugin)
    async with pb.session() as session:
        timed_out = await session.call("Bash", {"command": command, "timeout": 500})
        left = await session.call("Bash", {"command": "echo hi; sleep 30 &"})
    assert timed_out.is_error and timed_out.metadata["error_kind"] == "timeout"
    assert "started" in timed_out.text and "timed out after 0.5 seconds" in timed_out.text
    assert pid_gone(int(wait_for_file(pidfile)))
    assert left.text == "hi"


async def test_background_tasks_end_and_keep_their_output(tmp_path: Path, plugin: LocalWith) -> None:
    pb = runtime_pegboard(tmp_path, plugin)
    async with pb.session() as session:
        ids = []
        for i in range(10):
            started = await session.call("Bash", {"command": f"echo task-{i}; exit {i % 3}", "run_in_background": True})
            assert started.structured is not None
            ids.append(started.structured["backgroundTaskId"])
        outputs = []
        for task_id in ids:
            done = await session.call("TaskOutput", {"task_id": task_id, "block": True, "timeout": 30_000})
            assert done.structured is not None
            outputs.append((done.structured["task"]["output"], done.structured["task"]["exitCode"]))
    assert outputs == [(f"task-{i}\n", i % 3) for i in range(10)]
