"""Serving at scale: workers on one port, replicas on one PostgreSQL, resume from PostgreSQL.

    python benchmarks/bench_scale.py [--dsn DSN] [--sessions N] [--calls N] [--concurrency N]

Three measurements, each a ratio against a baseline measured in the same run:

1. ``pegboard serve --http --workers 2`` against 1 worker: the same load (``--concurrency``
   clients, each a named session making calls on its own connection; the client is this
   process, the server other processes) on each; server CPU seconds per call (supervisor and
   workers, from ``/proc``) and throughput. The CPU affinity of this process is recorded.
2. A mixed load across two replicas on one PostgreSQL: ``--sessions`` named sessions x
   ``--calls`` calls, each call to a replica chosen in turn, incrementing a counter slot and
   answering the session's name: errors, crossed answers (another session's name), lost
   updates (a count that is not the previous plus one), p50/p99 latency.
3. Resuming a session with 1,000 ledger entries from PostgreSQL against SQLite.

Without ``--dsn`` a throwaway PostgreSQL is started (Debian's ``postgresql``; as root it runs
as ``nobody``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

REPO = Path(__file__).resolve().parents[1]
PEGBOARD = str(Path(sys.executable).with_name("pegboard"))

TOOL = '''
"""The scale benchmark's tool: a counter slot per session that answers the session's name."""
import os
from pydantic import BaseModel
from pegboard import SessionKey, ToolContext, hookimpl, tool

COUNT = SessionKey("bench-scale-count", int, persist=True, default=int)


class CountInput(BaseModel):
    name: str


@tool(name="BenchCount", read_only=True)
async def bench_count(input: CountInput, ctx: ToolContext) -> str:
    """Add one to this session's counter; answer the name given, the count and the process."""
    value = ctx.session.state.update(COUNT, lambda n: (n or 0) + 1)
    return f"{input.name} {value} {os.getpid()}"


@hookimpl
def register_tools(register):
    register(bench_count)
