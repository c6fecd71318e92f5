"""The kernel names no tool: every tool, and every rule family, comes from a plugin.

A string literal in ``pegboard/`` (docstrings aside) that equals an installed tool's name or
alias, case-sensitively, fails this test, unless ``tool_name_allowlist.txt`` lists it with
the reason (``path:name  reason``, one a line). The list starts empty and should stay so.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pegboard import Pegboard

REPO = Path(__file__).resolve().parents[2]
ALLOWLIST = Path(__file__).with_name("tool_name_allowlist.txt")


def installed_names() -> set[str]:
    pb = Pegboard(cwd=REPO)
    try:
        return {label for tool in pb.registry.sorted_tools() for label in (tool.name, *tool.aliases)}
    finally:
        pb.close()


def docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def tool_names_in_kernel(names: set[str]) -> list[str]:
    hits: list[str] = []
    for path in sorted((REPO / "pegboard").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names \
                    and id(node) not in skip:
                hits.append(f"{path.relative_to(REPO).as_posix()}:{node.value}")
    return hits


def allowed() -> set[str]:
    lines = ALLOWLIST.read_text(encoding="utf-8").splitlines()
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


def test_the_kernel_names_no_installed_tool() -> None:
    names = installed_names()
    assert {"Read", "Bash", "WebFetch"} <= names, "the test needs the built-in tools installed"
    left = sorted(set(tool_names_in_kernel(names)) - allowed())
    assert left == [], f"the kernel names tools (move the logic into a plugin, or list it in {ALLOWLIST.name}): {left}"


def test_the_scan_finds_a_tool_name(tmp_path: Path) -> None:
    tree = ast.parse('"""Read is fine in a docstring."""\nNAME = "Read"\n')
    skip = docstrings(tree)
    found = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == "Read" and id(n) not in skip]
    assert found == ["Read"]
