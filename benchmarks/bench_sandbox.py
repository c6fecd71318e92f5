"""Cost of the sandbox: Bash running ``true`` in bubblewrap against the same call unsandboxed.

    python benchmarks/bench_sandbox.py [--calls N] [--rounds N]

Both run through a session (pipeline, permission check, snapshot, cwd capture) in the same
run; the difference per call is the namespace setup and the deny-rule expansion. Goal: at
most +20 ms per command. Skips with the reason where bubblewrap cannot run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import pegboard_background
import pegboard_bash
import pegboard_sandbox.plugin as sandbox_plugin
from pegboard import ConfigLayer, MemorySessionStore, Pegboard
from pegboard_sandbox.check import probe

GOAL_EXTRA_MS = 20.0


def board(root: Path, sandboxed: bool) -> Pegboard:
    config: dict[str, Any] = {
        "permissions": {"allow": ["Bash"], "deny": ["Read(./.env)", "Read(**/*.pem)"]},
        "sandbox": {"enabled": sandboxed},
    }
    layers = [ConfigLayer("project", config, path=root / "settings.json", root=root)]
    return Pegboard(plugins=[pegboard_bash, pegboard_background, sandbox_plugin], load_entrypoints=False,
                    layers=layers, cwd=root, store=MemorySessionStore())


async def per_call(root: Path, sandboxed: bool, calls: int, rounds: int) -> list[float]:
    pb = board(root, sandboxed)
    times: list[float] = []
    async with pb.session() as session:
        first = await session.call("Bash", {"command": "true"})
        if first.is_error:
            raise SystemExit(f"Bash true failed ({'sandboxed' if sandboxed else 'unsandboxed'}): {first.text}")
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls):
                await session.call("Bash", {"command": "true"})
            times.append((time.perf_counter() - start) / calls)
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if (why := probe()) is not None:
        print(f"skipped: bubblewrap cannot run here: {why}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".env").write_text("SECRET=1\n")
        plain = await per_call(root, False, args.calls, args.rounds)
        boxed = await per_call(root, True, args.calls, args.rounds)
    p, b = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
    print(f"Bash true unsandboxed: {p:8.2f} ms (best round {min(plain) * 1000:.2f} ms)")
    print(f"Bash true sandboxed:   {b:8.2f} ms (best round {min(boxed) * 1000:.2f} ms)")
    extra = b - p
    print(f"sandbox adds {extra:.2f} ms per command (goal <= +{GOAL_EXTRA_MS:.0f} ms): "
          f"{'met' if extra <= GOAL_EXTRA_MS else 'NOT met'}")


if __name__ == "__main__":
    asyncio.run(main())
