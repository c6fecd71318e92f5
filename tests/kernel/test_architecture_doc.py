"""docs/architecture.md names real places: every file or folder it puts in backticks exists,
every hook it sends a new piece to is in the contract, and the README links it."""

from __future__ import annotations

import re
from pathlib import Path

import pegboard.hookspecs

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"


def named_paths() -> list[str]:
    quoted = re.findall(r"`([\w./<>-]+)`", DOC.read_text(encoding="utf-8"))
    return sorted({q for q in quoted if "/" in q or q.endswith(".py")})


def test_every_path_the_map_names_exists() -> None:
    paths = named_paths()
    assert len(paths) > 20
    missing = []
    for path in paths:
        if "<" in path:  # a pattern such as builtin_tools/<tool>/: its folder exists and is not empty
            base = REPO / path.split("<", 1)[0]
            if not base.is_dir() or not any(base.iterdir()):
                missing.append(path)
            continue
        candidates = [REPO / path, REPO / "pegboard" / path]
        if not any(c.exists() for c in candidates):
            missing.append(path)
    assert missing == []


def test_the_hooks_it_names_are_in_the_contract_or_being_added() -> None:
    text = DOC.read_text(encoding="utf-8")
    hook = r"`(register_\w+|session_store|exec_backend|pre_tool_use|post_tool_use|check_permission)"
    hooks = set(re.findall(hook, text))
    contract = {name for name in dir(pegboard.hookspecs) if not name.startswith("_")}
    assert hooks - contract <= {"register_permission_families"}, hooks - contract
    assert {"register_tools", "session_store", "exec_backend"} <= hooks


def test_the_readme_links_it_under_documentation() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    assert "(docs/architecture.md)" in section
