"""Memory of ``pegboard serve --http`` after many MCP sessions opened and closed.

    python benchmarks/bench_serve_sessions_rss.py [--sessions 1000]

Starts the server on 127.0.0.1, opens one session to warm it up and reads its RSS (the
start), then opens and closes ``--sessions`` handshake-era sessions with the official SDK
client (initialize, ``tools/list``, one Read, ``DELETE`` of the session) and reads the RSS
again once they are all closed. Goal: within 10 MiB of the start.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_MIB = 10.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def one_session(url: str, path: Path) -> None:
    from mcp import Client

    async with Client(url, mode="legacy") as client:
        await client.list_tools()
        await client.call_tool("Read", {"file_path": str(path)})


async def drive(url: str, path: Path, count: int) -> None:
    for _ in range(count):
        await one_session(url, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args()
    pegboard = str(Path(sys.executable).parent / "pegboard")
    with tempfile.TemporaryDirectory(prefix="pegboard-bench-rss-") as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        target = root / "hello.txt"
        target.write_text("hello\n", encoding="utf-8")
        port = free_port()
        env = {**os.environ, "PEGBOARD_CONFIG_DIR": str(root / "config"), "PEGBOARD_CACHE_DIR": str(root / "cache"),
               "HOME": str(root)}
        proc = subprocess.Popen([pegboard, "serve", "--http", f"127.0.0.1:{port}", "--cwd", str(root)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise SystemExit("pegboard serve --http did not start") from None
                    time.sleep(0.1)
            asyncio.run(drive(url, target, 5))
            time.sleep(1.0)
            start = rss_mib(proc.pid)
            began = time.perf_counter()
            asyncio.run(drive(url, target, args.sessions))
            took = time.perf_counter() - began
            time.sleep(2.0)  # the last closes settle and the freed memory is handed back
            end = rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)
    growth = end - start
    verdict = "ok" if growth <= GOAL_MIB else "MISSED"
    print(f"{args.sessions} sessions in {took:.1f} s: RSS {start:.1f} MiB at the start, {end:.1f} MiB after "
          f"(+{growth:.1f} MiB; goal <= {GOAL_MIB:g} MiB) {verdict}")


if __name__ == "__main__":
    main()
