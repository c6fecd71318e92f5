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


async def round_time(session: Any, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await session.call("Bash", {"command": "true"})
    return (time.perf_counter() - start) / calls


async def per_call(root: Path, calls: int, rounds: int) -> tuple[list[float], list[float]]:
    """Per-call seconds of each round, unsandboxed and sandboxed: short rounds, alternating
    in order, so both halves of a round see the same machine load."""
    plain_pb, boxed_pb = board(root, False), board(root, True)
    plain: list[float] = []
    boxed: list[float] = []
    async with plain_pb.session() as plain_session, boxed_pb.session() as boxed_session:
        for name, session in (("unsandboxed", plain_session), ("sandboxed", boxed_session)):
            first = await session.call("Bash", {"command": "true"})
            if first.is_error:
                raise SystemExit(f"Bash true failed ({name}): {first.text}")
        for i in range(rounds):
            if i % 2:
                boxed.append(await round_time(boxed_session, calls))
                plain.append(await round_time(plain_session, calls))
            else:
                plain.append(await round_time(plain_session, calls))
                boxed.append(await round_time(boxed_session, calls))
    return plain, boxed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    if (why := probe()) is not None:
        print(f"skipped: bubblewrap cannot run here: {why}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".env").write_text("SECRET=1\n")
        plain, boxed = await per_call(root, args.calls, args.rounds)
    p, b = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
    print(f"Bash true unsandboxed: {p:8.2f} ms (best round {min(plain) * 1000:.2f} ms)")
    print(f"Bash true sandboxed:   {b:8.2f} ms (best round {min(boxed) * 1000:.2f} ms)")
    extra = statistics.median(x - y for x, y in zip(boxed, plain, strict=True)) * 1000
    print(f"sandbox adds {extra:.2f} ms per command (median of per-round differences; "
          f"goal <= +{GOAL_EXTRA_MS:.0f} ms): {'met' if extra <= GOAL_EXTRA_MS else 'NOT met'}; "
          f"best rounds differ by {(min(boxed) - min(plain)) * 1000:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
