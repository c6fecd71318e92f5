"""The MCP client reading one large stdio result, against a bare reader of the same bytes.

    python benchmarks/bench_mcp_client_big.py [--mib 50] [--sdk]

A small raw JSON-RPC server (no SDK) answers ``tools/call`` with one text result of
``--mib`` MiB on a single line. Each measurement runs in a fresh interpreter, so its peak
RSS is its own:

- baseline: read the server's stdout to the newline and ``json.loads`` it (the floor for
  any Python client);
- pegboard: ``Pegboard.call`` of the server's tool through the MCP client plugin (the
  result is cut to the result budget and stored);
- ``--sdk``: the same read through the SDK's own stdio transport (before Pegboard read
  stdio itself; quadratic in the line's size).

Goals: time linear in the size (the ratio to the baseline does not grow with ``--mib``)
and peak RSS growth at most about twice the result's size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SERVER = textwrap.dedent(
    """
    import json, sys
    mib = float(sys.argv[1])
    line = "0123456789" * 7 + "\\n"
    text = line * int(mib * (1 << 20) / len(line))
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "big", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "big", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                  "error": {"code": -32601, "message": "no such method"}}).encode() + b"\\n")
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\\n")
        out.flush()
    """
)

MEASURE = textwrap.dedent(
    """
    import json, resource, subprocess, sys, time
    mode, server, mib, workdir = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

    def rss_mib():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    if mode == "baseline":
        before = rss_mib()
        proc = subprocess.Popen([sys.executable, server, mib], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
        proc.stdin.write(json.dumps(init).encode() + b"\\n")
        proc.stdin.flush()
        proc.stdout.readline()  # the server is up and its text made, as for the others
        start = time.perf_counter()
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "big", "arguments": {}}}
        proc.stdin.write(json.dumps(call).encode() + b"\\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        size = len(answer["result"]["content"][0]["text"])
        elapsed = time.perf_counter() - start
        proc.stdin.close()
        proc.wait()
    else:
        from pathlib import Path
        if mode == "sdk":
            import pegboard_mcp_client.manager as manager
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client
            from pegboard_mcp_client.watched import WatchedTransport

            def transport(self, state):
                cfg = state.config
                return WatchedTransport(stdio_client(StdioServerParameters(
                    command=cfg.command, args=list(cfg.args), env=dict(self.env))))
            manager.McpManager._transport = transport
        from pegboard import Pegboard
        config = Path(workdir) / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"big": {"command": sys.executable, "args": [server, mib]}}}))
        pb = Pegboard(config_files=[config], cwd=Path(workdir))
        before = rss_mib()
        start = time.perf_counter()
        result = pb.call_sync("mcp__big__big", {}, approver=lambda call, decision: True)
        elapsed = time.perf_counter() - start
        size = len(result.text)
        assert not result.is_error, result.text[:500]
        pb.close()
    print(json.dumps({"seconds": elapsed, "rss_growth_mib": rss_mib() - before, "chars": size}))
    """
)


def measure(mode: str, server: Path, mib: float, workdir: Path) -> dict[str, float]:
    env = {**os.environ, "PEGBOARD_MCP_STARTUP_WAIT": "60"}
    done = subprocess.run([sys.executable, "-c", MEASURE, mode, str(server), str(mib), str(workdir)],
                          capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{done.stderr[-2000:]}")
    data: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=50.0)
    parser.add_argument("--sdk", action="store_true", help="also time the SDK's stdio transport")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pegboard-bench-big-") as tmp:
        workdir = Path(tmp)
        server = workdir / "big_server.py"
        server.write_text(SERVER, encoding="utf-8")
        modes = ["baseline", "pegboard"] + (["sdk"] if args.sdk else [])
        results = {mode: measure(mode, server, args.mib, workdir) for mode in modes}
    base = results["baseline"]
    print(f"{args.mib:g} MiB result on one stdio line")
    for mode, r in results.items():
        ratio = r["seconds"] / base["seconds"] if base["seconds"] else float("nan")
        growth = r["rss_growth_mib"]
        print(f"  {mode:9s} {r['seconds']:7.2f} s  ({ratio:5.2f}x baseline)  peak RSS growth {growth:7.1f} MiB"
              f"  ({growth / args.mib:4.2f}x the size)")


if __name__ == "__main__":
    main()
