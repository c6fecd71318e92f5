"""Read of the last 100 lines of a big file: memory and the line index, in one run.

    python benchmarks/bench_read.py [--size-mb N] [--runs N]

Writes a log of about ``--size-mb`` MB (default 1024) of 100-byte lines into a temporary
directory, then reads its last 100 lines through the whole Pegboard pipeline. Reports the
first read (one scan builds the line index), the peak memory growth of that read (traced
Python allocations and the process's peak resident size), and the median of repeat reads,
which the cached index serves. Goals: peak growth <= 50 MB; repeat reads <= 5 ms.

If the Edit tool (``pegboard-edit``) is installed, it also times an edit of one line in a
100 MB file against ``sed -i`` on the same file (goal <= 2x).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pegboard_read
from pegboard.testing import isolated_pegboard
from pegboard_read_lines import read_lines

LINE = 100


def write_log(path: Path, size_mb: int) -> int:
    lines = size_mb * 1024 * 1024 // LINE
    block_lines = 100_000
    with open(path, "w") as fh:
        for start in range(0, lines, block_lines):
            count = min(block_lines, lines - start)
            fh.write("".join(f"{n:012d} " + "x" * (LINE - 14) + "\n" for n in range(start, start + count)))
    return lines


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_read(tmp: Path, size_mb: int, runs: int) -> None:
    log = tmp / "big.log"
    started = time.perf_counter()
    lines = write_log(log, size_mb)
    took = time.perf_counter() - started
    print(f"file: {log.stat().st_size / 1e6:.0f} MB, {lines:,} lines (written in {took:.1f} s)")
    pb = isolated_pegboard(pegboard_read, cwd=tmp)
    loop = asyncio.new_event_loop()
    request = {"file_path": str(log), "offset": lines - 99, "limit": 100}

    def read() -> Any:
        result = loop.run_until_complete(pb.call("Read", request))
        assert not result.is_error and result.text.count("\n") == 99, result.text[:200]
        return result

    loop.run_until_complete(pb.call("Read", {"file_path": str(tmp / "warm.txt")}))
    rss_before = peak_rss_mb()
    tracemalloc.start()
    start = time.perf_counter()
    read()
    first = time.perf_counter() - start
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = peak_rss_mb() - rss_before
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        read()
        samples.append(time.perf_counter() - start)
    repeat = statistics.median(samples) * 1000
    index = pb.stash[pegboard_read.LINE_INDEX].get(log)
    direct = []
    for _ in range(runs):
        start = time.perf_counter()
        list(read_lines(index, lines - 100, 100))
        direct.append(time.perf_counter() - start)
    floor = []
    for _ in range(runs):
        start = time.perf_counter()
        loop.run_until_complete(pb.call("Read", {"file_path": str(tmp / "warm.txt")}))
        floor.append(time.perf_counter() - start)
    traced = traced_peak / 1e6
    print(f"first read (builds the index): {first * 1000:.0f} ms")
    print(f"peak memory growth: traced {traced:.1f} MB, resident {rss_growth:.1f} MB  goal <= 50 MB: "
          f"{'met' if max(traced, rss_growth) <= 50 else 'NOT met'}")
    served = statistics.median(direct) * 1000
    best = min(samples) * 1000
    print(f"repeat read through the pipeline: median {repeat:.2f} ms, best {best:.2f} ms over {runs} runs "
          f"(a one-line file: {statistics.median(floor) * 1000:.2f} ms)")
    print(f"the 100 lines served from the index: median {served:.2f} ms  goal <= 5 ms: "
          f"{'met' if served <= 5 else 'NOT met'}; end to end: {'met' if repeat <= 5 else 'NOT met'}")
    loop.close()


def bench_edit(tmp: Path, runs: int) -> None:
    try:
        edit_module = importlib.import_module("pegboard_edit")
    except ImportError:
        print("edit: skipped (pegboard-edit is not installed)")
        return
    sed = shutil.which("sed")
    if sed is None:
        print("edit: skipped (no sed)")
        return
    target = tmp / "edit.txt"
    write_log(target, 100)
    pb = isolated_pegboard(pegboard_read, edit_module, cwd=tmp)
    loop = asyncio.new_event_loop()
    ours, theirs = [], []
    for n in range(runs):
        old, new = f"{5_000 + n:012d} ", f"{5_000 + n:012d}E"
        session = pb.session(persist=False)
        loop.run_until_complete(session.call("Read", {"file_path": str(target)}))
        start = time.perf_counter()
        result = loop.run_until_complete(
            session.call("Edit", {"file_path": str(target), "old_string": old, "new_string": new})
        )
        ours.append(time.perf_counter() - start)
        assert not result.is_error, result.text
        start = time.perf_counter()
        subprocess.run([sed, "-i", f"s/^{new}/{old}/", str(target)], check=True)
        theirs.append(time.perf_counter() - start)
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"edit one line of 100 MB: Edit {statistics.median(ours) * 1000:.0f} ms, sed -i "
          f"{statistics.median(theirs) * 1000:.0f} ms, ratio {ratio:.2f}  goal <= 2x: "
          f"{'met' if ratio <= 2 else 'NOT met'}")
    loop.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "warm.txt").write_text("warm\n")
        bench_read(tmp, args.size_mb, args.runs)
        bench_edit(tmp, min(args.runs, 5))


if __name__ == "__main__":
    main()
