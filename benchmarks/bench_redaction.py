"""Benchmark: redacting a 5 MB tool result (target: at most 20x one ``str.count`` pass).

Run: ``.venv/bin/python benchmarks/bench_redaction.py [--repeat N] [--size BYTES]``.

The baseline, measured in the same run on the same text, is ``text.count("\\n")``: one pass
that looks at every character. Each case prints the best and median time of ``redact`` and of
the baseline and the ratio of the medians; the exit status is 1 if a ratio exceeds 20. The
plain reference redactor (each pattern in turn over the whole text) is timed once per text
for comparison. Times are the thread's CPU time, taken in turns with the baseline: on a
busy machine wall-clock time punishes the longer operation (it is more often preempted),
CPU time does not.

Texts: source code (ASCII), the same with non-ASCII characters (wider string storage, and the
case-insensitive ``Authorization`` search takes its other path), and both again with secret
values and credential shapes planted throughout. Every case redacts with eight secret values
from a typical environment.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

from pegboard.core.redaction import REDACTED, redact

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the reference redactor lives in the tests
from tests.kernel.test_redaction import reference_redact

GOAL = 20.0
SECRETS = [
    "ghp_" + "Q" * 36,
    "hunter2-correct-horse",
    "0123456789abcdef0123",
    "xJ8kP2mN9qR4sT7v",
    "sess-6f1c0e2b9a7d",
    "AbCdEfGhIjKlMnOp",
    "pw_for_the_database_2",
    "another.long.secret.value",
]
PLANTED = [
    SECRETS[1],
    SECRETS[3],
    "sk-ant-" + "a" * 40,
    "AKIAABCDEFGHIJKLMNOP",
    "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
    "postgres://app:pa55word@db.internal:5432/app",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----",
]


def source_text(size: int) -> str:
    """Python source (the standard library's, ASCII only): what Read, Grep and Bash return most."""
    pieces: list[str] = []
    total = 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        piece = path.read_text(encoding="utf-8", errors="replace").encode("ascii", "ignore").decode()
        pieces.append(piece)
        total += len(piece)
        if total >= size:
            break
    chunk = "\n".join(pieces)
    return (chunk * (size // len(chunk) + 1))[:size]


def non_ascii(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(line + " # résumé → ok" if i % 50 == 0 else line for i, line in enumerate(lines))[: len(text)]


def plant(text: str, every: int = 50_000) -> str:
    rng = random.Random(7)
    pieces = []
    for start in range(0, len(text), every):
        pieces.append(text[start : start + every])
        pieces.append(f" {rng.choice(PLANTED)} ")
    return "".join(pieces)


def seconds(fn: Callable[[], object]) -> float:
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def interleaved(fn: Callable[[], object], baseline: Callable[[], object], repeat: int) -> tuple[list[float], ...]:
    """Times of ``fn`` and ``baseline`` taken in turns, so that load on the machine hits both alike."""
    ours, base = [], []
    for _ in range(repeat):
        base.append(seconds(baseline))
        ours.append(seconds(fn))
    return ours, base


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--size", type=int, default=5_000_000)
    args = parser.parse_args()
    base = source_text(args.size)
    cases = {
        "ascii, clean": base,
        "non-ascii, clean": non_ascii(base),
        "ascii, planted": plant(base),
        "non-ascii, planted": plant(non_ascii(base)),
    }
    failed = False
    header = f"{'case':20} {'chars':>9} {'redact best/median ms':>22} {'count best/median ms':>21} {'ratio':>6}"
    print(header + "  reference ms  redactions")
    for name, text in cases.items():
        result = redact(text, SECRETS)
        assert result == reference_redact(text, SECRETS), name
        redactions = result.count(REDACTED) - text.count(REDACTED)
        ours, baseline = interleaved(
            lambda text=text: redact(text, SECRETS),  # type: ignore[misc]
            lambda text=text: text.count("\n"),  # type: ignore[misc]
            args.repeat,
        )
        reference = seconds(lambda text=text: reference_redact(text, SECRETS))  # type: ignore[misc]
        ratio = statistics.median(ours) / statistics.median(baseline)
        failed |= ratio > GOAL
        print(
            f"{name:20} {len(text):9,} {min(ours) * 1e3:10.2f} /{statistics.median(ours) * 1e3:9.2f}"
            f" {min(baseline) * 1e3:10.2f} /{statistics.median(baseline) * 1e3:8.2f} {ratio:6.1f}"
            f"  {reference * 1e3:10.1f}  {redactions:10,}"
        )
    print(f"goal: ratio <= {GOAL:g} in every case: {'missed' if failed else 'met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
