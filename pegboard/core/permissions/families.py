"""Which rule family each tool answers to, for tools the engine judges by name.

A rule or a ``check`` about a tool that is not installed must still be judged by its family
(``Grep`` by ``Read(...)`` rules, ``Monitor`` by ``Bash(...)`` rules). The rows are data, in
``tool_families.toml`` beside this module, not code, and hold only tools that are not built
yet: an installed tool is asked for its own declarations (``permission_family``,
``requires_permission``, its input model) through the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pegboard.core.tools import Tool, name_key

#: How a family's specifiers are read.
Kind = Literal["bash", "powershell", "read", "edit", "webfetch", "skill", "agent", "bare"]

@dataclass(frozen=True)
class Family:
    """A rule family of the permission syntax (``Read(...)``, ``Bash(...)``): how its specifiers
    are read, whether a call of its own head tool asks by default, and that tool's input
    fields. Subjects are judged as calls of these heads (a patch's files as ``Edit``), whether
    or not a tool of that name is installed."""

    kind: Kind
    asks: bool
    fields: tuple[str, ...] = ()


#: The families whose specifiers mean something; every other family takes only the bare name.
FAMILIES: dict[str, Family] = {
    "Bash": Family("bash", True, ("command", "timeout", "description", "run_in_background",
                                  "dangerouslyDisableSandbox")),
    "PowerShell": Family("powershell", True, ("command", "timeout", "description", "run_in_background")),
    "Read": Family("read", False, ("file_path", "offset", "limit", "pages")),
    "Edit": Family("edit", True, ("file_path", "old_string", "new_string", "replace_all")),
    "WebFetch": Family("webfetch", True, ("url", "prompt")),
    "Skill": Family("skill", True, ("skill", "args")),
    "Agent": Family("agent", False, ("description", "prompt", "subagent_type", "model", "run_in_background")),
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

_SEED_BY_KEY = {name_key(n): n for n in (*FAMILIES, *SEED_TOOLS)}

#: Input fields that hold a call's primary content; a ``Tool(param:value)`` rule on them is
#: bypassable (a compound command, another spelling of a path) and gets a warning.
PRIMARY_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url"})

#: Input keys that name the file(s) a path-family tool touches.
PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath", "file", "filename")


def _table_name(name: str) -> str | None:
    """The table's row or the family head ``name`` spells (case- and separator-insensitively)."""
    if name in SEED_TOOLS or name in FAMILIES:
        return name
    return _SEED_BY_KEY.get(name_key(name))


#: Finds an installed tool by name or alias (``Registry.find``); the engine asks it first.
ToolLookup = Callable[[str], "Tool | None"]


class Families:
    """What the engine knows of a tool it judges by name: an installed tool's own
    declarations (found through ``lookup``) first, then the table of tools still to come,
    then the bare name (its own family, asks by default)."""

    def __init__(self, lookup: ToolLookup | None = None) -> None:
        self._lookup = lookup

    def installed(self, name: str) -> Tool | None:
        """The installed tool ``name`` (or an alias of it) refers to, if a lookup was given."""
        if self._lookup is None or not isinstance(name, str):
            return None
        try:
            return self._lookup(name)
        except Exception:  # a broken lookup must not break a permission check
            return None

    def canonical(self, name: str) -> str | None:
        """The known tool ``name`` refers to (case- and separator-insensitively), if any."""
        tool = self.installed(name)
        return tool.name if tool is not None else _table_name(name)

    def family_of(self, name: str, tool: Tool | None = None) -> str:
        """The family a tool answers to: its declaration, else the table's row, else its name."""
        tool = tool or self.installed(name)
        if tool is not None and tool.permission_family:
            return tool.permission_family
        seed = _table_name(tool.name if tool is not None else name)
        if seed is not None:
            return SEED_TOOLS[seed].family if seed in SEED_TOOLS else seed
        return tool.name if tool is not None else name

    def requires_permission(self, name: str, tool: Tool | None = None) -> bool:
        """Whether a call asks by default: the tool's declaration, else the table's row, else yes."""
        tool = tool or self.installed(name)
        if tool is not None:
            return tool.requires_permission
        seed = _table_name(name)
        if seed in SEED_TOOLS:
            return SEED_TOOLS[seed].requires_permission
        head = FAMILIES.get(seed) if seed is not None else None
        return head.asks if head is not None else True

    def known_fields(self, name: str, tool: Tool | None = None) -> frozenset[str] | None:
        """Top-level input fields of a tool, when known (``None``: unknown, accept any)."""
        tool = tool or self.installed(name)
        if tool is not None:
            try:
                return frozenset(tool.input_model.model_fields) | frozenset(
                    f.alias for f in tool.input_model.model_fields.values() if f.alias
                )
            except Exception:
                return None
        seed = _table_name(name)
        if seed in SEED_TOOLS and SEED_TOOLS[seed].fields:
            return frozenset(SEED_TOOLS[seed].fields)
        head = FAMILIES.get(seed) if seed is not None else None
        return frozenset(head.fields) if head is not None and head.fields else None


#: What is known without an installed tool to ask: the table alone.
TABLE_ONLY = Families()


def kind_of(family: str) -> Kind:
    """How specifiers of ``family`` are read (``bare``: no specifier)."""
    head = FAMILIES.get(family)
    return head.kind if head is not None else "bare"
