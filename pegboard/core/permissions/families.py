"""Which rule family each tool answers to, for tools the engine judges by name.

A rule or a ``check`` about a tool that is not installed must still be judged by its family
(``Grep`` by ``Read(...)`` rules, ``Monitor`` by ``Bash(...)`` rules). The rows are data, in
``tool_families.toml`` beside this module, not code; an installed tool's own
``permission_family`` declaration wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pegboard.core.tools import Tool, name_key

#: How a family's specifiers are read.
Kind = Literal["bash", "powershell", "read", "edit", "webfetch", "skill", "agent", "bare"]

#: Family head name -> specifier kind. Families not listed take only the bare name.
FAMILY_KINDS: dict[str, Kind] = {
    "Bash": "bash",
    "PowerShell": "powershell",
    "Read": "read",
    "Edit": "edit",
    "WebFetch": "webfetch",
    "Skill": "skill",
    "Agent": "agent",
}


@dataclass(frozen=True)
class SeedTool:
    """One row of the tool table: its rule family and whether it asks by default."""

    family: str
    requires_permission: bool
    fields: tuple[str, ...] = ()


def _load_table() -> dict[str, SeedTool]:
    """The rows of ``tool_families.toml``, shipped beside this module as package data."""
    import tomllib
    from importlib import resources

    text = resources.files(__package__).joinpath(TABLE_FILE).read_text(encoding="utf-8")
    return {
        name: SeedTool(str(row["family"]), bool(row["requires_permission"]), tuple(row.get("fields", ())))
        for name, row in tomllib.loads(text).items()
    }


#: Tools judged by name when they are not installed: one declarative table, kept as data.
TABLE_FILE = "tool_families.toml"
SEED_TOOLS: dict[str, SeedTool] = _load_table()

_SEED_BY_KEY = {name_key(n): n for n in SEED_TOOLS}

#: Input fields that hold a call's primary content; a ``Tool(param:value)`` rule on them is
#: bypassable (a compound command, another spelling of a path) and gets a warning.
PRIMARY_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url"})

#: Input keys that name the file(s) a path-family tool touches.
PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath", "file", "filename")


def canonical_seed_name(name: str) -> str | None:
    """The known tool ``name`` refers to (case- and separator-insensitively), if any."""
    if name in SEED_TOOLS:
        return name
    return _SEED_BY_KEY.get(name_key(name))


def family_of(name: str, tool: Tool | None = None) -> str:
    """The family a tool answers to: its explicit declaration, else the seed table, else its name."""
    if tool is not None and tool.permission_family:
        return tool.permission_family
    seed = canonical_seed_name(tool.name if tool is not None else name)
    if seed is not None:
        return SEED_TOOLS[seed].family
    return tool.name if tool is not None else name


def kind_of(family: str) -> Kind:
    """How specifiers of ``family`` are read (``bare``: no specifier)."""
    return FAMILY_KINDS.get(family, "bare")


def requires_permission(name: str, tool: Tool | None = None) -> bool:
    """Whether a call asks by default: the tool's declaration, else the seed table, else yes."""
    if tool is not None:
        return tool.requires_permission
    seed = canonical_seed_name(name)
    return SEED_TOOLS[seed].requires_permission if seed is not None else True


def known_fields(name: str, tool: Tool | None = None) -> frozenset[str] | None:
    """Top-level input fields of a tool, when known (``None``: unknown, accept any)."""
    if tool is not None:
        try:
            return frozenset(tool.input_model.model_fields) | frozenset(
                f.alias for f in tool.input_model.model_fields.values() if f.alias
            )
        except Exception:
            return None
    seed = canonical_seed_name(name)
    if seed is not None and SEED_TOOLS[seed].fields:
        return frozenset(SEED_TOOLS[seed].fields)
    return None
