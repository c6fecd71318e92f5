"""Meta-tests: every hook is documented with its exact arguments and exercised by a test."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from pegboard import hookspecs

REPO = Path(__file__).resolve().parents[2]
HOOKS = sorted(hookspecs.__all__)


def test_all_lists_exactly_the_hookspecs() -> None:
    marked = {n for n, f in vars(hookspecs).items() if callable(f) and hasattr(f, "pegboard_spec")}
    assert marked == set(HOOKS)


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_full_docstring(name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, name)) or ""
    assert "Example::" in doc, f"{name} needs an example"
    assert len(doc.splitlines()) >= 5


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_with_its_exact_arguments(name: str) -> None:
    docs = "\n".join(p.read_text() for p in (REPO / "docs").glob("*.md"))
    args = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
    assert f"### `{name}({args})`" in docs, f"docs/ needs a heading for {name}({args})"


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_exercised_by_a_test(name: str) -> None:
    pattern = re.compile(rf"(def {name}\(|\b{name}=)")
    sources = [p for p in (REPO / "tests").rglob("*.py") if p.name != Path(__file__).name]
    assert any(pattern.search(p.read_text()) for p in sources), f"no test implements {name}"
