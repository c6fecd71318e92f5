"""Edit of one line in a big file, against ``sed -i`` on the same file, in one run.

    python benchmarks/bench_edit.py [--size-mb 100] [--rounds 5]

Both rewrite the whole file (a new file renamed over the old one); Edit also decodes and
encodes the text, checks the read ledger, computes the structured patch and fsyncs the file
and its directory, which ``sed -i`` does not. Each round changes the line and the next one
changes it back, so every run starts from the same content. The best round of each counts.
Goal: Edit at most 2x ``sed -i``. Absolute times depend on the disk; compare the ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pegboard_edit
from pegboard.testing import isolated_pegboard
from pegboard_toolkit import ReadLedger

GOAL_RATIO = 2.0


def make_file(path: Path, size_mb: int) -> int:
    """Lines of ~100 bytes up to ``size_mb`` MiB; returns the number of the middle line."""
    line = "line {:>9} " + "x" * 84 + "\n"
    count = size_mb * (1 << 20) // len(line.format(0))
    with open(path, "w") as fh:
        for start in range(0, count, 10_000):
            fh.write("".join(line.format(i) for i in range(start, min(start + 10_000, count))))
    return count // 2


def bench_sed(path: Path, middle: int, rounds: int) -> list[float]:
    sed = shutil.which("sed")
    if sed is None:
        raise SystemExit("sed is not on PATH")
    times = []
    for r in range(rounds * 2):
        a, b = ("line", "LINE") if r % 2 == 0 else ("LINE", "line")
        start = time.perf_counter()
        subprocess.run([sed, "-i", f"s/^{a} {middle:>9} /{b} {middle:>9} /", str(path)], check=True)
        times.append(time.perf_counter() - start)
    return times


def bench_edit(path: Path, middle: int, rounds: int) -> list[float]:
    pb = isolated_pegboard(pegboard_edit, cwd=path.parent)
    times = []
    with pb.session_sync(mode="acceptEdits") as session:
        ReadLedger(session).record_read(path, whole=True)
        for r in range(rounds * 2):
            a, b = ("line", "LINE") if r % 2 == 0 else ("LINE", "line")
            start = time.perf_counter()
            result = session.call_sync("Edit", {
                "file_path": str(path), "old_string": f"{a} {middle:>9} ", "new_string": f"{b} {middle:>9} ",
            })
            times.append(time.perf_counter() - start)
            if result.is_error:
                raise SystemExit(f"Edit failed: {result.text}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pegboard-bench-edit-") as tmp:
        path = Path(tmp) / "big.txt"
        middle = make_file(path, args.size_mb)
        size = path.stat().st_size
        sed = bench_sed(path, middle, args.rounds)
        edit = bench_edit(path, middle, args.rounds)
        best_sed, best_edit = min(sed), min(edit)
        ratio = best_edit / best_sed
        print(f"file: {size / (1 << 20):.0f} MiB, one line changed, {len(sed)} runs each")
        print(f"sed -i  best {best_sed * 1000:8.1f} ms   median {statistics.median(sed) * 1000:8.1f} ms")
        print(f"Edit    best {best_edit * 1000:8.1f} ms   median {statistics.median(edit) * 1000:8.1f} ms")
        verdict = "ok" if ratio <= GOAL_RATIO else "over the goal"
        print(f"ratio Edit / sed -i: {ratio:.2f}x (goal <= {GOAL_RATIO:.0f}x: {verdict})")


if __name__ == "__main__":
    main()
