"""Registries of tools, groups, profiles and provider policies, each entry with its owner plugin."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pegboard.core.permissions.families import default_families
from pegboard.core.permissions.family import FamilyRegistry, PermissionFamily
from pegboard.core.providers import ProviderPolicy
from pegboard.core.sections import ConfigSection, DeclaredSection, SectionEntry
from pegboard.core.tools import Profile, Tool, ToolDefinitionError, name_key, validate_tool_name


class RegistrationConflict(ToolDefinitionError):
    """Two plugins claim the same tool name, alias or profile; neither wins."""


@dataclass(eq=False)
class DeclaredTool:
    """A tool a plugin declared without being imported (``pegboard.core.declarations``): what
    policy needs to know of it. ``load()`` imports its plugin and returns the real ``Tool``."""

    name: str
    owner: str
    load: Callable[[], Tool | None]
    aliases: Sequence[str] = ()
    groups: Sequence[str] = ()
    optional: bool = False
    enabled_by: str | None = None
    server: str | None = None
    permission_family: str | None = None
    #: ``True``: the real tool has an availability check (its plugin is imported to ask);
    #: ``"module:function"``: a check asked by importing only that module
    has_availability: bool | str | Mapping[str, Any] = False
    deferred: bool = False
    loads_deferred: bool = False
    reads_results: bool = False
    #: whether the real tool words its own cut-result note (``Tool.result_note``)
    has_result_note: bool = False

    @property
    def family(self) -> str:
        return self.permission_family or self.name

    @property
    def result_note(self) -> Callable[[str, int, int], str | None] | None:
        """The real tool's ``result_note``, imported only when a result is cut."""
        if not self.has_result_note:
            return None

        def note(ref: str, limit: int, total: int) -> str | None:
            tool = self.load()
            return tool.result_note(ref, limit, total) if tool is not None and tool.result_note else None

        return note

    def unavailable_reason(self, pegboard: Any = None) -> str | None:
        """``None`` for a tool without an availability check; the declared check's answer
        (only its module imported); otherwise the real tool's (its plugin imported to ask)."""
        if not self.has_availability:
            return None
        if not isinstance(self.has_availability, bool):
            from pegboard.core.declarations import resolve_check
            from pegboard.core.tools import ask_availability

            try:
                check = resolve_check(self.has_availability)
            except Exception as exc:
                return f"availability check failed: {type(exc).__name__}: {exc}"
            return ask_availability(check, pegboard)
        tool = self.load()
        if tool is None:
            return f"plugin {self.owner} did not register {self.name} (see pegboard plugins)"
        return tool.unavailable_reason(pegboard)


#: What the catalog lists: a real tool or a declared one.
ToolEntry = Tool | DeclaredTool


@dataclass
class Group:
    name: str
    members: list[str] = field(default_factory=list)
    description: str = ""
    owners: list[str] = field(default_factory=list)
    member_owners: dict[str, str] = field(default_factory=dict)


