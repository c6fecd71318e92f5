"""``pegboard serve`` (stdio) against the reference filesystem MCP server, calls in flight.

    python benchmarks/bench_mcp_concurrency.py [--calls N] [--pairs N] [--in-flight N] [--cache-dir DIR]

Both servers run as subprocesses, driven by the same thin client (newline-delimited
JSON-RPC on pipes, no SDK) reading the same file. Each measurement is ``--calls`` read-file
calls on one connection, once sequentially (one call at a time) and once with
``--in-flight`` calls outstanding at every moment. The two servers are measured in
interleaved pairs (``--pairs`` of them), so drift of the machine hits both alike; the
ratio reported is the median of the per-pair ratios (each pair's two runs are back to back),
with the medians of the rates beside it. Goals: at least 1.5x the reference's calls per second with 8 in flight and at
least 1.2x sequentially.

The reference server is ``@modelcontextprotocol/server-filesystem``, installed with
``npm install`` into ``--cache-dir`` (default: a cache directory under the system's temp
directory, kept between runs). Without node/npm, or when the install fails, the benchmark
says so and measures Pegboard alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REFERENCE_PACKAGE = "@modelcontextprotocol/server-filesystem"
GOAL_IN_FLIGHT = 1.5
GOAL_SEQUENTIAL = 1.2
INIT_PARAMS = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


class Client:
    """One server subprocess and a raw JSON-RPC client that matches answers to ids."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, cmd: list[str], cwd: Path, env: dict[str, str]) -> Client:
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 24,
        )
        client = cls(proc)
        await client.request("initialize", INIT_PARAMS)
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return client

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            future = self.pending.pop(message.get("id"), None) if isinstance(message.get("id"), int) else None
            if future is not None and not future.done():
                future.set_result(message)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(RuntimeError("server closed its output"))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, 60)

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()


async def throughput(client: Client, call: tuple[str, dict[str, Any]], calls: int, in_flight: int) -> float:
    """Calls per second with ``in_flight`` calls outstanding (1: sequential)."""
    params = {"name": call[0], "arguments": call[1]}

    async def worker(count: int) -> None:
        for _ in range(count):
            answer = await client.request("tools/call", params)
            if "error" in answer or answer["result"].get("isError"):
                raise RuntimeError(f"a read failed: {json.dumps(answer)[:300]}")

    shares = [calls // in_flight + (1 if i < calls % in_flight else 0) for i in range(in_flight)]
    started = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in shares))
    return calls / (time.perf_counter() - started)


async def measure(
    cmd: list[str], cwd: Path, env: dict[str, str], call: tuple[str, dict[str, Any]], calls: int, in_flight: int
) -> dict[str, float]:
    client = await Client.start(cmd, cwd, env)
    try:
        await throughput(client, call, 50, in_flight)  # warm up
        return {
            "sequential": await throughput(client, call, calls, 1),
            "in_flight": await throughput(client, call, calls, in_flight),
        }
    finally:
        await client.close()


def default_cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / "pegboard-bench-cache" / "mcp-reference"


def install_reference(directory: Path) -> list[str] | None:
    """The command of the reference server, installed with npm if needed; ``None`` if impossible."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        print("node/npm not found: skipping the reference server, measuring pegboard serve alone")
        return None
    entry = directory / "node_modules" / REFERENCE_PACKAGE / "dist" / "index.js"
    if not entry.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        print(f"installing {REFERENCE_PACKAGE} into {directory} with npm ...", flush=True)
        done = subprocess.run(
            [npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(directory), REFERENCE_PACKAGE],
            cwd=directory,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not entry.is_file():
            print(f"npm could not install {REFERENCE_PACKAGE} (skipping it): {done.stderr.strip()[:300]}")
            return None
    return [node, str(entry)]


async def run(args: argparse.Namespace, root: Path) -> dict[str, dict[str, list[float]]]:
    project = root / "project"
    project.mkdir()
    (project / ".git").mkdir()
    target = project / "sample.txt"
    target.write_text("".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(40)))
    env = {**os.environ, "PEGBOARD_CONFIG_DIR": str(root / "user"), "PEGBOARD_MANAGED_CONFIG_DIR": str(root / "m")}
    env["PEGBOARD_DATA_DIR"] = str(root / "data")
    servers: dict[str, tuple[list[str], tuple[str, dict[str, Any]]]] = {
        "pegboard serve": (
            [sys.executable, "-m", "pegboard", "serve", "--cwd", str(project)],
            ("Read", {"file_path": str(target)}),
        )
    }
    reference = install_reference(args.cache_dir or default_cache_dir())
    if reference is not None:
        servers["server-filesystem"] = ([*reference, str(project)], ("read_text_file", {"path": str(target)}))
    results: dict[str, dict[str, list[float]]] = {name: {"sequential": [], "in_flight": []} for name in servers}
    for pair in range(args.pairs):
        order = list(servers.items()) if pair % 2 == 0 else list(reversed(servers.items()))
        for name, (cmd, call) in order:
            figures = await measure(cmd, project, env, call, args.calls, args.in_flight)
            for key, value in figures.items():
                results[name][key].append(value)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000, help="calls per measurement")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved measurement pairs (median reported)")
    parser.add_argument("--in-flight", type=int, default=8, help="calls outstanding at once")
    parser.add_argument("--cache-dir", type=Path, default=None, help="where npm installs the reference server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pegboard-bench-mcpc-") as tmp:
        results = asyncio.run(run(args, Path(tmp).resolve()))
    medians = {name: {k: statistics.median(v) for k, v in r.items()} for name, r in results.items()}
    print(f"\n{'server':<20} {'sequential calls/s':>19} {f'{args.in_flight} in flight calls/s':>22}")
    for name, r in medians.items():
        print(f"{name:<20} {r['sequential']:>19.0f} {r['in_flight']:>22.0f}")
    ratios: dict[str, float] = {}
    if "server-filesystem" in medians:
        ours, ref = results["pegboard serve"], results["server-filesystem"]
        print("\npegboard serve / reference (higher is better; median of per-pair ratios)")
        for key, goal in (("sequential", GOAL_SEQUENTIAL), ("in_flight", GOAL_IN_FLIGHT)):
            pairs = [a / b for a, b in zip(ours[key], ref[key], strict=True)]
            ratio = ratios[key] = statistics.median(pairs)
            spread = ", ".join(f"{p:.2f}" for p in pairs)
            print(f"  {key:<11} {ratio:.2f}x  (goal >= {goal}x: {'ok' if ratio >= goal else 'MISSED'}; pairs {spread})")
    print(json.dumps({"calls_per_s": medians, "ratios": ratios}))


if __name__ == "__main__":
    main()
