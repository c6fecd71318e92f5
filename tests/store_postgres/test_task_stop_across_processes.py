"""TaskStop in one process reaches the process that runs the task (LISTEN/NOTIFY through
PostgreSQL); when that process is gone the task is reported ``lost`` with the reason."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pegboard import Pegboard
from tests.store_postgres.pgserver import PgServer

OWNER = r"""
import asyncio, json, sys
from pathlib import Path
from pegboard import Pegboard

async def main():
    pb = Pegboard(cwd=Path(sys.argv[1]))
    async with pb.session(session_id=sys.argv[2], owner="client", approver=lambda call, decision: True) as s:
        started = await s.call("Bash", {"command": sys.argv[3], "run_in_background": True})
        print(json.dumps({"error": started.is_error, "text": started.text,
                          "structured": started.structured}), flush=True)
        sys.stdin.readline()  # hold the session (and the task) until told
    pb.close()

asyncio.run(main())
"""


@pytest.fixture
def env(pg_server: PgServer, tmp_path: Path) -> dict[str, str]:
    user_dir = tmp_path / "user-config"
    user_dir.mkdir()
    (user_dir / "settings.json").write_text(json.dumps({"sessions": {"store": "postgres"}}), encoding="utf-8")
    return {**os.environ, "PEGBOARD_CONFIG_DIR": str(user_dir),
            "PEGBOARD_POSTGRES_DSN": pg_server.fresh_database(str(tmp_path)),
            "PEGBOARD_DATA_DIR": str(tmp_path / "data-owner")}


def start_owner(
    env: dict[str, str], cwd: Path, session_id: str, command: str
) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", OWNER, str(cwd), session_id, command], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    started = json.loads(proc.stdout.readline())
    assert not started["error"], started
    task_id = (started["structured"] or {}).get("backgroundTaskId") or (started["structured"] or {}).get("task_id")
    assert task_id, started
    return proc, str(task_id)


async def stop_from_here(env: dict[str, str], cwd: Path, session_id: str, task_id: str) -> tuple[bool, str, dict]:
    here = {**env, "PEGBOARD_DATA_DIR": str(cwd / "data-other")}
    pb = Pegboard(cwd=cwd, env=here)
    try:
        async with pb.session(session_id=session_id, owner="client") as s:
            result = await s.call("TaskStop", {"task_id": task_id})
            return result.is_error, result.text, dict(result.metadata)
    finally:
        pb.close()


async def test_task_stop_reaches_the_process_that_runs_the_task(env: dict[str, str], tmp_path: Path) -> None:
    proc, task_id = start_owner(env, tmp_path, "stop-across-0001", "sleep 120")
    try:
        is_error, text, _ = await stop_from_here(env, tmp_path, "stop-across-0001", task_id)
        assert not is_error, text
        assert f"Successfully stopped task: {task_id}" in text
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)


async def test_a_task_whose_process_is_gone_is_lost(env: dict[str, str], tmp_path: Path) -> None:
    proc, task_id = start_owner(env, tmp_path, "stop-across-0002", "sleep 3")  # outlives its killed owner briefly
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    is_error, text, meta = await stop_from_here(env, tmp_path, "stop-across-0002", task_id)
    assert is_error and meta.get("error_kind") == "lost", text
    assert "runner" in text and "is gone" in text
