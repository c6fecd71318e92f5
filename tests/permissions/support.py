"""Helpers for the permission tests: the shared cases, and engines built like the kernel does."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pegboard.core.config import ConfigLayer
from pegboard.core.permissions import PermissionEngine
from pegboard.core.tools import Tool
from tests.casefiles import CASES_DIR

REPO = Path(__file__).resolve().parents[2]
HOME = Path("/home/u")


@lru_cache(maxsize=1)
def installed_tools() -> Callable[[str], Tool | None]:
    """Finds the installed built-in tools by name, as the kernel's engines do: their own
    declarations (``Grep`` answers to ``Read(...)`` rules) are what the engine reads."""
    from pegboard import Pegboard

    pb = Pegboard(layers=[])
    find = pb.registry.find
    pb.close()
    return find


def permission_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((CASES_DIR / "permission_cases.json").read_text("utf-8"))
    return cases


def project_layer(rules: Mapping[str, Any], cwd: str | Path = "/proj") -> ConfigLayer:
    root = Path(cwd)
    return ConfigLayer("project", {"permissions": dict(rules)}, path=root / ".pegboard/settings.json", root=root)


def engine(
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    *,
    mode: str = "default",
    cwd: str | Path = "/proj",
    add: Sequence[str | Path] = (),
    home: Path = HOME,
    extra: Mapping[str, Any] | None = None,
) -> PermissionEngine:
    rules: dict[str, Any] = {"allow": list(allow), "ask": list(ask), "deny": list(deny), **(extra or {})}
    return PermissionEngine([project_layer(rules, cwd)], cwd=Path(cwd), additional_dirs=list(add), mode=mode,
                            home=home, tools=installed_tools())


def decide(e: PermissionEngine, tool: str, **tool_input: Any) -> str:
    return e.check(tool, tool_input).decision


def bash(e: PermissionEngine, command: str) -> str:
    return e.check("Bash", {"command": command}).decision
