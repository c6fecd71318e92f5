"""Start-up time of the CLI against the bare interpreter, measured in the same run.

    python benchmarks/bench_startup.py [--runs N]

The baseline is ``python -S -c pass`` with this venv's interpreter (without site-packages,
so the editable installs' ``.pth`` files do not inflate it). With every in-repo plugin
installed and the start-up cache off (``PEGBOARD_NO_CACHE=1``), the goals are:

- ``Pegboard().tools()`` from a fresh interpreter within 15x the baseline;
- ``pegboard tools --json`` within 15x;
- ``pegboard call Read`` of a small file from a cold process within 15x;
- ``pegboard serve`` answering ``initialize`` on stdio within 12x.

Also shown, without a goal: ``python -c pass``, ``pegboard --help`` and ``tools --json`` with
the start-up cache warm.
The cases run in turns, one run of each per round, so that a change in the machine's load
shifts them all alike. Config, data and cache directories are fresh temporary ones.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BASELINE = "python -S -c pass"
TOOLS = "pegboard tools --json"
API = "Pegboard().tools()"
CALL = "pegboard call Read"
SERVE = "pegboard serve: initialize"
GOALS = {API: 15.0, TOOLS: 15.0, CALL: 15.0, SERVE: 12.0}
SCRIPT = str(Path(sys.executable).with_name("pegboard"))
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench_startup", "version": "1"},
            },
        }
    )
    + "\n"
).encode()


def timed_run(cmd: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, cwd=cwd, env=env)
    return time.perf_counter() - start


def timed_initialize(cwd: str, env: dict[str, str]) -> float:
    """Until the answer to ``initialize`` is read; the server's exit is not timed."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [SCRIPT, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=60)
    if b'"result"' not in line:
        raise SystemExit(f"pegboard serve did not answer initialize: {line[:200]!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.join(tmp, "project")
        os.mkdir(cwd)
        env = {
            **os.environ,
            "PEGBOARD_CONFIG_DIR": os.path.join(tmp, "user"),
            "PEGBOARD_MANAGED_CONFIG_DIR": os.path.join(tmp, "managed"),
            "PEGBOARD_DATA_DIR": os.path.join(tmp, "data"),
            "PEGBOARD_CACHE_DIR": os.path.join(tmp, "cache"),
        }
        env.pop("PEGBOARD_NO_CACHE", None)
        uncached = {**env, "PEGBOARD_NO_CACHE": "1"}
        target = os.path.join(cwd, "small.txt")
        with open(target, "w", encoding="utf-8") as fh:
            fh.write("one\ntwo\n")
        read = json.dumps({"file_path": target})
        cases: dict[str, Callable[[], float]] = {
            BASELINE: lambda: timed_run([sys.executable, "-S", "-c", "pass"], cwd, env),
            "python -c pass": lambda: timed_run([sys.executable, "-c", "pass"], cwd, env),
            "pegboard --help": lambda: timed_run([SCRIPT, "--help"], cwd, env),
            f"{TOOLS} (cache warm)": lambda: timed_run([SCRIPT, "tools", "--json"], cwd, env),
            API: lambda: timed_run(
                [sys.executable, "-c", "from pegboard import Pegboard; Pegboard().tools()"], cwd, uncached),
            TOOLS: lambda: timed_run([SCRIPT, "tools", "--json"], cwd, uncached),
            CALL: lambda: timed_run([SCRIPT, "call", "Read", "--input", read], cwd, uncached),
            SERVE: lambda: timed_initialize(cwd, uncached),
        }
        for case in cases.values():  # warm-up; fills the start-up cache
            case()
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, case in cases.items():
                samples[name].append(case())
    results = {name: statistics.median(values) for name, values in samples.items()}
    base = results[BASELINE]
    print(f"{'command':<34} {'median ms':>10} {'x baseline':>11}")
    for name, seconds in results.items():
        print(f"{name:<34} {seconds * 1000:>10.1f} {seconds / base:>11.2f}")
    for name, goal in GOALS.items():
        ratio = results[name] / base
        verdict = "met" if ratio < goal else "NOT met"
        print(f"goal: {name} < {goal:g}x baseline: {verdict} ({ratio:.2f}x, baseline {base * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
