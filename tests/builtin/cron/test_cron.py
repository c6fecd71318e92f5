"""CronCreate, CronList, CronDelete and ScheduleWakeup, with a manual clock and a real deliver hook."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pegboard_cron as cron
from pegboard import MessageDelivery, SQLiteSessionStore, hookimpl
from pegboard.testing import check_tool, isolated_pegboard
from tests.builtin.cron.support import Inbox, board


def test_conforms() -> None:
    check_tool(cron.cron_create, {"cron": "*/5 * * * *", "prompt": "check the build"})
    check_tool(cron.cron_list, {})
    check_tool(cron.cron_delete, {"id": "abcd1234"})
    check_tool(cron.schedule_wakeup, {"delaySeconds": 120, "prompt": "next step"})


def test_without_a_deliver_hook_every_tool_is_unavailable(tmp_path: Path) -> None:
    pb = isolated_pegboard(cron, cwd=tmp_path)
    disabled = {d.name: d.reason for d in pb.tools().disabled}
    for name in ("CronCreate", "CronList", "CronDelete", "ScheduleWakeup", "cron"):
        assert "deliver_message" in disabled[name]


def test_a_setting_or_the_environment_turns_scheduling_off(tmp_path: Path) -> None:
    pb = isolated_pegboard(cron, Inbox(), cwd=tmp_path, config={"tools": {"cron": {"enabled": False}}})
    assert "tools.cron.enabled" in {d.name: d.reason for d in pb.tools().disabled}["CronCreate"]
    pb = isolated_pegboard(cron, Inbox(), cwd=tmp_path, env={"PEGBOARD_DISABLE_CRON": "1"})
    assert "PEGBOARD_DISABLE_CRON" in {d.name: d.reason for d in pb.tools().disabled}["CronList"]
    assert "CronCreate" in isolated_pegboard(cron, Inbox(), cwd=tmp_path).tools().enabled


async def test_a_recurring_job_fires_on_its_schedule(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, clock = board(tmp_path, inbox)
    found = cron.scheduler(pb)
    async with pb.session(persist=False) as s:
        made = await s.call("CronCreate", {"cron": "*/5 * * * *", "prompt": "check the build"})
        assert not made.is_error, made.text
        job = made.structured or {}
        assert job["recurring"] is True and job["nextRun"] == "2026-03-02T10:05:00+00:00"
        assert job["expiresAt"] == "2026-03-09T10:00:00+00:00"
        assert await found.tick() == []
        clock.advance(5 * 60)
        fired = await found.tick()
        assert [(f.job_id, f.late, f.status) for f in fired] == [(job["id"], False, "delivered")]
        assert inbox.received[0].text == "check the build" and inbox.received[0].kind == "prompt"
        assert inbox.received[0].session_id == s.id and inbox.received[0].metadata["job_id"] == job["id"]
        assert await found.tick() == []
        clock.advance(5 * 60)
        assert len(await found.tick()) == 1
        listed = await s.call("CronList", {})
        rows = (listed.structured or {})["jobs"]
        assert [r["id"] for r in rows] == [job["id"]] and rows[0]["nextRun"] == "2026-03-02T10:15:00+00:00"
        assert rows[0]["runCount"] == 2
        gone = await s.call("CronDelete", {"id": job["id"]})
        assert not gone.is_error and (await s.call("CronList", {})).structured == {"jobs": []}
        missing = await s.call("CronDelete", {"id": job["id"]})
        assert missing.is_error and missing.metadata["error_kind"] == "not_found"


async def test_a_one_shot_fires_once_and_is_removed(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, clock = board(tmp_path, inbox)
    found = cron.scheduler(pb)
    async with pb.session(persist=False) as s:
        by_time = await s.call("CronCreate", {"cron": "2026-03-02T10:30", "prompt": "stand-up"})
        assert (by_time.structured or {})["recurring"] is False, by_time.text
        by_expr = await s.call("CronCreate", {"cron": "0 11 * * *", "prompt": "lunch", "recurring": False})
        assert (by_expr.structured or {})["nextRun"] == "2026-03-02T11:00:00+00:00"
        clock.advance(3600)
        fired = await found.tick()
        assert sorted(r.text.split("\n")[0] for r in inbox.received) == ["lunch", "stand-up"] and len(fired) == 2
        assert sorted(f.late for f in fired) == [False, True]
        assert (await s.call("CronList", {})).structured == {"jobs": []}
        clock.advance(86400)
        assert await found.tick() == []


async def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    pb, _clock = board(tmp_path, Inbox())
    async with pb.session(persist=False) as s:
        for given, says in [
            ({"cron": "61 * * * *", "prompt": "x"}, "minute field has 61"),
            ({"cron": "0 0 31 2 *", "prompt": "x"}, "never fires"),
            ({"cron": "2026-03-01T09:00", "prompt": "x"}, "already passed"),
            ({"cron": "2026-03-03T09:00", "prompt": "x", "recurring": True}, "cannot recur"),
            ({"cron": "* * * * *"}, "prompt"),
        ]:
            result = await s.call("CronCreate", given)
            assert result.is_error and result.reason == "invalid_input" and says in result.text, result.text


async def test_a_session_holds_at_most_max_jobs(tmp_path: Path) -> None:
    pb, _clock = board(tmp_path, Inbox(), config={"tools": {"cron": {"maxJobs": 2}}})
    async with pb.session(persist=False) as s:
        for _ in range(2):
            assert not (await s.call("CronCreate", {"cron": "* * * * *", "prompt": "x"})).is_error
        third = await s.call("CronCreate", {"cron": "* * * * *", "prompt": "x"})
        assert third.is_error and third.metadata["error_kind"] == "too_many_jobs"


async def test_a_recurring_job_expires_after_its_last_run(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, clock = board(tmp_path, inbox, config={"tools": {"cron": {"recurringExpiryDays": 1}}})
    found = cron.scheduler(pb)
    async with pb.session(persist=False) as s:
        await s.call("CronCreate", {"cron": "0 */6 * * *", "prompt": "sweep"})
        clock.advance(2 * 3600)
        for _ in range(6):
            await found.tick()
            clock.advance(6 * 3600)
        # made at 10:00, due at 12:00, 18:00, 00:00 and 06:00; 12:00 the next day is past the expiry
        assert len(inbox.received) == 4 and not any(r.metadata["late"] for r in inbox.received)
        assert (await s.call("CronList", {})).structured == {"jobs": []}


async def test_schedule_wakeup_clamps_replaces_and_stops(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, clock = board(tmp_path, inbox)
    found = cron.scheduler(pb)
    async with pb.session(persist=False) as s:
        short = await s.call("ScheduleWakeup", {"delaySeconds": 5, "prompt": "loop", "reason": "waiting on CI"})
        assert (short.structured or {})["delaySeconds"] == 60 and "outside 60-3600" in short.text
        long = await s.call("ScheduleWakeup", {"delaySeconds": 7200, "prompt": "loop again"})
        assert (long.structured or {})["delaySeconds"] == 3600
        jobs = (await s.call("CronList", {})).structured or {}
        assert [(j["id"], j["source"], j["prompt"]) for j in jobs["jobs"]] == [
            ("wakeup", "ScheduleWakeup", "loop again")
        ]
        clock.advance(120)
        assert await found.tick() == []
        clock.advance(3600 - 120)
        assert [f.job_id for f in await found.tick()] == ["wakeup"] and inbox.received[-1].text == "loop again"
        await s.call("ScheduleWakeup", {"delaySeconds": 600, "prompt": "more"})
        stopped = await s.call("ScheduleWakeup", {"stop": True})
        assert stopped.structured == {"stopped": True, "cancelled": True}
        again = await s.call("ScheduleWakeup", {"stop": True})
        assert again.structured == {"stopped": True, "cancelled": False}
        clock.advance(3600)
        assert await found.tick() == [] and len(inbox.received) == 1
        missing = await s.call("ScheduleWakeup", {"delaySeconds": 120})
        assert missing.is_error and "prompt required unless stop" in missing.text


async def test_an_undelivered_or_failing_run_is_recorded(tmp_path: Path) -> None:
    class Refuses:
        @hookimpl
        def deliver_message(self, request: MessageDelivery) -> bool:
            raise RuntimeError("inbox full")

    pb, clock = board(tmp_path, Refuses())
    found = cron.scheduler(pb)
    async with pb.session(persist=False) as s:
        job = (await s.call("CronCreate", {"cron": "* * * * *", "prompt": "x"})).structured or {}
        clock.advance(60)
        fired = await found.tick()
        assert fired[0].status == "error" and "inbox full" in (fired[0].error or "")
        runs = (await s.call("cron", {"action": "runs", "jobId": job["id"]})).structured or {}
        assert runs["runs"][0]["status"] == "error"


async def test_jobs_come_back_on_resume_and_a_missed_run_fires_once_late(tmp_path: Path) -> None:
    inbox = Inbox()
    store = SQLiteSessionStore(tmp_path / "sessions.sqlite3")
    pb, clock = board(tmp_path, inbox, store=store, autostart=True)
    found = cron.scheduler(pb)
    async with pb.session() as s:
        sid = s.id
        hourly = (await s.call("CronCreate", {"cron": "0 * * * *", "prompt": "hourly"})).structured or {}
        await s.call("CronCreate", {"cron": "2026-03-02T10:30", "prompt": "once"})
        assert found.running
    assert not found.running
    clock.advance(3 * 3600 + 60)  # 13:01: 11:00, 12:00 and 13:00 and the 10:30 one-shot passed while closed
    async with pb.session(session_id=sid) as again:
        await asyncio.wait_for(inbox.arrived.wait(), 10)
        while len(inbox.received) < 2:
            inbox.arrived.clear()
            await asyncio.wait_for(inbox.arrived.wait(), 10)
        texts = sorted(r.text.split("\n")[0] for r in inbox.received)
        assert texts == ["hourly", "once"]
        assert all(r.metadata["late"] for r in inbox.received) and "runs late" in inbox.received[0].text
        rows = ((await again.call("CronList", {})).structured or {})["jobs"]
        assert [r["id"] for r in rows] == [hourly["id"]] and rows[0]["nextRun"] == "2026-03-02T14:00:00+00:00"
    store.close()


async def test_an_expired_job_is_dropped_on_resume_without_firing(tmp_path: Path) -> None:
    inbox = Inbox()
    store = SQLiteSessionStore(tmp_path / "sessions.sqlite3")
    pb, clock = board(tmp_path, inbox, store=store)
    async with pb.session() as s:
        sid = s.id
        await s.call("CronCreate", {"cron": "0 * * * *", "prompt": "hourly"})
    clock.advance(8 * 86400)
    async with pb.session(session_id=sid) as again:
        assert await cron.scheduler(pb).tick() == []
        assert (await again.call("CronList", {})).structured == {"jobs": []}
    assert inbox.received == []
    store.close()


async def test_the_scheduler_task_fires_on_its_own_and_stops_with_the_session(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, clock = board(tmp_path, inbox, autostart=True)
    found = cron.scheduler(pb)
    async with pb.session(persist=False) as s:
        await s.call("CronCreate", {"cron": "*/10 * * * *", "prompt": "tick"})
        assert found.running
        await asyncio.wait_for(clock.until_asleep(), 10)
        clock.advance(600)
        await asyncio.wait_for(inbox.arrived.wait(), 10)
        assert inbox.received[0].text == "tick" and not inbox.received[0].metadata["late"]
    assert not found.running
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "pegboard-cron-scheduler"]
    await pb.aclose()


def test_closing_without_a_loop_starts_none(tmp_path: Path) -> None:
    inbox = Inbox()
    pb, _clock = board(tmp_path, inbox)
    with pb.session_sync(persist=False) as s:
        made = s.call_sync("CronCreate", {"cron": "* * * * *", "prompt": "x"})
        assert not made.is_error
    before = threading.active_count()
    pb.close()
    assert threading.active_count() == before and not cron.scheduler(pb).running


async def test_two_watchers_of_one_session_deliver_a_run_once(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.sqlite3")
    first_inbox, second_inbox = Inbox(), Inbox()
    first, clock = board(tmp_path, first_inbox, store=store)
    second, _ = board(tmp_path, second_inbox, store=SQLiteSessionStore(tmp_path / "sessions.sqlite3"))
    cron.scheduler(second).clock = clock
    async with first.session() as a:
        await a.call("CronCreate", {"cron": "*/5 * * * *", "prompt": "once only"})
        async with second.session(session_id=a.id) as b:
            clock.advance(300)
            fired = await cron.scheduler(first).tick() + await cron.scheduler(second).tick()
            assert len(fired) == 1 and len(first_inbox.received) + len(second_inbox.received) == 1
            assert b.id == a.id
    await first.aclose()
    await second.aclose()
