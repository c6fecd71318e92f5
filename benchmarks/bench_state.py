"""Reading stored results and searching memory, against the issue's goals.

    python benchmarks/bench_state.py [--pages N] [--notes N] [--queries N]

1. A 5 MB result kept in a SQLite session store: 12,000-character pages read through
   ``tool_result_read`` (the whole call pipeline) at offsets spread over the result, from the
   first page to the last, each page read several times. Goal: at most 5 ms for every offset
   (the median of its reads, so that a scheduler hiccup does not count as the offset's cost).
   The first page of a resumed session (the record fetched from the store) is reported apart.
2. ``memory_search`` over N note files (10,000 by default), each a few sentences. Goal: p50
   at most 50 ms once the index is built; building it is reported separately.

Exits 1 when a goal is missed. Absolute numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import pegboard_memory
import pegboard_tool_result_read
from pegboard import Pegboard, SQLiteSessionStore, ToolContext, hookimpl, tool
from pegboard.testing import isolated_pegboard

PAGE_GOAL_MS = 5.0
SEARCH_GOAL_MS = 50.0
REPEATS = 5
FIVE_MB = 5 * 1024 * 1024
VOCABULARY = 5_000


def vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """Made-up words with Zipf weights, the way words of real notes are spread."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(VOCABULARY * 2)})[:VOCABULARY]
    rng.shuffle(words)
    return words, [1.0 / (rank + 1) for rank in range(len(words))]


class EmitInput(BaseModel):
    size: int


@tool(name="Emit", max_result_chars=1_000)
async def emit(input: EmitInput, ctx: ToolContext) -> str:
    """Return ``size`` characters of text."""
    line = "0123456789 äöü € abcdefghijklmnopqrstuvwxyz\n"
    return (line * (input.size // len(line) + 1))[: input.size]


class Emitter:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(emit)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:7.2f} ms"


async def pages(root: Path, count: int) -> bool:
    store = SQLiteSessionStore(root / "sessions.sqlite3")
    pb: Pegboard = isolated_pegboard(Emitter(), pegboard_tool_result_read, cwd=root, store=store)
    async with pb.session() as session:
        made = await session.call("Emit", {"size": FIVE_MB})
        ref = made.metadata["details_ref"]
        sid = session.id
    total = FIVE_MB
    offsets = [round(i * (total - 12_000) / max(count - 1, 1)) for i in range(count)]
    async with pb.session(session_id=sid) as session:
        start = time.perf_counter()
        await session.call("tool_result_read", {"ref": ref, "offset": offsets[-1]})
        cold = time.perf_counter() - start
        samples: list[float] = []
        per_offset: list[float] = []
        for offset in offsets:
            repeats = []
            for _ in range(REPEATS):
                start = time.perf_counter()
                page = await session.call("tool_result_read", {"ref": ref, "offset": offset, "limit": 12_000})
                repeats.append(time.perf_counter() - start)
                assert not page.is_error and page.metadata["offset"] == offset
            samples += repeats
            per_offset.append(statistics.median(repeats))
    pb.close()
    worst = max(per_offset)
    verdict = worst <= PAGE_GOAL_MS / 1e3
    print(f"5 MB stored result, {count} pages of 12,000 characters from offset 0 to {offsets[-1]:,}, "
          f"each read {REPEATS} times")
    print(f"  first page of a resumed session {ms(cold)}  (record fetched from SQLite)")
    print(f"  all reads: p50 {ms(statistics.median(samples))}   p99 {ms(sorted(samples)[int(len(samples) * 0.99)])}"
          f"   max {ms(max(samples))}")
    print(f"  slowest offset (median of its reads) {ms(worst)}")
    print(f"  goal: every offset's page <= {PAGE_GOAL_MS:g} ms: {'met' if verdict else 'MISSED'}")
    return verdict


async def search(root: Path, notes: int, queries: int) -> bool:
    rng = random.Random(7)
    words, weights = vocabulary(rng)
    folder = root / "notes"
    for i in range(notes):
        sub = folder / f"{i % 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(" ".join(rng.choices(words, weights, k=18)) + "." for _ in range(3))
        (sub / f"note-{i:05d}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    config = {"tools": {"memory": {"notes": [str(folder)], "directory": str(root / "mem")}}}
    pb = isolated_pegboard(pegboard_memory, cwd=root, config=config, env={"PEGBOARD_DATA_DIR": str(root / "data")})
    start = time.perf_counter()
    first = await pb.call("memory_search", {"query": " ".join(words[:2])})
    build = time.perf_counter() - start
    assert not first.is_error and first.structured and first.structured["results"]
    samples = []
    for _ in range(queries):
        query = " ".join(rng.choices(words, weights, k=2))
        start = time.perf_counter()
        result = await pb.call("memory_search", {"query": query})
        samples.append(time.perf_counter() - start)
        assert not result.is_error
    p50 = statistics.median(samples)
    verdict = p50 <= SEARCH_GOAL_MS / 1e3
    print(f"memory_search over {notes:,} notes ({notes * 3:,} paragraphs, {VOCABULARY:,} Zipf-weighted words), "
          f"{queries} two-word queries")
    print(f"  first search (builds the index) {ms(build)}")
    print(f"  p50 {ms(p50)}   max {ms(max(samples))}  (the index rescans the files every 5 s)")
    print(f"  goal: p50 <= {SEARCH_GOAL_MS:g} ms: {'met' if verdict else 'MISSED'}")
    return verdict


async def main(page_count: int, notes: int, queries: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ok = await pages(root, page_count)
        ok = await search(root, notes, queries) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.pages, args.notes, args.queries)))
