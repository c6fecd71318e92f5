"""The ``cron`` tool's actions over the same jobs as CronCreate, with a manual clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pegboard_cron as cron
from pegboard.testing import check_tool
from tests.builtin.cron.support import START, Inbox, board


def test_conforms() -> None:
    check_tool(cron.cron, {"action": "status"})


async def test_add_list_update_run_runs_remove(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, clock = board(tmp_path, inbox)
    found = cron.scheduler(pb)
    async with pb.session(persist=False) as s:
        job = {"name": "digest", "schedule": {"kind": "every", "everyMs": 15 * 60_000},
               "payload": {"kind": "systemEvent", "text": "summarise the inbox"}}
        added = await s.call("cron", {"action": "add", "job": job})
        assert not added.is_error, added.text
        info: dict[str, Any] = (added.structured or {})["job"]
        assert info["nextRunAtMs"] == int((START + 900) * 1000) and info["payload"]["kind"] == "systemEvent"
        await s.call("CronCreate", {"cron": "0 9 * * *", "prompt": "morning"})
        listed = ((await s.call("cron", {"action": "list"})).structured or {})["jobs"]
        assert [j["name"] for j in listed] == ["digest", None]
        assert {j["id"] for j in ((await s.call("CronList", {})).structured or {})["jobs"]} == {j["id"] for j in listed}

        clock.advance(900)
        assert [f.job_id for f in await found.tick()] == [info["id"]]
        assert inbox.received[-1].metadata["payload"] == "systemEvent"

        patched = await s.call("cron", {"action": "update", "jobId": info["id"],
                                        "patch": {"schedule": {"kind": "cron", "expr": "30 * * * *"},
                                                  "payload": {"kind": "agentTurn", "message": "check mail"}}})
        assert not patched.is_error, patched.text
        assert (patched.structured or {})["job"]["nextRun"] == "2026-03-02T10:30:00+00:00"
        ran = await s.call("cron", {"action": "run", "id": info["id"]})
        assert (ran.structured or {})["status"] == "delivered" and inbox.received[-1].text == "check mail"
        not_due = await s.call("cron", {"action": "run", "jobId": info["id"], "mode": "due"})
        assert (not_due.structured or {})["ran"] is False
        runs = ((await s.call("cron", {"action": "runs", "jobId": info["id"]})).structured or {})["runs"]
        assert [r["status"] for r in runs] == ["delivered", "delivered"]

        disabled = await s.call("cron", {"action": "update", "jobId": info["id"], "patch": {"enabled": False}})
        assert (disabled.structured or {})["job"]["enabled"] is False
        clock.advance(3600)
        assert [f.job_id for f in await found.tick()] != [info["id"]]
        enabled_only = await s.call("cron", {"action": "list"})
        assert info["id"] not in {j["id"] for j in (enabled_only.structured or {})["jobs"]}
        with_disabled = await s.call("cron", {"action": "list", "includeDisabled": True})
        assert info["id"] in {j["id"] for j in (with_disabled.structured or {})["jobs"]}

        status = (await s.call("cron", {"action": "status"})).structured or {}
        assert status["jobs"] == 2 and status["canDeliver"] is True
        removed = await s.call("cron", {"action": "remove", "jobId": info["id"]})
        assert not removed.is_error
        again = await s.call("cron", {"action": "remove", "jobId": info["id"]})
        assert again.is_error and again.metadata["error_kind"] == "not_found"


async def test_a_one_shot_at_job_is_deleted_after_it_runs(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, clock = board(tmp_path, inbox)
    async with pb.session(persist=False) as s:
        job = {"schedule": {"kind": "at", "at": "2026-03-02T10:10:00Z"}, "payload": {"kind": "systemEvent",
                                                                                 "text": "reminder"}}
        added = (await s.call("cron", {"action": "add", "job": job})).structured or {}
        assert added["job"]["deleteAfterRun"] is True
        clock.advance(600)
        await cron.scheduler(pb).tick()
        assert inbox.received[-1].text == "reminder"
        assert ((await s.call("cron", {"action": "list", "includeDisabled": True})).structured or {})["jobs"] == []


async def test_wake_now_and_next_heartbeat(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, _clock = board(tmp_path, inbox)
    async with pb.session(persist=False) as s:
        now = await s.call("cron", {"action": "wake", "text": "deploy finished"})
        assert (now.structured or {})["status"] == "delivered" and inbox.received[-1].text == "deploy finished"
        queued = await s.call("cron", {"action": "wake", "text": "later", "mode": "next-heartbeat"})
        assert (queued.structured or {})["queued"] is True and len(inbox.received) == 1
        await cron.scheduler(pb).tick()
        assert inbox.received[-1].text == "later"
        assert ((await s.call("cron", {"action": "list", "includeDisabled": True})).structured or {})["jobs"] == []


async def test_bad_requests_name_what_is_wrong(tmp_path: Path) -> None:
    pb, _clock = board(tmp_path, Inbox())
    async with pb.session(persist=False) as s:
        cases: list[tuple[dict[str, Any], str]] = [
            ({"action": "add"}, "add needs job"),
            ({"action": "add", "job": {"schedule": {"kind": "every", "everyMs": 10}, "payload": {"kind": "systemEvent",
                                                                                               "text": "x"}}},
             "job.schedule.every.everyMs"),
            ({"action": "add", "job": {"schedule": {"kind": "cron", "expr": "* * *"},
                                       "payload": {"kind": "systemEvent", "text": "x"}}}, "five fields"),
            ({"action": "add", "job": {"schedule": {"kind": "cron", "expr": "* * * * *", "tz": "Mars/Olympus"},
                                       "payload": {"kind": "systemEvent", "text": "x"}}}, "unknown time zone"),
            ({"action": "add", "job": {"schedule": {"kind": "at"}, "payload": {"kind": "systemEvent", "text": "x"}}},
             "exactly one of at"),
            ({"action": "add", "job": {"schedule": {"kind": "at", "at": "2020-01-01T00:00"},
                                       "payload": {"kind": "systemEvent", "text": "x"}}}, "never fires"),
            ({"action": "update", "patch": {"enabled": True}}, "update needs jobId"),
            ({"action": "update", "jobId": "nope", "patch": {"enabled": True}}, "no job 'nope'"),
            ({"action": "wake"}, "wake needs text"),
            ({"action": "run", "jobId": "nope"}, "no job 'nope'"),
            ({"action": "status", "gatewayUrl": "ws://127.0.0.1:18789"}, "gatewayUrl is not used"),
            ({"action": "fly"}, "action"),
        ]
        for given, says in cases:
            result = await s.call("cron", given)
            assert result.is_error and says in result.text, (given, result.text)
        isolated = await s.call("cron", {"action": "add", "job": {
            "schedule": {"kind": "every", "everyMs": 60_000}, "sessionTarget": "isolated",
            "payload": {"kind": "agentTurn", "message": "x"}}})
        assert isolated.metadata["error_kind"] == "not_supported"


async def test_a_time_zone_of_its_own(tmp_path: Path) -> None:
    pb, _clock = board(tmp_path, Inbox())
    async with pb.session(persist=False) as s:
        job = {"schedule": {"kind": "cron", "expr": "0 12 * * *", "tz": "Asia/Tokyo"},
               "payload": {"kind": "systemEvent", "text": "noon in Tokyo"}}
        added = (await s.call("cron", {"action": "add", "job": job})).structured or {}
        assert added["job"]["nextRun"] == "2026-03-03T12:00:00+09:00"
