"""A session opened by one process continues in another, through PostgreSQL: its state, task
list, stored results and the approvals given "always in this session"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.store_postgres.pgserver import PgServer

SCRIPT = r"""
import asyncio, json, sys
from pathlib import Path
from pegboard import Pegboard, PermissionUpdate

phase, cwd = sys.argv[1], Path(sys.argv[2])
asked = []

def approver(call, decision):
    asked.append(call.name)
    return PermissionUpdate(rules=["Write"]) if phase == "first" else False

async def main():
    pb = Pegboard(cwd=cwd)
    out = {}
    async with pb.session(session_id="handoff-0001", owner="client-a", approver=approver) as s:
        if phase == "first":
            made = await s.call("TaskCreate", {"subject": "ship it", "description": "the release"})
            out["task"] = made.is_error
            wrote = await s.call("Write", {"file_path": str(cwd / "a.txt"), "content": "one\n"})
            out["write"] = [wrote.is_error, wrote.text]
            out["ref"] = s.results.put("Bash", "x" * 5000)
            s.select(model="model-b")
        else:
            listed = await s.call("TaskList", {})
            out["tasks"] = listed.text
            wrote = await s.call("Write", {"file_path": str(cwd / "b.txt"), "content": "two\n"})
            out["write"] = [wrote.is_error, wrote.text]
            page = await s.call("tool_result_read", {"ref": sys.argv[3], "limit": 100})
            out["page"] = [page.is_error, page.text[:200]]
            out["model"] = s.record.model
            out["mode"] = s.mode
    out["asked"] = asked
    out["warnings"] = pb.warnings
    pb.close()
    print(json.dumps(out))

asyncio.run(main())
"""


def run(phase: str, cwd: Path, env: dict[str, str], *extra: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, phase, str(cwd), *extra], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


@pytest.fixture
def env(pg_server: PgServer, tmp_path: Path) -> dict[str, str]:
    user_dir = tmp_path / "user-config"
    user_dir.mkdir()
    (user_dir / "settings.json").write_text(json.dumps({"sessions": {"store": "postgres"}}), encoding="utf-8")
    return {**os.environ, "PEGBOARD_CONFIG_DIR": str(user_dir),
            "PEGBOARD_POSTGRES_DSN": pg_server.fresh_database(str(tmp_path))}


def test_a_session_continues_in_another_process(env: dict[str, str], tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    first = run("first", work, {**env, "PEGBOARD_DATA_DIR": str(tmp_path / "data-a")})
    assert first["task"] is False and first["write"] == [False, first["write"][1]], first  # type: ignore[index]
    assert first["asked"] == ["Write"]
    second = run("second", work, {**env, "PEGBOARD_DATA_DIR": str(tmp_path / "data-b")}, str(first["ref"]))
    assert "ship it" in str(second["tasks"])
    assert second["write"][0] is False and second["asked"] == [], second  # type: ignore[index]
    assert second["page"][0] is False and "xxxx" in second["page"][1], second  # type: ignore[index]
    assert second["model"] == "model-b" and second["mode"] == "default"
    assert (work / "b.txt").read_text() == "two\n"
