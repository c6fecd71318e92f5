"""Benchmark: permission decisions against a 200-rule config.

Run: ``.venv/bin/python benchmarks/bench_permissions.py [--n N]``.

Goals: p50 under 50 µs for a path decision (Read / Edit with path rules) and under 300 µs
for a 5-part compound Bash command. Absolute times depend on the machine, so the script
also measures a baseline in the same run: matching one path against one precompiled regex
and building the decision object (the least work any checker must do per call). It prints
p50 / p95 of each workload, decisions per second, and the ratio p50 / baseline p50.

The engine is built once (rules parsed and patterns compiled in ``__init__``); every
decision afterwards is what a host pays per tool call.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from pegboard.core.config import ConfigLayer
from pegboard.core.decisions import PermissionDecision
from pegboard.core.permissions import PermissionEngine

PATH_GOAL_US = 50.0
BASH_GOAL_US = 300.0


def make_rules() -> dict[str, list[str]]:
    allow = [f"Bash(tool{i} *)" for i in range(50)]  # 50
    allow += [f"Edit(src/pkg{i}/**)" for i in range(30)]  # 30
    allow += [f"WebFetch(domain:site{i}.example.com)" for i in range(10)]  # 10
    allow += ["Bash(npm test *)", "Bash(git log *)", "Bash(echo *)", "Bash(npm run build)", "Bash(make *)"]  # 5
    deny = [f"Bash(danger{i} *)" for i in range(35)]  # 35
    deny += [f"Read(secrets{i}/**)" for i in range(25)]  # 25
    deny += ["Read(.env)", "Read(~/.ssh/**)", "Read(//etc/shadow)", "Bash(rm *)", "Bash(curl *)"]  # 5
    deny += [f"Edit(vendor{i}/**)" for i in range(10)]  # 10
    ask = [f"Bash(deploy{i} *)" for i in range(20)]  # 20
    ask += [f"Read(private{i}/*.pem)" for i in range(10)]  # 10
    total = len(allow) + len(deny) + len(ask)
    assert total == 200, total
    return {"allow": allow, "deny": deny, "ask": ask}


def make_engine() -> PermissionEngine:
    layer = ConfigLayer("project", {"permissions": make_rules()}, path=Path("/proj/.pegboard/settings.json"),
                        root=Path("/proj"))
    return PermissionEngine([layer], cwd=Path("/proj"), home=Path("/home/u"))


def measure(fn: Callable[[], object], n: int) -> list[float]:
    for _ in range(min(200, n)):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) / 1000.0)
    return out


def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000, help="decisions per workload")
    args = parser.parse_args()

    t0 = time.perf_counter()
    engine = make_engine()
    build_ms = (time.perf_counter() - t0) * 1000
    assert not engine.diagnostics, engine.diagnostics

    rx = re.compile(r"proj/src/pkg3/(?:.*)")

    def baseline() -> object:
        m = rx.match("proj/src/pkg3/module.py")
        return PermissionDecision(decision="allow" if m else "ask", reason="baseline")

    path_inputs = [
        ("Read", {"file_path": "/proj/src/pkg7/module.py"}),
        ("Read", {"file_path": "/proj/secrets3/key.txt"}),
        ("Edit", {"file_path": "/proj/src/pkg12/a.py", "old_string": "a", "new_string": "b"}),
        ("Read", {"file_path": "/etc/hosts"}),
    ]
    bash_inputs = [
        "git log -1 && npm test && echo done | tool3 --x; make all",
        "ls -la src && cat README.md | grep TODO; tool9 build && echo ok",
        "npm test; git log --oneline | head -5 && echo $(date) ; danger3 now",
    ]
    expected = {0: "allow", 1: "deny", 2: "allow", 3: "ask"}
    for i, (tool, data) in enumerate(path_inputs):
        got = engine.check(tool, data).decision
        assert got == expected[i], (tool, data, got)

    it = iter(range(10**12))

    def path_decision() -> object:
        tool, data = path_inputs[next(it) % len(path_inputs)]
        return engine.check(tool, data)

    def bash_decision() -> object:
        return engine.check("Bash", {"command": bash_inputs[next(it) % len(bash_inputs)]})

    base = measure(baseline, args.n)
    paths = measure(path_decision, args.n)
    bashes = measure(bash_decision, args.n)
    b50 = statistics.median(base)

    print(f"engine build (200 rules): {build_ms:.1f} ms")
    print(f"{'workload':<26}{'p50 µs':>10}{'p95 µs':>10}{'decisions/s':>14}{'x baseline':>12}")
    for label, samples in (("baseline (1 regex)", base), ("path decision", paths), ("5-part Bash command", bashes)):
        p50 = statistics.median(samples)
        print(f"{label:<26}{p50:>10.1f}{pct(samples, 0.95):>10.1f}{1e6 / statistics.mean(samples):>14,.0f}"
              f"{p50 / b50:>12.1f}")
    p_ok = statistics.median(paths) < PATH_GOAL_US
    b_ok = statistics.median(bashes) < BASH_GOAL_US
    print(f"path p50 goal < {PATH_GOAL_US:.0f} µs: {'met' if p_ok else 'NOT met'}; "
          f"Bash p50 goal < {BASH_GOAL_US:.0f} µs: {'met' if b_ok else 'NOT met'}")


if __name__ == "__main__":
    main()
