"""Per-call overhead of the pipeline, against a direct call measured in the same run.

    python benchmarks/bench_call.py [--calls N] [--rounds N] [--profile]

The baseline does by hand what a no-op tool needs at the least: validate its input model,
await its function, build its ``ToolResult``. Against it:

- ``Pegboard.call`` of the same tool (an in-memory session, nothing persisted); goal <= 6x;
- ``Session.call`` through a persisted session (``pb.session()``, SQLite store); goal <= 10x.

Each figure is the fastest round's mean time per call (rounds of the three paths interleave),
the estimate least disturbed by other load on the machine. ``--profile`` prints the
top of a cProfile of the in-memory calls instead.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pegboard import ConfigLayer, Pegboard, ToolContext, ToolResult, hookimpl, tool

GOAL_MEMORY = 6.0
GOAL_PERSISTED = 10.0


class NoopInput(BaseModel):
    text: str


@tool(name="Noop")
async def noop(input: NoopInput, ctx: ToolContext) -> str:
    """Return the text unchanged."""
    return input.text


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(noop)


async def per_call(call: Callable[[], Awaitable[object]], calls: int, rounds: int) -> float:
    """The fastest round's mean seconds per call (the least disturbed by other load)."""
    for _ in range(min(calls, 200)):
        await call()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            await call()
        samples.append((time.perf_counter() - started) / calls)
    return min(samples)


async def run(args: argparse.Namespace, root: Path) -> dict[str, float]:
    layers = [ConfigLayer("project", {}, path=root / "settings.json", root=root)]
    env = {**os.environ, "PEGBOARD_DATA_DIR": str(root / "data"), "HOME": str(root)}
    pb = Pegboard(plugins=[Tools()], load_entrypoints=False, layers=layers, cwd=root, env=env)
    registered = pb.tool("Noop")
    assert registered is not None
    ctx = pb.context()
    payload = {"text": "hi"}

    async def direct() -> ToolResult:
        model = NoopInput.model_validate(payload)
        return ToolResult.from_text(await registered.run(model, ctx))

    async def memory() -> ToolResult:
        return await pb.call("Noop", payload)

    for check in (await memory(),):
        assert not check.is_error and check.text == "hi", check
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.calls * 5):
            await memory()
        profiler.disable()
        pstats.Stats(profiler).sort_stats(os.environ.get("BENCH_SORT", "cumulative")).print_stats(45)
        return {}

    async with pb.session() as session:

        async def persisted() -> ToolResult:
            return await session.call("Noop", payload)

        assert (await persisted()).text == "hi"
        figures: dict[str, list[float]] = {"direct": [], "memory": [], "persisted": []}
        for _ in range(3):  # interleaved, so drift hits all three alike
            figures["direct"].append(await per_call(direct, args.calls, args.rounds))
            figures["memory"].append(await per_call(memory, args.calls, args.rounds))
            figures["persisted"].append(await per_call(persisted, args.calls, args.rounds))
    await pb.aclose()
    return {name: min(samples) for name, samples in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100, help="calls per round")
    parser.add_argument("--rounds", type=int, default=40, help="rounds per measurement")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of Pegboard.call instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pegboard-bench-call-") as tmp:
        figures = asyncio.run(run(args, Path(tmp).resolve()))
    if not figures:
        return
    base = figures["direct"]
    print(f"{'path':<34} {'µs/call':>9} {'ratio':>7} {'goal':>6}")
    print(f"{'direct (validate + run + result)':<34} {base * 1e6:>9.1f} {1.0:>6.1f}x")
    for name, label, goal in (
        ("memory", "Pegboard.call (in-memory)", GOAL_MEMORY),
        ("persisted", "Session.call (persisted, SQLite)", GOAL_PERSISTED),
    ):
        ratio = figures[name] / base
        verdict = "ok" if ratio <= goal else "MISSED"
        print(f"{label:<34} {figures[name] * 1e6:>9.1f} {ratio:>6.1f}x {goal:>5.0f}x {verdict}")
    print(json.dumps({"us_per_call": {k: round(v * 1e6, 2) for k, v in figures.items()}}))


if __name__ == "__main__":
    main()
