"""The permission-family interface: how one rule family of the permission syntax is judged.

``Bash(npm run *)``, ``Read(src/**)``, ``WebFetch(domain:example.com)``: each family reads its
own specifiers and judges a call's subjects against them. The engine keeps what is common to
every family (rule layers and sources, modes, working directories, protected paths, the path
and inode check, the decision record) and asks the family for the rest, through this one
small protocol. A distribution provides a family with the ``register_permission_families``
hook or the ``pegboard.permission_families`` entry point (name = the family's head).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pegboard.core.permissions.rules import Rule

if TYPE_CHECKING:
    from pegboard.core.permissions.pathdecisions import PathDecisions
    from pegboard.core.permissions.suggest import RuleSuggestion
    from pegboard.core.tools import Tool

#: One reading of a rule's specifier: ``("bare", None)`` (every call), ``("param", (name,
#: value))`` (a ``param:value`` rule on an input field), ``("path", pattern)`` (a gitignore
#: pattern the engine compiles and matches, shared with the path check), or ``("own", data)``,
#: which only the family understands and which it gets back in :meth:`PermissionFamily.compile`.
Reading = tuple[str, Any]


@dataclass(frozen=True)
class FamilyTool:
    """A tool a family judges by name whether or not it is installed (``Monitor`` by
    ``Bash(...)`` rules): whether a call asks by default, and its input fields."""

    requires_permission: bool
    fields: tuple[str, ...] = ()


@dataclass
class Outcome:
    """What a family found for one call; the engine turns it into a decision with the mode.

    ``note`` records rule hits (the first deny, ask and allow each win); ``might_apply``
    records a deny or ask rule that may cover a part of the call nobody can see (a hard ask
    in every mode). ``default_ok`` approves by the family's own default; ``unapproved`` is
    the reason an unapproved call asks.
    """

    deny: tuple[Rule, str] | None = None
    refuse: str | None = None  # denied without a rule (a command with raw control characters)
    ask: tuple[Rule, str] | None = None
    might: tuple[Rule, str] | None = None  # a deny or ask rule may apply to what cannot be seen
    might_files_only: bool = False  # ... and only file deny rules may (an OS sandbox enforces them)
    hard_ask: str | None = None
    protected: str | None = None
    allow: tuple[Rule, str] | None = None
    default_ok: str | None = None  # approved by the tool's default / read-only set
    unapproved: str = ""
    is_edit: bool = False
    edit_in_scope: bool = False
    edit_reason: str = ""

    def might_apply(self, rule: Rule, reason: str) -> None:
        """Record the first rule that may cover a part of the call the engine cannot see."""
        if self.might is None:
            self.might = (rule, f"{reason}; {rule.text} might apply")

    def note(self, lst: str, rule: Rule, reason: str) -> None:
        """Record a rule hit: the first deny, the first ask and the first allow each win."""
        if lst == "deny":
            self.deny = self.deny or (rule, reason)
        elif lst == "ask":
            self.ask = self.ask or (rule, reason)
        elif self.allow is None:
            self.allow = (rule, reason)


class FamilyContext(Protocol):
    """What the engine offers every family while it judges a call."""

    mode: str
    cwd: str
    home: str
    windows: bool
    #: the path and inode check: Read/Edit verdicts for any path, working directories, links
    decisions: PathDecisions

    def requires_permission(self, name: str, tool: Tool | None = None) -> bool:
        """Whether a call of ``name`` asks by default (its declaration, else its family's)."""
        ...


@dataclass
class FamilyCall:
    """One call as a family sees it: the tool's name and input, the installed tool (or
    ``None`` for a tool judged by name), the family's compiled rules per list (``deny``,
    ``ask``, ``allow``: what :meth:`PermissionFamily.compile` returned), the path rules that
    apply to the tool (``paths``, per list, matched with ``context.decisions.rule``), and the
    engine's context."""

    name: str
    data: Mapping[str, Any]
    tool: Tool | None
    rules: Mapping[str, Any]
    paths: Mapping[str, Any]
    context: FamilyContext


@runtime_checkable
class PermissionFamily(Protocol):
    """One rule family: the tools and rule names it owns, how it reads a specifier, how it
    judges a call against its rules.

    Attributes: ``name`` (the head, ``"Bash"``); ``asks`` (whether a call of the head asks by
    default); ``fields`` (the head's input fields); ``tools`` (further tools it judges by name
    when they are not installed: ``{"Monitor": FamilyTool(True, ("command",))}``);
    ``file_rules`` (``"read"`` or ``"write"`` when its path rules are the ones the kernel's
    path check uses for reading or writing files, else ``None``); ``borrows`` (rules of other
    families that also apply, per list: a Read allow from Edit rules).
    """

    name: str
    asks: bool
    fields: tuple[str, ...]
    tools: Mapping[str, FamilyTool]
    file_rules: Literal["read", "write"] | None
    borrows: Mapping[str, tuple[str, ...]]

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        """How ``rule``'s specifier reads (``rule.specifier`` is not ``None``); ``note`` reports
        a problem with the rule (shown by ``config validate``). An empty list ignores the rule."""
        ...

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        """The family's matcher for one list from its ``("own", data)`` readings."""
        ...

    def judge(self, call: FamilyCall) -> Outcome:
        """What the family finds for one call (bare and parameter rules are already judged)."""
        ...


class SuggestsRules(Protocol):
    """A family that can name the narrowest allow rules for a call (optional)."""

    def suggest(
        self, family: str, data: Mapping[str, Any], cwd: Path, allows: Callable[[Sequence[str]], bool]
    ) -> RuleSuggestion | None:
        """Rules of ``family`` that would allow this call, narrowest first; ``allows`` checks
        a candidate with the real engine. ``None``: fall back to the bare family name."""
        ...


class ListsPaths(Protocol):
    """A file family that says which paths a call names (optional; the engine then keeps a
    read's decision while the paths resolve the same)."""

    def input_paths(self, name: str, data: Mapping[str, Any]) -> tuple[list[str], bool]:
        """The raw paths the call touches, and whether that list is complete."""
        ...


def parameter_reading(
    rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None], *, primary: Iterable[str] = ()
) -> list[Reading]:
    """A ``param:value`` rule as a parameter reading: deny and ask lists only (an allow
    rule on one field would approve what the other fields do), with a warning for a field
    that holds the call's primary content (``primary``)."""
    param = rule.param()
    assert param is not None
    if rule.lst == "allow":
        note("parameter rules (param:value) work only in deny and ask lists (ignored)")
        return []
    if param[0] in set(primary):
        note(f"'{param[0]}' is the call's primary content; a parameter rule on it is easy to bypass "
             "(applied to the literal value)")
    return [("param", param)]