@dataclass
class Registry:
    """Everything the plugins registered. Names are looked up case- and separator-insensitively."""

    tools: dict[str, Tool] = field(default_factory=dict)
    #: tools declared by plugins not imported yet; ``find`` imports the plugin (``materialize``)
    declared: dict[str, DeclaredTool] = field(default_factory=dict)
    materialize: Callable[[str], None] | None = None
    #: grows whenever a declared plugin is imported (the set of tools stays the same)
    loads: int = 0
    tool_owner: dict[str, str] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)
    profile_owner: dict[str, str] = field(default_factory=dict)
    provider_policies: list[ProviderPolicy] = field(default_factory=list)
    config_sections: dict[str, SectionEntry] = field(default_factory=dict)
    #: families plugins registered in code; the rest come from the process's default ones
    permission_families: FamilyRegistry = field(default_factory=lambda: FamilyRegistry(parent=default_families()))
    #: grows with every registration or removal, so what depends on the registry is cached
    version: int = 0
    #: every tool name and alias -> its tool's name; the owner of each; case-folded -> as written
    _labels: dict[str, str] = field(default_factory=dict)
    _label_owner: dict[str, str] = field(default_factory=dict)
    _folded: dict[str, str] = field(default_factory=dict)
    #: a normal form (``name_key``) -> the names and aliases that have it
    _keys: dict[str, list[str]] = field(default_factory=dict)

    def check_tool(self, tool: Tool, owner: str) -> None:
        """Raise ``RegistrationConflict`` if ``tool``'s name or aliases are taken."""
        if not isinstance(tool, Tool):
            raise ToolDefinitionError(f"register() takes a pegboard.Tool, got {type(tool).__name__}")
        self._check_names(tool.name, tool.aliases, owner)

    def _check_names(self, name: str, aliases: Sequence[str], owner: str) -> None:
        """Raise if ``name`` or one of ``aliases`` is taken (exactly or but for case), or one is
        listed twice. Names that differ only in ``_`` and ``-`` (``send_message``, ``SendMessage``)
        are different tools; a lookup by their shared normal form is then ambiguous."""
        seen: set[str] = set()
        for label in (name, *aliases):
            folded = label.casefold()
            taken = self._folded.get(folded)
            if taken is not None:
                raise RegistrationConflict(
                    f"tool name {label!r} from plugin {owner!r} collides with tool "
                    f"{self._labels[taken]!r} from plugin {self._label_owner[taken]!r}; rename one or disable a plugin"
                )
            key = name_key(label)
            if key in seen:
                raise ToolDefinitionError(f"tool {name!r} lists {label!r} twice (names ignore case, _ and -)")
            seen.add(key)

    def _claim(self, name: str, aliases: Sequence[str], groups: Sequence[str], owner: str) -> None:
        """Take a checked tool's names for ``owner`` and put it in its groups."""
        self.tool_owner[name] = owner
        self.version += 1
        for label in (name, *aliases):
            self._labels[label] = name
            self._label_owner[label] = owner
            self._folded[label.casefold()] = label
            self._keys.setdefault(name_key(label), []).append(label)
        for group in groups:
            self.add_group(group, [name], owner=owner)

    def _release(self, owner: str) -> None:
        """Give up every name ``owner`` holds."""
        for label in [lb for lb, o in self._label_owner.items() if o == owner]:
            del self._labels[label]
            del self._label_owner[label]
            del self._folded[label.casefold()]
            key = name_key(label)
            rest = [lb for lb in self._keys.get(key, ()) if lb != label]
            if rest:
                self._keys[key] = rest
            else:
                self._keys.pop(key, None)

    def canonical(self, name: str) -> str | None:
        """The tool name ``name`` means: an exact name or alias wins; otherwise the name whose
        normal form (case, ``_`` and ``-`` ignored) it shares, if exactly one tool has it."""
        if not isinstance(name, str):
            return None
        exact = self._labels.get(name)
        if exact is not None:
            return exact
        found = {self._labels[label] for label in self._keys.get(name_key(name), ())}
        return found.pop() if len(found) == 1 else None

    def candidates(self, name: str) -> list[str]:
        """The tools sharing ``name``'s normal form when it names more than one (else ``[]``)."""
        if not isinstance(name, str) or self.canonical(name) is not None:
            return []
        found = {self._labels[label] for label in self._keys.get(name_key(name), ())}
        return sorted(found, key=str.casefold) if len(found) > 1 else []

    def add_tool(self, tool: Tool, owner: str) -> None:
        self.check_tool(tool, owner)
        self.tools[tool.name] = tool
        self._claim(tool.name, tool.aliases, tool.groups, owner)

    def add_declared_tool(self, tool: DeclaredTool) -> None:
        """Register a declared tool: its names are taken as a real tool's would be."""
        for label in (tool.name, *tool.aliases):
            validate_tool_name(label)
        self._check_names(tool.name, tool.aliases, tool.owner)
        self.declared[tool.name] = tool
        self._claim(tool.name, tool.aliases, tool.groups, tool.owner)

    def forget_declared(self, owner: str) -> None:
        """Drop what ``owner`` declared before its plugin registers the real objects (groups
        stay: registering them again changes nothing). The version stays: the set is the same."""
        for name in [n for n, t in self.declared.items() if t.owner == owner]:
            del self.declared[name]
            del self.tool_owner[name]
        self._release(owner)
        for name in [n for n, o in self.profile_owner.items() if o == owner]:
            del self.profiles[name]
            del self.profile_owner[name]
        self.provider_policies = [p for p in self.provider_policies if getattr(p, "_owner", None) != owner]
        self.config_sections = {k: s for k, s in self.config_sections.items()
                                if not (isinstance(s, DeclaredSection) and s.owner == owner)}
        self.loads += 1

    def add_permission_family(self, family: PermissionFamily, owner: str) -> None:
        self.version += 1
        self.permission_families.add(family, owner)

    def remove_owner(self, owner: str) -> None:
        self.permission_families.remove_owner(owner)
        """Forget everything ``owner`` registered (a plugin that failed half-way)."""
        self.version += 1
        for name in [n for n, o in self.tool_owner.items() if o == owner]:
            self.tools.pop(name, None)
            self.declared.pop(name, None)
            del self.tool_owner[name]
        self._release(owner)
        for name in [n for n, o in self.profile_owner.items() if o == owner]:
            del self.profiles[name]
            del self.profile_owner[name]
        self.provider_policies = [p for p in self.provider_policies if getattr(p, "_owner", None) != owner]
        self.config_sections = {k: s for k, s in self.config_sections.items() if s.owner != owner}
        for name, group in list(self.groups.items()):
            group.members = [m for m in group.members if group.member_owners.get(m) != owner]
            group.member_owners = {m: o for m, o in group.member_owners.items() if o != owner}
            group.owners = [o for o in group.owners if o != owner]
            if not group.owners:
                del self.groups[name]

    def find(self, name: str) -> Tool | None:
        """The tool registered under ``name`` or one of its aliases, ignoring case, ``_`` and ``-``."""
        exact = self.tools.get(name) if isinstance(name, str) else None
        if exact is not None:  # a registered name is its own key's only tool
            return exact
        canonical = self.canonical(name)
        if canonical is None:
            return None
        found = self.tools.get(canonical)
        if found is None and (declared := self.declared.get(canonical)) is not None and self.materialize:
            self.materialize(declared.owner)
            found = self.tools.get(canonical)
        return found

    def entry(self, name: str) -> ToolEntry | None:
        """The tool or declared tool called ``name`` (or an alias), importing nothing."""
        canonical = self.canonical(name)
        if canonical is None:
            return None
        return self.tools.get(canonical) or self.declared.get(canonical)

    def names(self) -> list[str]:
        """Every registered or declared tool name."""
        return [*self.tools, *self.declared]

    def sorted_entries(self) -> Sequence[ToolEntry]:
        """Registered and declared tools in catalog order, importing nothing."""
        every: dict[str, ToolEntry] = {**self.declared, **self.tools}
        return [every[n] for n in sorted(every, key=str.casefold)]

    def materialize_all(self) -> None:
        """Import every plugin that only declared its tools."""
        for owner in {t.owner for t in self.declared.values()}:
            if self.materialize is not None:
                self.materialize(owner)

    def add_group(self, name: str, members: Iterable[str], description: str = "", *, owner: str) -> None:
        self.version += 1
        if isinstance(name, str) and name.startswith("group:"):
            name = name[len("group:") :]
        validate_tool_name(name, "group name")
        if isinstance(members, str):
            raise ToolDefinitionError(f"group {name!r}: members must be a list of tool names, not a string")
        group = self.groups.setdefault(name, Group(name))
        for member in members:
            if member not in group.members:
                group.members.append(member)
                group.member_owners[member] = owner
        if description and not group.description:
            group.description = description
        if owner not in group.owners:
            group.owners.append(owner)

    def add_config_section(self, section: ConfigSection, owner: str) -> None:
        self.version += 1
        if not isinstance(section, ConfigSection):
            raise ToolDefinitionError(f"register() takes a pegboard.ConfigSection, got {type(section).__name__}")
        self._check_section_key(section.key, owner)
        from dataclasses import replace

        self.config_sections[section.key] = replace(section, owner=owner)

    def _check_section_key(self, key: str, owner: str) -> None:
        """Raise ``RegistrationConflict`` if another plugin registered the section ``key``."""
        other = self.config_sections.get(key)
        if other is not None:
            raise RegistrationConflict(
                f"config section {key!r} from plugin {owner!r} is also registered by plugin "
                f"{other.owner!r}; disable one of them"
            )

    def add_declared_section(self, section: DeclaredSection) -> None:
        """Register a section a plugin declared; its key is taken as a real section's would be."""
        self._check_section_key(section.key, section.owner)
        self.version += 1
        self.config_sections[section.key] = section

    def add_profile(self, profile: Profile, owner: str) -> None:
        self.version += 1
        if not isinstance(profile, Profile):
            raise ToolDefinitionError(f"register() takes a pegboard.Profile, got {type(profile).__name__}")
        if profile.name in self.profiles:
            raise RegistrationConflict(
                f"profile {profile.name!r} from plugin {owner!r} is also registered by plugin "
                f"{self.profile_owner[profile.name]!r}; disable one of them"
            )
        self.profiles[profile.name] = profile
        self.profile_owner[profile.name] = owner

    def add_provider_policy(self, policy: ProviderPolicy, owner: str) -> None:
        self.version += 1
        if not isinstance(policy, ProviderPolicy):
            raise ToolDefinitionError(f"register() takes a pegboard.ProviderPolicy, got {type(policy).__name__}")
        for other in self.provider_policies:
            if other.name == policy.name:
                raise RegistrationConflict(
                    f"provider policy {policy.name!r} from plugin {owner!r} is also registered by "
                    f"plugin {getattr(other, '_owner', '?')!r}"
                )
        object.__setattr__(policy, "_owner", owner)
        self.provider_policies.append(policy)

    def group_members(self) -> dict[str, list[str]]:
        return {name: list(g.members) for name, g in self.groups.items()}

    def sorted_tools(self) -> Sequence[Tool]:
        """Every registered tool as a real ``Tool`` (declared plugins are imported)."""
        self.materialize_all()
        return [self.tools[n] for n in sorted(self.tools, key=str.casefold)]
