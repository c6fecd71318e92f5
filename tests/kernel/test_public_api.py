"""The public API is what docs/python-api.md documents: every name, every ``Pegboard`` member."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import FunctionType

import pytest

import pegboard
from pegboard import Pegboard
from pegboard.testing import isolated_pegboard

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "python-api.md").read_text()
NAMES = sorted(n for n in pegboard.__all__ if n != "__version__")


def test_type_checkers_see_exactly_the_public_table() -> None:
    tree = ast.parse((REPO / "pegboard" / "__init__.py").read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    seen = {(node.module, a.name) for node in guarded.body if isinstance(node, ast.ImportFrom) for a in node.names}
    table = {(module, name) for module, names in pegboard._PUBLIC.items() for name in names}
    assert seen == table


@pytest.mark.parametrize("name", NAMES)
def test_every_public_name_loads_and_is_documented(name: str) -> None:
    value = getattr(pegboard, name)
    assert re.search(rf"`{re.escape(name)}\b", DOC), f"docs/python-api.md does not name {name}"
    if isinstance(value, type | FunctionType):
        assert value.__module__ == "pegboard", f"{name} reports {value.__module__}"


def test_reprs_show_the_public_home() -> None:
    assert repr(pegboard.Tool) == "<class 'pegboard.Tool'>"
    assert pegboard.ToolResult.__module__ == pegboard.tool.__module__ == "pegboard"


def test_types_the_api_returns_are_public() -> None:
    pb = isolated_pegboard()
    assert isinstance(pb.tools(), pegboard.PolicyResult)
    assert all(isinstance(d, pegboard.ToolDecision) for d in pb.tools().decisions)
    assert isinstance(pb.deferred, pegboard.DeferredTools)
    assert isinstance(pb.context().config, pegboard.LoadedConfig)
    assert issubclass(pegboard.RegistrationConflict, pegboard.ToolDefinitionError)


def public_members(pb: Pegboard) -> set[str]:
    return {n for n in dir(pb) if not n.startswith("_")}


def documented_members() -> set[str]:
    return set(re.findall(r"\bpb\.([a-z_]+)\b", DOC))


def test_every_public_member_of_pegboard_is_documented() -> None:
    undocumented = public_members(isolated_pegboard()) - documented_members()
    assert not undocumented, f"document these in docs/python-api.md or make them private: {sorted(undocumented)}"


def test_every_documented_member_of_pegboard_exists() -> None:
    pb = isolated_pegboard()
    documented = documented_members() - {"deferred_load"}
    missing = sorted(n for n in documented if not hasattr(pb, n))
    assert not missing, f"docs/python-api.md names Pegboard members that do not exist: {missing}"
