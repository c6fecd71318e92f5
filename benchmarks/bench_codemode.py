"""Cost of codemode, against baselines measured in the same run.

    python benchmarks/bench_codemode.py [--calls N] [--rounds N]

1. ``--calls`` (default 100) no-op tool calls made one after another from one program,
   against the same number of ``Session.call``s of that tool. The program's own start (an
   empty program, measured in the same run) is taken off, so the ratio is the per-call cost
   of crossing the runtime's stdio. Goal: at most 2x. The total with the start is printed too.
2. Starting the runtime (an empty program through the tool, start to result) against
   ``python -S -c pass``. Goal: at most 10x. The runtime is started per program, not kept warm.

Absolute numbers depend on the machine; the ratios are what to compare between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import pegboard_codemode
from pegboard import ConfigLayer, MemorySessionStore, Pegboard, ToolContext, ToolRegister, hookimpl, tool

GOAL_CALLS = 2.0
GOAL_START = 10.0


class NoInput(BaseModel):
    pass


@tool(name="Noop", groups=["bench"], read_only=True)
async def noop(input: NoInput, ctx: ToolContext) -> str:
    """Do nothing."""
    return "ok"


class NoopPlugin:
    @hookimpl
    def register_tools(self, register: ToolRegister) -> None:
        register(noop)


def board(root: Path) -> Pegboard:
    config = {"tools": {"alsoAllow": ["codemode"]}}
    layers = [ConfigLayer("project", config, path=root / "settings.json", root=root)]
    return Pegboard(plugins=[pegboard_codemode, NoopPlugin()], load_entrypoints=False, layers=layers, cwd=root,
                    store=MemorySessionStore())


async def direct(session: Any, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        result = await session.call("Noop", {})
        assert not result.is_error
    return time.perf_counter() - started


async def program(session: Any, code: str) -> float:
    started = time.perf_counter()
    result = await session.call("codemode", {"code": code})
    assert not result.is_error, result.content
    return time.perf_counter() - started


def python_start() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
    return time.perf_counter() - started


async def measure(calls: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        pb = board(Path(tmp))
        async with pb.session(persist=False) as session:
            loop = f"for (let i = 0; i < {calls}; i++) await tools.Noop({{}}); return 'done';"
            await program(session, loop)  # warm caches once
            await direct(session, calls)
            directs, totals, empties = [], [], []
            for _ in range(rounds):
                directs.append(await direct(session, calls))
                totals.append(await program(session, loop))
                empties.append(await program(session, "return 1;"))
    pythons = [python_start() for _ in range(rounds)]
    d, t, e, p = (statistics.median(x) for x in (directs, totals, empties, pythons))
    return {"direct": d, "program_total": t, "program_start": e, "program_calls": max(t - e, 1e-9), "python": p}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    m = asyncio.run(measure(args.calls, args.rounds))
    calls_ratio = m["program_calls"] / m["direct"]
    start_ratio = m["program_start"] / m["python"]
    print(f"{args.calls} Session.calls: {m['direct'] * 1000:.1f} ms")
    print(f"{args.calls} calls from one program: {m['program_calls'] * 1000:.1f} ms without the start "
          f"({m['program_total'] * 1000:.1f} ms with it); ratio {calls_ratio:.2f}x (goal <= {GOAL_CALLS:g}x)")
    print(f"runtime start (empty program): {m['program_start'] * 1000:.1f} ms; python -S -c pass: "
          f"{m['python'] * 1000:.1f} ms; ratio {start_ratio:.2f}x (goal <= {GOAL_START:g}x, started per program)")
    return 0 if calls_ratio <= GOAL_CALLS and start_ratio <= GOAL_START else 1


if __name__ == "__main__":
    raise SystemExit(main())
