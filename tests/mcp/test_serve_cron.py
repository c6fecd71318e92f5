"""``pegboard serve`` runs the scheduler while its session is open and stops it when the client goes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters

from .conftest import PEGBOARD, serve_env

SPEED = 3600.0  # one real second is an hour on the scheduler's clock
EVERY_MINUTE = {"schedule": {"kind": "every", "everyMs": 60_000},
                "payload": {"kind": "systemEvent", "text": "heartbeat"}}


def deliveries(inbox: Path) -> list[dict[str, Any]]:
    if not inbox.exists():
        return []
    return [json.loads(line) for line in inbox.read_text(encoding="utf-8").splitlines() if line]


async def until(check: Any, bound: float = 60.0) -> None:
    deadline = time.monotonic() + bound
    while not check():
        assert time.monotonic() < deadline, "the scheduler delivered nothing"
        await asyncio.sleep(0.02)


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content or {})


async def test_jobs_fire_while_the_session_is_open_and_resume_late(serve_args, workdir, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox.jsonl"
    env = serve_env({"PEGBOARD_DATA_DIR": str(tmp_path / "data"), "CRON_TEST_INBOX": str(inbox),
                     "CRON_TEST_EPOCH": str(time.time()), "CRON_TEST_SPEED": str(SPEED)})
    args = [*serve_args, "--plugin", "pegboard_mcp_crontools", "--session", "cron-1"]
    params = StdioServerParameters(command=PEGBOARD, args=args, cwd=str(workdir), env=env)
    async with Client(params) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert {"CronCreate", "CronList", "CronDelete", "ScheduleWakeup", "cron"} <= listed
        job = structured(await client.call_tool("cron", {"action": "add", "job": EVERY_MINUTE}))["job"]
        await until(lambda: len(deliveries(inbox)) >= 3)
        assert {d["job"] for d in deliveries(inbox)} == {job["id"]}
        assert all(d["session"] == "cron-1" and d["kind"] == "prompt" for d in deliveries(inbox))
    seen = len(deliveries(inbox))
    await asyncio.sleep(0.2)  # twelve minutes on the scheduler's clock, with no session open
    assert len(deliveries(inbox)) == seen
    async with Client(params) as client:
        await client.list_tools()  # the client's first request opens (resumes) its session
        await until(lambda: len(deliveries(inbox)) > seen)
        assert deliveries(inbox)[seen]["late"] is True
        listed_jobs = structured(await client.call_tool("CronList", {}))["jobs"]
        assert [j["id"] for j in listed_jobs] == [job["id"]]


async def test_without_a_host_that_delivers_the_cron_tools_are_not_offered(serve_args, workdir) -> None:
    params = StdioServerParameters(command=PEGBOARD, args=serve_args, cwd=str(workdir), env=serve_env())
    async with Client(params) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
    assert not listed & {"CronCreate", "CronList", "CronDelete", "ScheduleWakeup", "cron"}
