"""Differential check: the permission engine's answers against an earlier commit's engine.

Run: ``.venv/bin/python benchmarks/compare_permissions.py [--baseline REV]``.

Every acceptance case in ``tests/cases/permission_cases.json`` is asked of both engines in
every mode, with the case's rules, working directories and the installed tools; so are the
benchmark's path and Bash inputs. Any difference in the decision or the deciding rule is
printed and the script exits 1. The baseline engine is loaded from git the way
``bench_permissions.py`` loads it (default: the commit that closed "deny means deny").
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_permissions import BASH_INPUTS, OLD_COMMIT, PATH_INPUTS, make_layer, old_engine_class
from pegboard.core.config import ConfigLayer
from pegboard.core.permissions import PermissionEngine
from tests.permissions.support import installed_tools

REPO = Path(__file__).resolve().parents[1]
MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
HOME = Path("/home/user")


def answer(engine: Any, tool: str, data: dict[str, Any], find: Any) -> tuple[str, str | None]:
    decision = engine.check(tool, data, find(tool))
    return decision.decision, decision.rule


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=OLD_COMMIT, help="the commit whose engine gives the expected answers")
    args = parser.parse_args()
    cases = json.loads((REPO / "tests/cases/permission_cases.json").read_text(encoding="utf-8"))
    cases = cases["cases"] if isinstance(cases, dict) else cases
    find = installed_tools()
    differences: list[str] = []
    asked = 0
    with tempfile.TemporaryDirectory() as tmp:
        old_cls = old_engine_class(args.baseline, Path(tmp))
        for case in cases:
            cwd = Path(case["cwd"])
            layer = ConfigLayer("project", {"permissions": case["rules"]}, path=cwd / ".pegboard/settings.json",
                                root=cwd)
            dirs = [Path(d) for d in case.get("additional_dirs", [])]
            for mode in MODES:
                new = PermissionEngine([layer], cwd=cwd, additional_dirs=dirs, mode=mode, home=HOME, tools=find)
                old = old_cls([layer], cwd=cwd, additional_dirs=dirs, mode=mode, home=HOME, tools=find)
                tool, data = case["tool"], case["input"]
                got, want = answer(new, tool, data, find), answer(old, tool, data, find)
                asked += 1
                if got != want:
                    differences.append(f"{case['id']} [{mode}]: {want} -> {got}")
        layer = make_layer()
        for mode in MODES:
            new = PermissionEngine([layer], cwd=Path("/proj"), home=Path("/home/u"), mode=mode, tools=find)
            old = old_cls([layer], cwd=Path("/proj"), home=Path("/home/u"), mode=mode, tools=find)
            calls = [*PATH_INPUTS, *(("Bash", {"command": c}) for c in BASH_INPUTS)]
            for tool, data in calls:
                got, want = answer(new, tool, data, find), answer(old, tool, data, find)
                asked += 1
                if got != want:
                    differences.append(f"{tool} {data} [{mode}]: {want} -> {got}")
    for line in differences:
        print(line)
    print(f"{asked} answers compared with {args.baseline}: {len(differences)} differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
