"""Start-up time of the CLI against the bare interpreter, measured in the same run.

    python benchmarks/bench_startup.py [--runs N]

Reports the median wall time of ``python -S -c pass`` (the baseline: this venv's interpreter
without site-packages), ``python -c pass``, ``pegboard --help`` and ``pegboard tools --json``
with every in-repo plugin installed, and each as a ratio of the baseline. Goals: ``tools --json``
under 300 ms; ``--help`` close to the interpreter's start.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

BASELINE = "python -S -c pass"
CASES = {
    BASELINE: [sys.executable, "-S", "-c", "pass"],
    "python -c pass": [sys.executable, "-c", "pass"],
    "pegboard --help": [sys.executable, "-m", "pegboard", "--help"],
    "pegboard tools --json": [sys.executable, "-m", "pegboard", "tools", "--json"],
}


def median_seconds(cmd: list[str], runs: int, cwd: str) -> float:
    subprocess.run(cmd, capture_output=True, check=True, cwd=cwd)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True, cwd=cwd)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cwd:
        results = {name: median_seconds(cmd, args.runs, cwd) for name, cmd in CASES.items()}
    base = results[BASELINE]
    print(f"{'command':<24} {'median ms':>10} {'x baseline':>11}")
    for name, seconds in results.items():
        print(f"{name:<24} {seconds * 1000:>10.1f} {seconds / base:>11.2f}")
    tools_ms = results["pegboard tools --json"] * 1000
    print(f"goal: tools --json < 300 ms: {'met' if tools_ms < 300 else 'NOT met'} ({tools_ms:.0f} ms)")


if __name__ == "__main__":
    main()