_FAMILY_MEMBERS = ("name", "asks", "fields", "tools", "file_rules", "borrows", "parse", "compile", "judge")


@dataclass
class FamilyRegistry:
    """The families the engine knows, by head name; ``loaders`` are entry points not imported
    yet (a family's module is imported when a rule or a call first needs it)."""

    families: dict[str, PermissionFamily] = field(default_factory=dict)
    loaders: dict[str, Callable[[], Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: families this registry does not have come from here (the process's default ones)
    parent: FamilyRegistry | None = None
    owners: dict[str, str] = field(default_factory=dict)
    #: ``read`` / ``write`` -> the head of a family not imported yet whose path rules the
    #: path check uses (entry-point group ``pegboard.file_rules``)
    declared_file_rules: dict[str, str] = field(default_factory=dict)
    #: families the parent has that this registry must not use, with why (``plugins.disabled``)
    blocked: dict[str, str] = field(default_factory=dict)
    #: head -> the entry point that declares it (blocked ones too), as found at start
    sources: dict[str, Any] = field(default_factory=dict)

    def add(self, family: PermissionFamily, owner: str = "") -> None:
        """Add ``family`` (one registered here replaces the parent's of the same name)."""
        if not isinstance(family, PermissionFamily):
            missing = [a for a in _FAMILY_MEMBERS if not hasattr(family, a)]
            raise TypeError(
                f"register() takes a permission family; {type(family).__name__} lacks {', '.join(missing)} "
                f"(a family has {', '.join(_FAMILY_MEMBERS)})"
            )
        if not isinstance(family.name, str) or not family.name:
            raise TypeError(f"a permission family needs a name, got {family.name!r}")
        self.families[family.name] = family
        if owner:
            self.owners[family.name] = owner

    def remove_owner(self, owner: str) -> None:
        for name in [n for n, o in self.owners.items() if o == owner]:
            self.families.pop(name, None)
            self.owners.pop(name, None)

    def get(self, name: str) -> PermissionFamily | None:
        found = self.families.get(name)
        if found is None and name not in self.loaders and self.parent is not None:
            return None if name in self.blocked else self.parent.get(name)
        if found is None and name in self.loaders:
            load = self.loaders.pop(name)
            try:
                made = load()
                self.add(made() if isinstance(made, type) else made)
            except Exception as exc:  # a broken family plugin must not break permission checks
                self.problems.append(f"permission family {name!r} cannot load: {type(exc).__name__}: {exc}")
            found = self.families.get(name)
        return found

    def file_heads(self) -> dict[str, str]:
        """``read`` / ``write`` -> the family whose path rules govern reading or writing files,
        known without importing a family that is not loaded yet."""
        heads = dict(self.parent.file_heads()) if self.parent is not None else {}
        heads = {which: head for which, head in heads.items() if head not in self.blocked}
        heads.update(self.declared_file_rules)
        for family in self.families.values():
            if family.file_rules is not None:
                heads[family.file_rules] = family.name
        return heads

    def names(self) -> list[str]:
        mine = {*self.families, *self.loaders}
        inherited = {n for n in self.parent.names() if n not in self.blocked} if self.parent is not None else set()
        return sorted(mine | inherited)

    def declared(self, name: str) -> bool:
        """Whether some family of that head is known (without importing it)."""
        mine = name in self.families or name in self.loaders
        return mine or (self.parent is not None and name not in self.blocked and self.parent.declared(name))


__all__ = [
    "FamilyCall",
    "FamilyContext",
    "FamilyRegistry",
    "FamilyTool",
    "ListsPaths",
    "Outcome",
    "PermissionFamily",
    "Reading",
    "SuggestsRules",
    "parameter_reading",
]
