"""The tool-families table is data, and the installed tools agree with their rows' families."""

from __future__ import annotations

import tomllib
from importlib import resources

from pegboard import Pegboard
from pegboard.core.permissions.families import SEED_TOOLS, TABLE_FILE, family_of


def test_the_table_is_package_data() -> None:
    text = resources.files("pegboard.core.permissions").joinpath(TABLE_FILE).read_text(encoding="utf-8")
    rows = tomllib.loads(text)
    assert list(rows) == list(SEED_TOOLS)
    assert SEED_TOOLS["Grep"].family == "Read" and SEED_TOOLS["Monitor"].family == "Bash"
    assert SEED_TOOLS["LSP"].family == "Read" and SEED_TOOLS["Workflow"].requires_permission is True


def test_installed_tools_declare_the_family_of_their_rows() -> None:
    """Rules are read by the table before any tool is looked up, so an installed tool's own
    family must be its row's. (Whether it asks may differ: ExitPlanMode asks through the host.)"""
    pb = Pegboard(layers=[])
    try:
        for name, row in SEED_TOOLS.items():
            tool = pb.tool(name)
            if tool is None:
                continue
            assert family_of(name, tool) == row.family, name
    finally:
        pb.close()