'''


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its children (live and reaped)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / tick
    return total


class Server:
    def __init__(self, root: Path, env: dict[str, str], *extra: str) -> None:
        sys.path.insert(0, str(REPO))
        from tests.store_postgres.pgserver import free_port

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc = subprocess.Popen(
            [PEGBOARD, "serve", "--plugin", "bench_scale_tool", "--cwd", str(root), "--http",
             f"127.0.0.1:{self.port}", "--max-connections", "4096", *extra],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )

    async def ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                await call(self.url, "ready-check-session-000", "warmup")
                return
            except Exception:
                if self.proc.poll() is not None:
                    raise RuntimeError((self.proc.stderr.read() or b"").decode() if self.proc.stderr else "") from None
                await asyncio.sleep(0.2)
        raise RuntimeError("server did not answer")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def call(url: str, session: str, name: str) -> str:
    import mcp_types as types
    from mcp import Client

    meta = cast(types.RequestParamsMeta, {"io.pegboard/session": session})
    async with Client(url, mode="auto") as client:
        result = await client.call_tool("BenchCount", {"name": name}, meta=meta)
    if result.is_error:
        raise RuntimeError(str(result.content))
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def load(urls: list[str], sessions: int, calls: int, concurrency: int) -> dict[str, Any]:
    """``sessions`` named sessions, ``calls`` calls each, at most ``concurrency`` at once."""
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    errors = crossed = lost = 0
    run_id = os.urandom(4).hex()

    async def one(index: int) -> None:
        nonlocal errors, crossed, lost
        name = f"bench-{run_id}-session-{index:05d}"
        last = 0
        for k in range(calls):
            url = urls[(index + k) % len(urls)]
            async with gate:
                started = time.perf_counter()
                try:
                    answer = await call(url, name, name)
                except Exception:
                    errors += 1
                    continue
                latencies.append(time.perf_counter() - started)
            got_name, count, _pid = answer.split()
            if got_name != name:
                crossed += 1
            if int(count) != last + 1:
                lost += 1
            last = int(count)

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(sessions)))
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "calls": len(latencies), "errors": errors, "crossed": crossed, "lost_updates": lost,
        "seconds": elapsed, "calls_per_s": len(latencies) / elapsed if elapsed else 0.0,
        "p50_ms": 1000 * statistics.median(ordered) if ordered else None,
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else None,
    }


async def workers_ratio(root: Path, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for workers in (1, 2):
        server = Server(root, env, "--workers", str(workers))
        try:
            await server.ready()
            await asyncio.sleep(1.0)
            before = cpu_seconds(server.proc.pid)
            got = await load([server.url], args.concurrency, args.calls, args.concurrency)
            got["server_cpu_s_per_call"] = (cpu_seconds(server.proc.pid) - before) / max(1, got["calls"])
            out[f"workers_{workers}"] = got
        finally:
            server.stop()
    one, two = out["workers_1"], out["workers_2"]
    out["cpu_per_call_ratio"] = two["server_cpu_s_per_call"] / one["server_cpu_s_per_call"]
    out["throughput_ratio"] = two["calls_per_s"] / one["calls_per_s"]
    return out


async def replicas_mixed(root: Path, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    servers = [Server(root, {**env, "PEGBOARD_DATA_DIR": str(root / f"data-{i}")}) for i in range(2)]
    try:
        for server in servers:
            await server.ready()
        return await load([s.url for s in servers], args.sessions, args.calls, args.concurrency)
    finally:
        for server in servers:
            server.stop()


def resume_ratio(root: Path, dsn: str) -> dict[str, Any]:
    from pegboard import MapKey, SQLiteSessionStore
    from pegboard.testing import isolated_pegboard
    from pegboard_store_postgres import PostgresSessionStore

    ledger: MapKey[dict[str, Any]] = MapKey("bench-ledger", dict, persist=True)
    timings: dict[str, float] = {}
    for name, make in (("sqlite", lambda: SQLiteSessionStore(root / "resume.sqlite3")),
                       ("postgres", lambda: PostgresSessionStore(dsn))):
        store = make()
        for i in range(1000):
            store.put("resume-bench", ledger.name, json.dumps({"path": f"/w/file{i}.py", "mtime": i}), f"/w/file{i}.py")
        pb = isolated_pegboard(cwd=root, store=store)
        samples = []
        for _ in range(20):
            started = time.perf_counter()
            session = pb.session(session_id="resume-bench")
            entries = dict(session.state.map(ledger).items())
            samples.append(time.perf_counter() - started)
            assert len(entries) == 1000
            session.close_sync()
        timings[name] = statistics.median(samples)
        pb.close()
    return {"sqlite_ms": 1000 * timings["sqlite"], "postgres_ms": 1000 * timings["postgres"],
            "postgres_over_sqlite": timings["postgres"] / timings["sqlite"]}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    (root / "plugins").mkdir()
    (root / "plugins" / "bench_scale_tool.py").write_text(TOOL, encoding="utf-8")
    server = None
    dsn = args.dsn
    if dsn is None:
        sys.path.insert(0, str(REPO))
        from tests.store_postgres.pgserver import start_server

        server = start_server()
        dsn = server.fresh_database("bench-scale")
    config = root / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"sessions": {"store": "postgres"}}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root / "plugins"), "PEGBOARD_CONFIG_DIR": str(config),
           "PEGBOARD_POSTGRES_DSN": dsn, "PEGBOARD_DATA_DIR": str(root / "data")}
    try:
        report: dict[str, Any] = {"client_cpu_affinity": sorted(os.sched_getaffinity(0)), "cpus": os.cpu_count()}
        report["workers"] = await workers_ratio(root, env, args)
        report["replicas_mixed"] = await replicas_mixed(root, env, args)
        report["resume"] = resume_ratio(root, dsn)
        return report
    finally:
        if server is not None:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", default=None, help="PostgreSQL to use (default: start a throwaway one)")
    parser.add_argument("--sessions", type=int, default=200, help="named sessions of the mixed load")
    parser.add_argument("--calls", type=int, default=50, help="calls per session")
    parser.add_argument("--concurrency", type=int, default=32, help="calls in flight at once")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args)), indent=2))


if __name__ == "__main__":
    main()
