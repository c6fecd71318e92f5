"""Many clients at once on ``pegboard serve --http``: throughput, latency, memory, isolation.

    python benchmarks/bench_serve_load.py [--sessions N] [--calls N] [--time-limit S]

Starts ``pegboard serve --http 127.0.0.1:PORT`` and opens ``--sessions`` MCP sessions
(streamable HTTP, a thin raw JSON-RPC client over httpx) that run concurrently. Each makes
``--calls`` calls, cycling through four kinds:

- ``Read`` of the session's own file;
- a ``Read`` that a deny rule refuses (the result must be a denial);
- ``BenchBlob``, a tool (from a plugin module the benchmark writes) whose result exceeds its
  size limit, so it comes back cut with a reference;
- ``tool_result_read`` of that reference.

Every answer must be free of errors (other than the expected denial) and carry the session's
own marker: a response crossed to another session, or lost, fails the run. The whole run stops
by itself after ``--time-limit`` seconds. Reported: calls/s, p50/p99 latency, and the server's
resident memory (``/proc/PID/status``) at start, at its peak while loaded, and a few seconds
after every session closed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

PROTOCOL = "2025-06-18"
MARKER = re.compile(r"session-\d{3}-marker")
BLOB_LIMIT = 2_000
BLOB_TOOL = '''
"""A tool for the load benchmark: a result larger than its size limit."""
from pydantic import BaseModel
from pegboard import ToolContext, hookimpl, tool


class BlobInput(BaseModel):
    marker: str


@tool(name="BenchBlob", max_result_chars={limit}, read_only=True)
async def bench_blob(input: BlobInput, ctx: ToolContext) -> str:
    """Repeat the marker well past the size limit."""
    return (input.marker + " ") * {repeat}


@hookimpl
def register_tools(register):
    register(bench_blob)
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class LoadError(AssertionError):
    """A wrong, lost or crossed answer."""


class McpSession:
    """One MCP session over streamable HTTP: POST JSON-RPC, read a JSON or SSE answer."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self.next_id = 0

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
            headers["Mcp-Protocol-Version"] = PROTOCOL
        return headers

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        return await self.http.post(self.url, content=json.dumps(message), headers=self._headers())

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        request_id = self.next_id
        response = await self.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if response.status_code != 200:
            raise LoadError(f"{method}: HTTP {response.status_code}: {response.text[:200]}")
        if self.session_id is None:
            self.session_id = response.headers.get("mcp-session-id")
        for message in parse_messages(response):
            if message.get("id") == request_id:
                if "error" in message:
                    raise LoadError(f"{method}: {message['error']}")
                answer: dict[str, Any] = message["result"]
                return answer
        raise LoadError(f"{method}: no answer with id {request_id} (lost or crossed)")

    async def open(self) -> None:
        hello = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "load", "version": "0"}}
        await self.request("initialize", hello)
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def close(self) -> None:
        if self.session_id is not None:
            await self.http.delete(self.url, headers=self._headers())


def parse_messages(response: httpx.Response) -> list[dict[str, Any]]:
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    messages = []
    for line in response.text.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data:
                messages.append(json.loads(data))
    return messages


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


async def one_session(
    http: httpx.AsyncClient, url: str, index: int, files: Path, secret: Path, calls: int, latencies: list[float]
) -> int:
    session = McpSession(http, url)
    await session.open()
    marker = f"session-{index:03d}-marker"
    own = files / f"s{index}.txt"
    ref: str | None = None
    done = 0
    try:
        for n in range(calls):
            kind = n % 4
            started = time.perf_counter()
            if kind == 0:
                result = await session.request("tools/call", {"name": "Read", "arguments": {"file_path": str(own)}})
                if result.get("isError") or marker not in text_of(result):
                    raise LoadError(f"{marker}: Read answered {text_of(result)[:200]!r}")
            elif kind == 1:
                result = await session.request("tools/call", {"name": "Read", "arguments": {"file_path": str(secret)}})
                if not result.get("isError") or "denied" not in text_of(result):
                    raise LoadError(f"{marker}: the denied Read answered {text_of(result)[:200]!r}")
            elif kind == 2:
                result = await session.request("tools/call", {"name": "BenchBlob", "arguments": {"marker": marker}})
                body = text_of(result)
                ref = next((w.strip(".,:;()[]") for w in body.split() if w.startswith("tr_")), None)
                if result.get("isError") or marker not in body or ref is None:
                    raise LoadError(f"{marker}: BenchBlob answered {body[-300:]!r}")
            else:
                assert ref is not None
                args = {"ref": ref, "offset": BLOB_LIMIT, "limit": 500}
                result = await session.request("tools/call", {"name": "tool_result_read", "arguments": args})
                body = text_of(result)
                if result.get("isError") or marker not in body:
                    raise LoadError(f"{marker}: tool_result_read answered {body[:300]!r}")
                others = set(MARKER.findall(body)) - {marker}
                if others:
                    raise LoadError(f"{marker}: saw another session's result: {sorted(others)[0]}")
            latencies.append(time.perf_counter() - started)
            done += 1
    finally:
        await session.close()
    return done


