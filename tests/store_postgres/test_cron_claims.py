"""Cron runs of one session watched by several processes on one PostgreSQL are claimed exactly once."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pegboard_cron as cron
from pegboard.testing import isolated_pegboard
from pegboard_store_postgres import PostgresSessionStore
from tests.store_postgres.pgserver import PgServer

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC).timestamp()
ROUNDS = 5

WATCHER = r"""
import asyncio, sys
from datetime import UTC
from pathlib import Path
import pegboard_cron as cron
from pegboard import hookimpl
from pegboard.testing import isolated_pegboard
from pegboard_store_postgres import PostgresSessionStore

class Inbox:
    received = []

    @hookimpl
    def deliver_message(self, request):
        self.received.append(request.text)
        return True

async def main():
    dsn, sid, start, go, rounds = sys.argv[1], sys.argv[2], float(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5])
    inbox = Inbox()
    pb = isolated_pegboard(cron, inbox, cwd=go.parent, store=PostgresSessionStore(dsn))
    found = cron.scheduler(pb)
    found.clock, found.tz, found.autostart = cron.ManualClock(start), UTC, False
    async with pb.session(session_id=sid):
        print("ready", flush=True)
        while not go.exists():
            await asyncio.sleep(0.005)
        for _ in range(rounds):
            found.clock.advance(300)
            await found.tick()
    await pb.aclose()
    print(len(inbox.received), flush=True)

asyncio.run(main())
"""


async def test_four_processes_deliver_each_run_once(pg_server: PgServer, tmp_path: Path) -> None:
    from pegboard import hookimpl

    class Host:
        @hookimpl
        def deliver_message(self) -> bool:
            return True

    dsn = pg_server.fresh_database(str(tmp_path))
    pb = isolated_pegboard(cron, Host(), cwd=tmp_path, store=PostgresSessionStore(dsn))
    found = cron.scheduler(pb)
    found.clock, found.tz, found.autostart = cron.ManualClock(START), UTC, False
    async with pb.session() as s:
        made = await s.call("CronCreate", {"cron": "*/5 * * * *", "prompt": "once only"})
        assert not made.is_error, made.text
        sid = s.id
    await pb.aclose()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", WATCHER, dsn, sid, str(START), str(go), str(ROUNDS)],
                         stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    go.touch()
    delivered = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        delivered.append(int(out.strip().splitlines()[-1]))
    assert sum(delivered) == ROUNDS, delivered
