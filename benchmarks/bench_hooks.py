"""Overhead of hooks per tool call, against baselines measured in the same run.

    python benchmarks/bench_hooks.py [--calls N] [--spawns N] [--rounds N]

1. In-process: one ``pre_tool_use`` + ``post_tool_use`` pair (sync, returning ``None``) on
   a trivial tool, minus the same call with no hooks. Goal: under 20 µs per call. Also the
   cost of the command-hooks plugin when it is installed but no hook is configured.
2. Command hooks: a call with one ``PreToolUse`` command hook (exec form ``/bin/true`` and
   shell form ``true``) minus the bare call, against spawning the same process directly
   with asyncio (pipes, wait). Goal: close to the bare spawn (ratio near 1).

Absolute numbers depend on the machine; the ratios are what to compare between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import pegboard_command_hooks
from pegboard import ConfigLayer, Pegboard, ToolContext, hookimpl, tool

GOAL_IN_PROCESS_US = 20.0
TRUE = shutil.which("true") or "/bin/true"


class EchoInput(BaseModel):
    text: str


@tool(name="Echo")
async def echo(input: EchoInput, ctx: ToolContext) -> str:
    """Return the text unchanged."""
    return input.text


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(echo)


class PrePost:
    @hookimpl
    def pre_tool_use(self, call: Any) -> None:
        return None

    @hookimpl
    def post_tool_use(self, result: Any) -> None:
        return None


def board(root: Path, config: dict[str, Any], *plugins: object) -> Pegboard:
    layers = [ConfigLayer("project", config, path=root / "settings.json", root=root)]
    return Pegboard(plugins=[Tools(), *plugins], load_entrypoints=False, layers=layers, cwd=root)


async def per_call(pb: Pegboard, calls: int, rounds: int) -> float:
    """Median over rounds of the mean seconds per call."""
    for _ in range(min(calls, 50)):
        await pb.call("Echo", {"text": "hi"})
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            await pb.call("Echo", {"text": "hi"})
        samples.append((time.perf_counter() - started) / calls)
    return statistics.median(samples)


async def hook_steps(pb: Pegboard, calls: int, rounds: int) -> float:
    """Median over rounds of the mean seconds spent in the pipeline's two hook steps alone.

    Whole calls carry policy resolution, validation and projection, whose noise is larger
    than the hooks' cost; this times only steps 3 (``pre_tool_use``) and 7 (``post_tool_use``).
    """
    from pegboard.core.call import ToolCall
    from pegboard.core.pipeline import CallState
    from pegboard.core.results import ToolResult

    found = pb.tool("Echo")
    assert found is not None
    model, ctx, result = EchoInput(text="hi"), pb.context(), ToolResult.from_text("hi")
    samples = []
    for _ in range(rounds + 1):
        started = time.perf_counter()
        for _ in range(calls):
            state, call = CallState(), ToolCall(found, {"text": "hi"})
            await pb._pipeline.pre_tool_use(call, model, ctx, state)
            await pb._pipeline.post_tool_use(call, result, ctx, state)
        samples.append((time.perf_counter() - started) / calls)
    return statistics.median(samples[1:])


async def bare_spawn(argv: list[str], spawns: int, rounds: int) -> float:
    """Median over rounds of the mean seconds to spawn, feed and reap one process directly."""

    async def once() -> None:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        await proc.communicate(b"{}")

    await once()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(spawns):
            await once()
        samples.append((time.perf_counter() - started) / spawns)
    return statistics.median(samples)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:9.1f} µs"


async def main(calls: int, spawns: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare = board(root, {})
        pair = board(root, {}, PrePost())
        idle_plugin = board(root, {}, pegboard_command_hooks)
        exec_hook = board(
            root,
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": TRUE, "args": []}]}]}},
            pegboard_command_hooks,
        )
        shell_hook = board(
            root,
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}},
            pegboard_command_hooks,
        )

        base = await per_call(bare, calls, rounds)
        with_pair = await per_call(pair, calls, rounds)
        steps_none = await hook_steps(bare, calls * 5, rounds)
        steps_pair = await hook_steps(pair, calls * 5, rounds)
        steps_idle = await hook_steps(idle_plugin, calls * 5, rounds)
        print("In-process hooks")
        print(f"  whole call, no hooks                    {us(base)}  (baseline)")
        print(f"  whole call, pre+post pair               {us(with_pair)}  ratio {with_pair / base:5.2f}")
        print(f"  hook steps, no hooks                    {us(steps_none)}  (baseline)")
        overhead = steps_pair - steps_none
        verdict = "met" if overhead < GOAL_IN_PROCESS_US / 1e6 else "MISSED"
        print(f"  hook steps, pre+post pair               {us(steps_pair)}  overhead {us(overhead).strip()}")
        print(f"  goal: pair overhead < {GOAL_IN_PROCESS_US:.0f} µs per call: {verdict}")
        idle = us(steps_idle - steps_none).strip()
        print(f"  hook steps, command-hooks plugin idle   {us(steps_idle)}  overhead {idle} (no hook configured)")

        spawn_exec = await bare_spawn([TRUE], spawns, rounds)
        spawn_shell = await bare_spawn(["/bin/sh", "-c", "true"], spawns, rounds)
        call_exec = await per_call(exec_hook, spawns, rounds)
        call_shell = await per_call(shell_hook, spawns, rounds)
        print("Command hooks (per call, minus the bare call)")
        print(f"  bare spawn of {TRUE:<24} {us(spawn_exec)}  (baseline)")
        print(f"  exec-form hook {TRUE:<23} {us(call_exec - base)}  ratio {(call_exec - base) / spawn_exec:5.2f}")
        print(f"  bare spawn of /bin/sh -c true           {us(spawn_shell)}  (baseline)")
        print(
            f"  shell-form hook 'true'                  {us(call_shell - base)}"
            f"  ratio {(call_shell - base) / spawn_shell:5.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls per round for the in-process cases")
    parser.add_argument("--spawns", type=int, default=100, help="calls / spawns per round for the command cases")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is reported")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.spawns, args.rounds))
