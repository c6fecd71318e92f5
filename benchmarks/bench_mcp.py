"""``pegboard serve`` against the reference filesystem MCP server, measured in the same run.

    python benchmarks/bench_mcp.py [--runs N] [--calls N] [--reference-dir DIR]

Both servers are driven over stdio by the same thin client (newline-delimited JSON-RPC on
pipes, no SDK), so the numbers compare the servers, not client overhead:

- cold start: spawn to the ``initialize`` response, and spawn to the first file read's
  result (median of ``--runs`` spawns);
- sequential ``tools/call`` file reads per second on one connection (``--calls`` calls).

The reference server is ``@modelcontextprotocol/server-filesystem`` from npm. It is installed
with ``npm install`` into ``--reference-dir`` (default: a temporary directory) when node and
npm are present; otherwise the benchmark says so and measures Pegboard alone. Goals: at least
the reference's calls per second and no slower a cold start (ratios printed at the end).
"""

from __future__ import annotations

import argparse
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
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Peer:
    """A server subprocess spoken to with raw JSON-RPC lines."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.stdout = self.proc.stdout
        self.next_id = 100

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        return self.wait_for(self.next_id)

    def wait_for(self, request_id: int) -> dict[str, Any]:
        while True:
            line = self.stdout.readline()
            if not line:
                raise RuntimeError("server closed its output")
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message

    def close(self) -> None:
        self.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cold_start(cmd: list[str], cwd: Path, env: dict[str, str], call: tuple[str, dict[str, Any]]) -> tuple[float, float]:
    peer = Peer(cmd, cwd, env)
    try:
        peer.send(INIT)
        peer.wait_for(1)
        to_init = time.perf_counter() - peer.started
        peer.send(INITIALIZED)
        result = peer.request("tools/call", {"name": call[0], "arguments": call[1]})
        to_call = time.perf_counter() - peer.started
        if "error" in result or result["result"].get("isError"):
            raise RuntimeError(f"{cmd[0]}: the read failed: {json.dumps(result)[:300]}")
        return to_init, to_call
    finally:
        peer.close()


def calls_per_second(
    cmd: list[str], cwd: Path, env: dict[str, str], call: tuple[str, dict[str, Any]], calls: int
) -> float:
    peer = Peer(cmd, cwd, env)
    try:
        peer.send(INIT)
        peer.wait_for(1)
        peer.send(INITIALIZED)
        for _ in range(20):  # warm up
            peer.request("tools/call", {"name": call[0], "arguments": call[1]})
        start = time.perf_counter()
        for _ in range(calls):
            result = peer.request("tools/call", {"name": call[0], "arguments": call[1]})
            if "error" in result or result["result"].get("isError"):
                raise RuntimeError(f"{cmd[0]}: a read failed: {json.dumps(result)[:300]}")
        return calls / (time.perf_counter() - start)
    finally:
        peer.close()


def install_reference(directory: Path) -> list[str] | None:
    """The command of the reference server, installing it with npm if needed; ``None`` without node."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        print("node/npm not found: measuring pegboard serve alone (no reference server)")
        return None
    entry = directory / "node_modules" / REFERENCE_PACKAGE / "dist" / "index.js"
    if not entry.is_file():
        print(f"installing {REFERENCE_PACKAGE} into {directory} with npm ...", flush=True)
        done = subprocess.run(
            [npm, "install", "--silent", "--no-audit", "--no-fund", REFERENCE_PACKAGE],
            cwd=directory,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not entry.is_file():
            print(f"could not install {REFERENCE_PACKAGE}: {done.stderr.strip()[:300]}")
            return None
    return [node, str(entry)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="cold starts per server (median reported)")
    parser.add_argument("--calls", type=int, default=1000, help="sequential calls per server")
    parser.add_argument("--reference-dir", type=Path, default=None, help="where to npm-install the reference")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pegboard-bench-mcp-") as tmp:
        root = Path(tmp).resolve()
        project = root / "project"
        project.mkdir()
        (project / ".git").mkdir()
        target = project / "sample.txt"
        target.write_text("".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(40)))
        env = {**os.environ, "PEGBOARD_CONFIG_DIR": str(root / "user"), "PEGBOARD_MANAGED_CONFIG_DIR": str(root / "m")}

        pegboard = [sys.executable, "-m", "pegboard", "serve", "--cwd", str(project)]
        servers: dict[str, tuple[list[str], tuple[str, dict[str, Any]]]] = {
            "pegboard serve": (pegboard, ("Read", {"file_path": str(target)})),
        }
        ref_dir = args.reference_dir or root / "reference"
        ref_dir.mkdir(parents=True, exist_ok=True)
        reference = install_reference(ref_dir)
        if reference is not None:
            servers["server-filesystem"] = ([*reference, str(project)], ("read_text_file", {"path": str(target)}))

        results: dict[str, dict[str, float]] = {}
        for name, (cmd, call) in servers.items():
            cold_start(cmd, project, env, call)  # warm the OS caches
            samples = [cold_start(cmd, project, env, call) for _ in range(args.runs)]
            results[name] = {
                "init_ms": statistics.median(s[0] for s in samples) * 1000,
                "first_call_ms": statistics.median(s[1] for s in samples) * 1000,
                "calls_per_s": calls_per_second(cmd, project, env, call, args.calls),
            }

    print(f"\n{'server':<20} {'cold start (init)':>18} {'cold start (1st read)':>22} {'reads/s':>10}")
    for name, r in results.items():
        print(f"{name:<20} {r['init_ms']:>15.0f} ms {r['first_call_ms']:>19.0f} ms {r['calls_per_s']:>10.0f}")
    if "server-filesystem" in results:
        ours, ref = results["pegboard serve"], results["server-filesystem"]
        print("\npegboard serve / reference (cold start: lower is better; reads/s: higher is better)")
        print(f"  cold start to initialize: {ours['init_ms'] / ref['init_ms']:.2f}x")
        print(f"  cold start to first read: {ours['first_call_ms'] / ref['first_call_ms']:.2f}x")
        print(f"  sequential reads per second: {ours['calls_per_s'] / ref['calls_per_s']:.2f}x")
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
