"""Cost of sessions, against baselines measured in the same run.

    python benchmarks/bench_sessions.py [--calls N] [--writes N] [--entries N] [--rounds N]

1. A Read of a small file through a persisted session (SQLite store) against the same call
   through ``Pegboard.call`` (an in-memory one-call session). Goal: overhead <= 10%.
2. Slot writes per second (``state.update`` on a persisted key, one transaction each) on the
   SQLite store. Goal: >= 1,000/s.
3. Resuming a session with N read-ledger entries and reading its ledger. Goal: <= 20 ms.

Interleaved rounds; medians reported. The ratios are what to compare between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pegboard import MapKey, Pegboard, SessionKey, SQLiteSessionStore

GOAL_OVERHEAD = 1.10
GOAL_WRITES_PER_S = 1000.0
GOAL_RESUME_MS = 20.0

COUNTER: SessionKey[int] = SessionKey("bench-counter", int, persist=True, default=int)
LEDGER: MapKey[dict[str, Any]] = MapKey("pegboard-read-ledger", dict, persist=True)


async def _calls(fn: Any, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        result = await fn()
        assert not result.is_error, result.text
    return (time.perf_counter() - start) / n


async def bench_call_overhead(root: Path, calls: int, rounds: int) -> tuple[float, float]:
    target = root / "small.txt"
    target.write_text("hello\nworld\n")
    pb = Pegboard(cwd=root, store=SQLiteSessionStore(root / "s1.sqlite3"))
    session = pb.session(cwd=root)
    args = ("Read", {"file_path": str(target)})
    plain: list[float] = []
    stored: list[float] = []
    await _calls(lambda: pb.call(*args), 50)
    await _calls(lambda: session.call(*args), 50)
    for _ in range(rounds):
        plain.append(await _calls(lambda: pb.call(*args), calls))
        stored.append(await _calls(lambda: session.call(*args), calls))
    await session.close()
    return statistics.median(plain), statistics.median(stored)


def bench_writes(root: Path, writes: int, rounds: int) -> float:
    pb = Pegboard(cwd=root, store=SQLiteSessionStore(root / "s2.sqlite3"), load_entrypoints=False)
    session = pb.session()
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(writes):
            session.state.update(COUNTER, lambda n: (n or 0) + 1)
        rates.append(writes / (time.perf_counter() - start))
    return statistics.median(rates)


def bench_resume(root: Path, entries: int, rounds: int) -> float:
    path = root / "s3.sqlite3"
    pb = Pegboard(cwd=root, store=SQLiteSessionStore(path), load_entrypoints=False)
    session = pb.session(session_id="resume-me")
    ledger = session.state.map(LEDGER)
    for i in range(entries):
        ledger[f"/project/file{i}.py"] = {"size": i, "mtime_ns": i * 1000, "whole": True}
    times = []
    for _ in range(rounds):
        again = Pegboard(cwd=root, store=SQLiteSessionStore(path), load_entrypoints=False)
        start = time.perf_counter()
        resumed = again.session(session_id="resume-me")
        count = len(resumed.state.map(LEDGER).items())
        times.append(time.perf_counter() - start)
        assert count == entries
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain, stored = asyncio.run(bench_call_overhead(root, args.calls, args.rounds))
        ratio = stored / plain
        print(f"Read via Pegboard.call (one-call)   {plain * 1e6:8.1f} us")
        print(f"Read via a persisted session        {stored * 1e6:8.1f} us")
        print(f"  ratio {ratio:.3f} (goal <= {GOAL_OVERHEAD:.2f}) {'OK' if ratio <= GOAL_OVERHEAD else 'MISSED'}")
        rate = bench_writes(root, args.writes, args.rounds)
        print(f"slot writes (one transaction each)  {rate:8.0f} /s "
              f"(goal >= {GOAL_WRITES_PER_S:.0f}) {'OK' if rate >= GOAL_WRITES_PER_S else 'MISSED'}")
        ms = bench_resume(root, args.entries, args.rounds)
        print(f"resume with {args.entries} ledger entries    {ms:8.2f} ms "
              f"(goal <= {GOAL_RESUME_MS:.0f}) {'OK' if ms <= GOAL_RESUME_MS else 'MISSED'}")


if __name__ == "__main__":
    main()
