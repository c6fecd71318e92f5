"""Cost of the Bash tool and of background tasks, against baselines measured in the same run.

    python benchmarks/bench_bash.py [--calls N] [--rounds N] [--tasks N] [--megabytes N]

1. Bash running ``true`` through a session (pipeline, permission check, snapshot, cwd
   capture) against a bare ``bash -c true`` spawned with asyncio. Goal: at most 1.5x.
2. Peak memory while Bash runs a command printing ``--megabytes`` MB (default 100): the
   growth of this process's peak RSS. Goal: at most 64 MB, whatever the command prints.
3. ``--tasks`` (default 50) background tasks started at once and polled with ``process
   poll`` until every one reported its exit; no task may be lost.

Absolute numbers depend on the machine; the ratios are what to compare between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pegboard_background
import pegboard_bash
import pegboard_exec
from pegboard import ConfigLayer, MemorySessionStore, Pegboard

GOAL_RATIO = 1.5
GOAL_GROWTH_MB = 64


def board(root: Path) -> Pegboard:
    config = {"permissions": {"allow": ["Bash", "exec"]}, "tools": {"background": {"maxRunning": 200}}}
    layers = [ConfigLayer("project", config, path=root / "settings.json", root=root)]
    return Pegboard(plugins=[pegboard_bash, pegboard_exec, pegboard_background], load_entrypoints=False,
                    layers=layers, cwd=root, store=MemorySessionStore())


async def bare_spawn(calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", "true", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        await proc.communicate()
    return (time.perf_counter() - started) / calls


async def bash_true(session: Any, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        result = await session.call("Bash", {"command": "true"})
        assert not result.is_error, result.text
    return (time.perf_counter() - started) / calls


async def spawn_costs(session: Any, calls: int, rounds: int) -> tuple[list[float], list[float]]:
    """Bare and Bash per-call seconds of each round: short rounds, interleaved in alternating
    order, so both halves of a round see the same machine load."""
    await session.call("Bash", {"command": "true"})
    bare, ours = [], []
    for i in range(rounds):
        if i % 2:
            ours.append(await bash_true(session, calls))
            bare.append(await bare_spawn(calls))
        else:
            bare.append(await bare_spawn(calls))
            ours.append(await bash_true(session, calls))
    return bare, ours


async def memory(session: Any, megabytes: int) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await session.call("Bash", {"command": f"head -c {megabytes * 1_000_000} /dev/zero | tr '\\0' x"})
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    size = Path(result.structured["output_file"]).stat().st_size
    return (after - before) / 1024, size


async def many_tasks(session: Any, count: int) -> tuple[float, int]:
    started = time.perf_counter()
    ids = []
    for i in range(count):
        result = await session.call("exec", {"command": f"sleep 0.2; echo task-{i}", "background": True})
        assert not result.is_error, result.text
        ids.append(result.structured["sessionId"])
    pending = set(ids)
    outputs: dict[str, str] = {i: "" for i in ids}
    while pending:
        for task_id in list(pending):
            poll = await session.call("process", {"action": "poll", "sessionId": task_id})
            outputs[task_id] += poll.structured["output"]
            if poll.structured["status"] != "running":
                pending.discard(task_id)
        await asyncio.sleep(0.05)
    complete = sum(1 for n, task_id in enumerate(ids) if outputs[task_id] == f"task-{n}\n")
    return time.perf_counter() - started, complete


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--megabytes", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pb = board(Path(tmp))
        async with pb.session() as session:
            bare_rounds, our_rounds = await spawn_costs(session, args.calls, args.rounds)
            bare, ours = statistics.median(bare_rounds), statistics.median(our_rounds)
            ratio = statistics.median(o / b for o, b in zip(our_rounds, bare_rounds, strict=True))
            best = min(our_rounds) / min(bare_rounds)
            print(f"bash -c true (bare spawn): {bare * 1000:8.2f} ms (best round {min(bare_rounds) * 1000:.2f} ms)")
            print(f"Bash true (session call):  {ours * 1000:8.2f} ms (best round {min(our_rounds) * 1000:.2f} ms)")
            print(f"ratio {ratio:.2f}x (median of per-round ratios), {best:.2f}x best rounds (goal <= {GOAL_RATIO}x) "
                  f"{'ok' if ratio <= GOAL_RATIO else 'OVER'}; a loaded machine widens the median")
            growth, size = await memory(session, args.megabytes)
            print(f"{args.megabytes} MB of output: peak RSS grew {growth:.1f} MB (goal <= {GOAL_GROWTH_MB} MB) "
                  f"{'ok' if growth <= GOAL_GROWTH_MB else 'OVER'}; spill file {size:,} bytes "
                  f"{'complete' if size == args.megabytes * 1_000_000 else 'INCOMPLETE'}")
            elapsed, complete = await many_tasks(session, args.tasks)
            print(f"{args.tasks} background tasks polled to completion in {elapsed:.2f} s: "
                  f"{complete}/{args.tasks} complete {'ok' if complete == args.tasks else 'LOST TASKS'}")


if __name__ == "__main__":
    asyncio.run(main())
