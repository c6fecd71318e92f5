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

from pegboard.core.permissions.family import FamilyRegistry, FamilyTool, PermissionFamily
from pegboard.core.tools import Tool, name_key


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

#: Input fields that hold a call's primary content; a ``Tool(param:value)`` rule on them is
#: bypassable (a compound command, another spelling of a path) and gets a warning.
PRIMARY_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url"})


#: Finds an installed tool by name or alias (``Registry.find``); the engine asks it first.
ToolLookup = Callable[[str], "Tool | None"]


class Families:
    """What the engine knows of a tool it judges by name: an installed tool's own
    declarations (found through ``lookup``) first, then the families' own tools and the
    table of tools still to come, then the bare name (its own family, asks by default)."""

    def __init__(self, lookup: ToolLookup | None = None, registry: FamilyRegistry | None = None) -> None:
        self._lookup = lookup
        self._registry = registry
        self._owned: dict[str, tuple[str, FamilyTool]] | None = None
        self._by_key: dict[str, str] | None = None

    @property
    def registry(self) -> FamilyRegistry:
        """The families to consult (the process's default ones unless given)."""
        if self._registry is None:
            self._registry = default_families()
        return self._registry

    def family(self, name: str) -> PermissionFamily | None:
        """The family object of head ``name`` (imported on first need), or ``None`` for a
        family no installed plugin provides (its rules take the bare name only)."""
        return self.registry.get(name)

    def _rows(self) -> dict[str, tuple[str, FamilyTool]]:
        """Tools judged by name when not installed: each family's own, then the table's."""
        if self._owned is None:
            owned: dict[str, tuple[str, FamilyTool]] = {}
            for head in self.registry.names():
                found = self.registry.families.get(head)
                for tool, row in (found.tools.items() if found is not None else ()):
                    owned.setdefault(tool, (head, row))
            for tool, seed in SEED_TOOLS.items():
                owned.setdefault(tool, (seed.family, FamilyTool(seed.requires_permission, seed.fields)))
            self._owned = owned
        return self._owned

    def _table_name(self, name: str) -> str | None:
        """The known tool or family head ``name`` spells (case- and separator-insensitively)."""
        if name in self._rows() or self.registry.declared(name):
            return name
        if self._by_key is None:
            self._by_key = {name_key(n): n for n in (*self.registry.names(), *self._rows())}
        return self._by_key.get(name_key(name))

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
        return tool.name if tool is not None else self._table_name(name)

    def family_of(self, name: str, tool: Tool | None = None) -> str:
        """The family a tool answers to: its declaration, else its row, else its name."""
        tool = tool or self.installed(name)
        if tool is not None and tool.permission_family:
            return tool.permission_family
        seed = self._table_name(tool.name if tool is not None else name)
        if seed is not None:
            row = self._rows().get(seed)
            return row[0] if row is not None else seed
        return tool.name if tool is not None else name

    def requires_permission(self, name: str, tool: Tool | None = None) -> bool:
        """Whether a call asks by default: the tool's declaration, else its row, else its
        family head's default, else yes."""
        tool = tool or self.installed(name)
        if tool is not None:
            return tool.requires_permission
        seed = self._table_name(name)
        if seed is None:
            return True
        row = self._rows().get(seed)
        if row is not None:
            return row[1].requires_permission
        head = self.family(seed)
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
        seed = self._table_name(name)
        if seed is None:
            return None
        row = self._rows().get(seed)
        if row is not None:
            return frozenset(row[1].fields) if row[1].fields else None
        head = self.family(seed)
        return frozenset(head.fields) if head is not None and head.fields else None

    def known_names(self) -> list[str]:
        """Every family head and tool judged by name, for "did you mean"."""
        return sorted({*self.registry.names(), *self._rows()})


def default_families() -> FamilyRegistry:
    """The process's families: every ``pegboard.permission_families`` entry point, each
    imported only when a rule or a call needs that family. The kernel ships none."""
    global _DEFAULT
    if _DEFAULT is None:
        from pegboard.core.entrypoints import entry_points
        from pegboard.core.selection import PluginSelection

        registry = FamilyRegistry()
        selection = PluginSelection.from_settings()
        for ep in entry_points(FAMILY_ENTRY_POINTS):
            registry.sources.setdefault(ep.name, ep)
        for name, ep in registry.sources.items():
            if not selection.blocked_reason(ep.dist_name, ep.name):
                registry.loaders[name] = ep.load
        heads = {ep.value: name for name, ep in registry.sources.items()}
        for ep in entry_points(FILE_RULES_ENTRY_POINTS):
            if ep.name in ("read", "write") and heads.get(ep.value) in registry.loaders:
                registry.declared_file_rules.setdefault(ep.name, heads[ep.value])
        _DEFAULT = registry
    return _DEFAULT


def family_listing(registry: FamilyRegistry | None = None) -> list[dict[str, str | None]]:
    """Every rule family, for ``pegboard plugins``: its head, the distribution (or plugin)
    that provides it, and ``available`` (not imported yet), ``loaded``, ``failed`` with the
    error, or ``blocked`` (``plugins.disabled`` or the environment)."""
    from pegboard.core.selection import PluginSelection

    registry = registry if registry is not None else default_families()
    selection = PluginSelection.from_settings()
    rows: dict[str, dict[str, str | None]] = {}
    for ep in default_families().sources.values():
        blocked = selection.blocked_reason(ep.dist_name, ep.name)
        rows[ep.name] = {"name": ep.name, "distribution": ep.dist_name, "status": "blocked" if blocked else "available",
                         "error": blocked}
    chain: list[FamilyRegistry] = []
    current: FamilyRegistry | None = registry
    while current is not None:
        chain.append(current)
        current = current.parent
    for level in reversed(chain):
        for name, why in level.blocked.items():
            if name in rows:
                rows[name]["status"], rows[name]["error"] = "blocked", why
        for name in level.families:
            row = rows.setdefault(name, {"name": name, "distribution": None, "status": "loaded", "error": None})
            row["status"] = "loaded"
            if name in level.owners:
                row["distribution"] = f"plugin {level.owners[name]}"
        for problem in level.problems:
            head = problem.split("'")[1] if problem.count("'") >= 2 else ""
            if head in rows:
                rows[head]["status"], rows[head]["error"] = "failed", problem
    return [rows[name] for name in sorted(rows)]


_DEFAULT: FamilyRegistry | None = None
#: Entry-point group of permission families: name = the family's head, value = ``module:Class``.
FAMILY_ENTRY_POINTS = "pegboard.permission_families"
#: Which of them hold the path rules for reading and writing files: name = ``read`` or
#: ``write``, value = the same ``module:Class`` as the family's own entry point.
FILE_RULES_ENTRY_POINTS = "pegboard.file_rules"

#: What is known without an installed tool to ask: the families and the table alone.
TABLE_ONLY = Families()
