"""Cost of the LSP tool against a bare LSP client in the same run, and edit-to-diagnostics time.

    python benchmarks/bench_lsp.py [--calls N] [--rounds N]

1. goToDefinition and findReferences through a Pegboard session (pipeline, Read check,
   file sync, result rendering) against the same request sent by a bare client to a second,
   equally warm python-lsp-server. Goal: at most 1.2x.
2. Edit-to-diagnostics: a Write that introduces an undefined name, with diagnostics on,
   against the same Write with them off; the difference is the time to the diagnostics.

Absolute numbers depend on the machine; the ratios are what to compare between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pegboard_lsp
import pegboard_permissions_paths
import pegboard_write
from pegboard import ConfigLayer, MemorySessionStore, Pegboard
from pegboard_lsp_client import LspClient
from pegboard_lsp_servers import DEFAULT_SERVERS, LspSettings, resolve_command

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.builtin.lsp.projects import make_python_package

GOAL_RATIO = 1.2
DEFINITION = {"operation": "goToDefinition", "filePath": "demo/use.py", "line": 5, "character": 11}
REFERENCES = {"operation": "findReferences", "filePath": "demo/core.py", "line": 4, "character": 5}


def board(root: Path, diagnostics: bool = True) -> Pegboard:
    config = {"permissions": {"defaultMode": "acceptEdits"}, "tools": {"lsp": {"diagnosticsOnEdit": diagnostics}}}
    layers = [ConfigLayer("project", config, path=root / "settings.json", root=root)]
    return Pegboard(plugins=[pegboard_lsp, pegboard_write, pegboard_permissions_paths], load_entrypoints=False,
                    layers=layers, cwd=root, store=MemorySessionStore())


def wire(item: dict[str, Any], root: Path) -> tuple[str, dict[str, Any]]:
    uri = (root / str(item["filePath"])).as_uri()
    params: dict[str, Any] = {"textDocument": {"uri": uri},
                              "position": {"line": int(item["line"]) - 1, "character": int(item["character"]) - 1}}
    if item["operation"] == "findReferences":
        return "textDocument/references", {**params, "context": {"includeDeclaration": True}}
    return "textDocument/definition", params


async def bare(client: LspClient, method: str, params: dict[str, Any], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await client.request(method, params, 30)
    return (time.perf_counter() - started) / calls


async def ours(session: Any, item: dict[str, Any], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        result = await session.call("LSP", item)
        assert not result.is_error, result.text
    return (time.perf_counter() - started) / calls


async def edit_time(root: Path, diagnostics: bool, rounds: int) -> float:
    times = []
    async with board(root, diagnostics).session() as session:
        await session.call("LSP", {"operation": "documentSymbol", "filePath": "demo/core.py"})
        for n in range(rounds):
            started = time.perf_counter()
            result = await session.call("Write", {"file_path": str(root / "demo" / f"new_{diagnostics}_{n}.py"),
                                                  "content": f"def f():\n    return undefined_{n}\n"})
            times.append(time.perf_counter() - started)
            assert not result.is_error and ("<new-diagnostics>" in result.text) == diagnostics, result.text
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    argv = resolve_command(DEFAULT_SERVERS["python"], LspSettings(), {})
    if isinstance(argv, str):
        raise SystemExit(f"python-lsp-server is unavailable: {argv}")
    with tempfile.TemporaryDirectory() as tmp:
        root = make_python_package(Path(tmp) / "pkg")
        client = LspClient(argv, root)
        await client.start(30)
        for name in ("use.py", "core.py"):
            await client.sync_file(root / "demo" / name, "python")
        try:
            async with board(root).session() as session:
                for item in (DEFINITION, REFERENCES):
                    method, params = wire(item, root)
                    await bare(client, method, params, 3)
                    await ours(session, item, 3)
                    ratios, bares, mine = [], [], []
                    for _ in range(args.rounds):
                        b = await bare(client, method, params, args.calls)
                        o = await ours(session, item, args.calls)
                        bares.append(b)
                        mine.append(o)
                        ratios.append(o / b)
                    ratio = statistics.median(ratios)
                    print(f"{item['operation']}: bare client {statistics.median(bares) * 1000:.2f} ms, "
                          f"through Pegboard {statistics.median(mine) * 1000:.2f} ms, ratio {ratio:.2f}x "
                          f"(goal <= {GOAL_RATIO}x) {'ok' if ratio <= GOAL_RATIO else 'OVER'}")
        finally:
            await client.shutdown()
        with_diag = await edit_time(root, True, args.rounds)
        without = await edit_time(root, False, args.rounds)
        print(f"Write with diagnostics {with_diag * 1000:.1f} ms, without {without * 1000:.1f} ms: "
              f"edit-to-diagnostics {max(0.0, with_diag - without) * 1000:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
