"""Runs in the baseline venv of ``bench_permissions.py --baseline REV``: one engine of that
commit, timing decisions on request.

Reads JSON lines from stdin: first ``{"rules": ..., "path_inputs": ..., "bash_inputs": ...}``,
then ``{"workload": "path" | "bash", "n": N}``, answering each with the N timings in µs (its
caches cleared before each timed call, outside the timing). Uses only what every commit's
kernel has: ``pegboard.core.config.ConfigLayer`` and ``PermissionEngine``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


def caches() -> list[Any]:
    found = []
    for module in list(sys.modules.values()):
        if module is None or not getattr(module, "__name__", "").startswith(("pegboard", "_old")):
            continue
        for name in ("_parse_cached", "_cached_effects", "_generic_effects"):
            cached = getattr(module, name, None)
            if cached is not None and hasattr(cached, "cache_clear"):
                found.append(cached)
    return found


def main() -> None:
    from pegboard.core.config import ConfigLayer
    from pegboard.core.permissions import PermissionEngine

    setup = json.loads(sys.stdin.readline())
    layer = ConfigLayer("project", {"permissions": setup["rules"]}, path=Path("/proj/.pegboard/settings.json"),
                        root=Path("/proj"))
    engine = PermissionEngine([layer], cwd=Path("/proj"), home=Path("/home/u"))
    paths = [(tool, data) for tool, data in setup["path_inputs"]]
    answers = [engine.check(tool, data).decision for tool, data in paths]
    clear = caches()
    print(json.dumps({"answers": answers}), flush=True)
    k = 0
    for line in sys.stdin:
        ask = json.loads(line)
        samples = []
        for _ in range(ask["n"]):
            for cached in clear:
                cached.cache_clear()
            if ask["workload"] == "path":
                tool, data = paths[k % len(paths)]
                t0 = time.perf_counter_ns()
                engine.check(tool, data)
            else:
                command = setup["bash_inputs"][k % len(setup["bash_inputs"])]
                t0 = time.perf_counter_ns()
                engine.check("Bash", {"command": command})
            samples.append((time.perf_counter_ns() - t0) / 1000.0)
            k += 1
        print(json.dumps(samples), flush=True)


if __name__ == "__main__":
    main()