async def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"pegboard serve exited with {proc.returncode}")
            try:
                probe = McpSession(http, url)
                await probe.open()
                await probe.close()
                return
            except (httpx.HTTPError, LoadError):
                await asyncio.sleep(0.2)
    raise RuntimeError("pegboard serve --http did not answer in time")


async def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    project = root / "project"
    files = project / "files"
    files.mkdir(parents=True)
    (project / ".git").mkdir()
    secret = project / "secret.txt"
    secret.write_text("not for reading\n")
    (project / ".pegboard").mkdir()
    settings = {"permissions": {"deny": [f"Read(/{secret})"]}}
    (project / ".pegboard" / "settings.json").write_text(json.dumps(settings))
    for i in range(args.sessions):
        (files / f"s{i}.txt").write_text("".join(f"session-{i:03d}-marker line {n}\n" for n in range(20)))
    plugin_dir = root / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / "bench_load_tools.py").write_text(BLOB_TOOL.format(limit=BLOB_LIMIT, repeat=400))
    env = {
        **os.environ,
        "PEGBOARD_CONFIG_DIR": str(root / "user"),
        "PEGBOARD_MANAGED_CONFIG_DIR": str(root / "managed"),
        "PEGBOARD_DATA_DIR": str(root / "data"),
        "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    cmd = [sys.executable, "-m", "pegboard", "serve", "--http", f"127.0.0.1:{port}", "--cwd", str(project)]
    cmd += ["--plugin", "bench_load_tools"]
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        await wait_ready(url, proc)
        start_rss = rss_kib(proc.pid)
        peak = start_rss
        latencies: list[float] = []
        limits = httpx.Limits(max_connections=args.sessions, max_keepalive_connections=args.sessions)
        async with httpx.AsyncClient(limits=limits, timeout=60.0) as http:
            started = time.perf_counter()
            tasks = [
                asyncio.create_task(one_session(http, url, i, files, secret, args.calls, latencies))
                for i in range(args.sessions)
            ]
            pending: set[asyncio.Task[int]] = set(tasks)
            deadline = started + args.time_limit
            while pending and time.perf_counter() < deadline:
                _done, pending = await asyncio.wait(pending, timeout=0.25)
                peak = max(peak, rss_kib(proc.pid))
            for task in pending:
                task.cancel()
            elapsed = time.perf_counter() - started
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        settled = time.monotonic() + args.settle
        while time.monotonic() < settled:
            await asyncio.sleep(0.25)
        end_rss = rss_kib(proc.pid)
    finally:
        proc.terminate()
        try:
            _out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
    calls = sum(o for o in outcomes if isinstance(o, int))
    ordered = sorted(latencies)
    return {
        "sessions": args.sessions,
        "calls": calls,
        "expected_calls": args.sessions * args.calls,
        "errors": [f"{type(e).__name__}: {e}" for e in errors[:5]],
        "error_count": len(errors),
        "seconds": round(elapsed, 2),
        "calls_per_s": round(calls / elapsed, 1),
        "p50_ms": round(statistics.median(ordered) * 1000, 2) if ordered else None,
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2) if ordered else None,
        "rss_mib": {k: round(v / 1024, 1) for k, v in (("start", start_rss), ("peak", peak), ("end", end_rss))},
        "server_stderr_tail": err.decode(errors="replace")[-500:] if errors else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=50, help="concurrent MCP sessions")
    parser.add_argument("--calls", type=int, default=200, help="calls per session")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds before the run stops itself")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds to wait before the final memory reading")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pegboard-bench-load-") as tmp:
        report = asyncio.run(run(args, Path(tmp).resolve()))
    print(json.dumps(report, indent=2))
    rss = report["rss_mib"]
    print(
        f"\n{report['calls']}/{report['expected_calls']} calls in {report['seconds']} s: "
        f"{report['calls_per_s']} calls/s, p50 {report['p50_ms']} ms, p99 {report['p99_ms']} ms; "
        f"server RSS {rss['start']} MiB at start, {rss['peak']} peak, {rss['end']} after close"
    )
    if report["error_count"] or report["calls"] != report["expected_calls"]:
        print("FAILED: errors, lost calls or a time-out (see above)")
        sys.exit(1)


if __name__ == "__main__":
    main()
