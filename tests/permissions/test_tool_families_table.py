"""The tool-families table is data for tools still to come; installed tools declare their own."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pegboard import ConfigLayer, Pegboard, Tool, ToolContext, ToolResult
from pegboard.core.permissions.families import SEED_TOOLS, TABLE_FILE, Families


def test_the_table_is_package_data() -> None:
    text = resources.files("pegboard.core.permissions").joinpath(TABLE_FILE).read_text(encoding="utf-8")
    rows = tomllib.loads(text)
    assert list(rows) == list(SEED_TOOLS)
    assert SEED_TOOLS["Workflow"].requires_permission is True


def test_no_row_names_an_installed_tool() -> None:
    """A built tool's row goes when it comes: the registry answers for it."""
    from pegboard_mcp_client.tools import SHARED_TOOLS  # registered once an MCP server is configured

    pb = Pegboard(layers=[])
    try:
        installed = {n for n in SEED_TOOLS if pb.tool(n) is not None}
        installed |= {t.name for t in SHARED_TOOLS if t.name in SEED_TOOLS}
        assert installed == set()
    finally:
        pb.close()


def test_installed_tools_are_asked_for_their_family() -> None:
    pb = Pegboard(layers=[])
    try:
        families = Families(pb.registry.find)
        assert families.family_of("Grep") == "Read" and families.family_of("grep") == "Read"
        assert families.family_of("Monitor") == "Bash" and families.family_of("NotebookEdit") == "Edit"
        assert families.canonical("task") == "Agent"
        assert families.family_of("LSP") == "Read"  # not built yet: its row
        assert families.family_of("Unheard") == "Unheard" and families.requires_permission("Unheard")
    finally:
        pb.close()


class _Query(BaseModel):
    query: str
    path: str = "."


async def _search(args: _Query, ctx: ToolContext) -> ToolResult:
    return ToolResult.from_text(args.query)


def test_a_plugin_tool_of_the_read_family_is_judged_by_its_declaration(tmp_path: Path) -> None:
    """A third-party tool that declares ``permission_family="Read"`` answers to Read rules, and a
    path rule written with its own name is a Read rule, as the built-in Grep's are."""
    search = Tool(name="CodeSearch", description="search", input_model=_Query, run=_search,
                  permission_family="Read")
    deny: dict[str, Any] = {"permissions": {"deny": ["CodeSearch(secret/**)"]}}
    pb = Pegboard(layers=[ConfigLayer("code", deny, root=tmp_path)], cwd=tmp_path, load_entrypoints=False)
    try:
        pb.add_tool(search, owner="test")
        assert pb.check("CodeSearch", {"query": "x", "path": "secret/a"}).decision == "deny"
        assert pb.check("Read", {"file_path": str(tmp_path / "secret/a")}).decision == "deny"
        assert pb.check("CodeSearch", {"query": "x", "path": "src"}).decision == "allow"
    finally:
        pb.close()


def test_an_engine_is_rebuilt_when_a_tool_arrives(tmp_path: Path) -> None:
    deny: dict[str, Any] = {"permissions": {"deny": ["CodeSearch(secret/**)"]}}
    pb = Pegboard(layers=[ConfigLayer("code", deny, root=tmp_path)], cwd=tmp_path, load_entrypoints=False)
    try:
        before = pb.check("Read", {"file_path": str(tmp_path / "secret/a")}).decision
        pb.add_tool(Tool(name="CodeSearch", description="search", input_model=_Query, run=_search,
                         permission_family="Read"), owner="test")
        after = pb.check("Read", {"file_path": str(tmp_path / "secret/a")}).decision
        assert (before, after) == ("allow", "deny")
    finally:
        pb.close()
