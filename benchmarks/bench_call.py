"""Per-call overhead of the pipeline, against a direct call measured in the same run.

    python benchmarks/bench_call.py [--calls N] [--rounds N] [--profile]

The baseline does by hand what a no-op tool needs at the least: validate its input model,
await its function, build its ``ToolResult``. Against it:

- ``Pegboard.call`` of the same tool (an in-memory session, nothing persisted); goal <= 6x;
- ``Session.call`` through a persisted session (``pb.session()``, SQLite store); goal <= 10x;
- the same two with every installed distribution loaded from its entry points and
  ``mode=`` passed per call, as a real host runs: goals <= 4x and <= 5x (the figures a user
  gets; the light Pegboard above has only the probe tool).

Each figure is the fastest round's mean time per call (rounds of the three paths interleave),
the estimate least disturbed by other load on the machine. ``--profile`` prints the
top of a cProfile of the in-memory calls instead; ``--sections`` times each step of the
call path on its own (µs per call, fastest of five rounds), to see where the time goes.
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
GOAL_INSTALLED = 4.0
GOAL_INSTALLED_PERSISTED = 5.0


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


async def timed(step: Callable[[], object], calls: int) -> float:
    """µs per call of ``step`` (awaited when it returns a coroutine), fastest of five rounds."""
    best = float("inf")
    for round_ in range(6):
        started = time.perf_counter_ns()
        for _ in range(calls):
            value = step()
            if asyncio.iscoroutine(value):
                await value
        if round_:  # the first round warms up
            best = min(best, (time.perf_counter_ns() - started) / calls / 1000)
    return best


async def sections(pb: Pegboard, payload: dict[str, Any], calls: int) -> dict[str, float]:
    """Each step of ``Pegboard.call`` timed on its own with the inputs a real call gives it."""
    from pegboard.core import pipeline as steps
    from pegboard.core.call import ToolCall
    from pegboard.core.session import selection_of

    tool = pb.tool("Noop")
    assert tool is not None
    pipe = pb._pipeline
    await pb.call("Noop", payload)
    session = pb._memory_session(None)
    _registered, unavailable, checked = pb._call_availability("Noop")
    prepared = session._prepared_call
    assert prepared is not None
    ctx = prepared.context._for_call(None)
    ctx.tool = ctx.requested_name = "Noop"
    model = steps.validate_input(tool, payload)
    call = ToolCall(tool, steps.dump_input(model), requested_name="Noop")
    state = steps.CallState()
    result = ToolResult.from_text("hi")
    engine = pipe.authorizer.engine_for(ctx)

    def check_rules() -> object:
        from pegboard.core.permissions.subjects import check_call

        return check_call(engine, "Noop", call.input, tool)

    figures = {
        "whole Pegboard.call": lambda: pb.call("Noop", payload),
        "session and selection": lambda: (pb._memory_session(None), selection_of({})),
        "availability": lambda: pb._call_availability("Noop"),
        "prepared policy and context": lambda: prepared.fits(
            pb.registry.version, unavailable, selection_of({}), pb.cwd, None, ()
        ),
        "context copy": lambda: prepared.context._for_call(None),
        "call state": steps.CallState,
        "resolve": lambda: pipe.resolve("Noop", prepared.enabled, prepared.disabled, checked),
        "validate input": lambda: steps.validate_input(tool, payload),
        "dump input for ToolCall": lambda: ToolCall(tool, steps.dump_input(model), requested_name="Noop"),
        "hooks present? (4 lookups)": lambda: (pipe._input_exposed(tool), pipe.hooks.has("pre_tool_use")),
        "authorize (rules, mode)": lambda: pipe.authorize(call, ctx, state, None),
        "  engine lookup": lambda: pipe.authorizer.engine_for(ctx),
        "  rule check": check_rules,
        "execute (time limit, run, result)": lambda: pipe.execute(call, model, ctx, state),
        "  of it ToolResult.from_text": lambda: ToolResult.from_text("hi"),
        "project (redact, size limit)": lambda: pipe.project(tool, result, ctx, prepared.enabled),
        "finish (metadata)": lambda: pipe.finish(result, steps.CallState()),
        "events (no listener)": lambda: (session.has_listeners(), session.has_listeners()),
    }
    return {label: await timed(step, calls) for label, step in figures.items()}


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
    if args.sections:
        steps_us = {"direct (validate + run + result)": await timed(direct, args.calls * 20)}
        steps_us.update(await sections(pb, payload, args.calls * 20))
        for label, us in steps_us.items():
            print(f"{label:<36} {us:>7.2f} µs")
        await pb.aclose()
        return {}
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.calls * 5):
            await memory()
        profiler.disable()
        pstats.Stats(profiler).sort_stats(os.environ.get("BENCH_SORT", "cumulative")).print_stats(45)
        return {}

    full = Pegboard(plugins=[Tools()], layers=layers, cwd=root, env=env)  # every installed distribution

    async def installed() -> ToolResult:
        return await full.call("Noop", payload, mode="default")

    assert (await installed()).text == "hi"
    async with pb.session() as session, full.session(mode="default") as full_session:

        async def persisted() -> ToolResult:
            return await session.call("Noop", payload)

        async def installed_persisted() -> ToolResult:
            return await full_session.call("Noop", payload)

        assert (await persisted()).text == "hi" and (await installed_persisted()).text == "hi"
        paths = {"direct": direct, "memory": memory, "persisted": persisted, "installed": installed,
                 "installed_persisted": installed_persisted}
        figures: dict[str, list[float]] = {name: [] for name in paths}
        for _ in range(3):  # interleaved, so drift hits every path alike
            for name, path in paths.items():
                figures[name].append(await per_call(path, args.calls, args.rounds))
    await pb.aclose()
    await full.aclose()
    return {name: min(samples) for name, samples in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100, help="calls per round")
    parser.add_argument("--rounds", type=int, default=40, help="rounds per measurement")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of Pegboard.call instead")
    parser.add_argument("--sections", action="store_true", help="time each step of the call path instead")
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
        ("installed", "Pegboard.call, all installed", GOAL_INSTALLED),
        ("installed_persisted", "Session.call, all installed", GOAL_INSTALLED_PERSISTED),
    ):
        ratio = figures[name] / base
        verdict = "ok" if ratio <= goal else "MISSED"
        print(f"{label:<34} {figures[name] * 1e6:>9.1f} {ratio:>6.1f}x {goal:>5.0f}x {verdict}")
    print(json.dumps({"us_per_call": {k: round(v * 1e6, 2) for k, v in figures.items()}}))


if __name__ == "__main__":
    main()
