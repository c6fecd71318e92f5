"""Tool policy: which tools an agent sees.

The engine is pure (no I/O, no clock, no environment): it takes a :class:`PolicyCatalog`
describing what is registered and the merged :class:`PegboardConfig`, and returns for every
tool whether it is enabled and which step decided, with a reason a person can read.

Steps, in the order a tool meets them (the first that removes a tool is the one reported):

``provider-policy``
    a provider policy removes the tool on this provider, or the tool exists only on
    other providers (``ProviderPolicy.exclusive``). Nothing is removed when no provider
    is given.
``deny``
    an entry of ``tools.deny``, the agent's ``deny`` or a matching ``byProvider`` entry's
    ``deny`` names the tool. Deny wins over everything that allowed it.
``profile`` / ``allow`` / ``agent``
    the base allowlist: the profile's entries plus ``allow`` and ``alsoAllow``; without a
    restricting profile a non-empty ``allow`` is the allowlist. ``agent`` when an agent's
    own ``tools`` block supplies the allowlist.
``byProvider``
    the ``tools.byProvider`` (and agent ``byProvider``) entry for ``provider/model`` or
    else ``provider``; it can only narrow.
``subagent``
    a subagent's ``tools`` keeps only those; its ``disallowedTools`` removes.
``optional``
    an optional tool is enabled only when an allowlist names it exactly (name or alias),
    never through ``*`` or a group.
``availability``
    the tool passed the policy but cannot run here (missing binary, key, platform).

Matching ignores case, ``_`` and ``-``; ``*`` is the only wildcard and is anchored;
``group:<name>`` expands to the group's members; aliases resolve to their tool.
"""

from __future__ import annotations

import difflib
import functools
import re
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pegboard.core.config import PegboardConfig, ProviderToolPolicy, SubagentConfig, ToolPolicyConfig
from pegboard.core.providers import ProviderPolicy, provider_keys
from pegboard.core.tools import name_key

__all__ = [
    "STEPS",
    "PolicyCatalog",
    "PolicyResult",
    "PolicyTool",
    "ToolDecision",
    "format_explain",
    "parse_tool_list",
    "policy_problems",
    "provider_keys",
    "provider_policy_applies",
    "resolve_policy",
    "select_by_provider",
    "validate_policy_config",
]

STEP_PROVIDER_POLICY = "provider-policy"
STEP_DENY = "deny"
STEP_PROFILE = "profile"
STEP_ALLOW = "allow"
STEP_AGENT = "agent"
STEP_BY_PROVIDER = "byProvider"
STEP_SUBAGENT = "subagent"
STEP_OPTIONAL = "optional"
STEP_AVAILABILITY = "availability"
STEP_DEFAULT = "default"
STEPS: tuple[str, ...] = (
    STEP_PROVIDER_POLICY,
    STEP_DENY,
    STEP_PROFILE,
    STEP_ALLOW,
    STEP_AGENT,
    STEP_BY_PROVIDER,
    STEP_SUBAGENT,
    STEP_OPTIONAL,
    STEP_AVAILABILITY,
    STEP_DEFAULT,
)

#: the phrase every "this entry names nothing" warning carries (tests and tools grep for it)
UNKNOWN_MARKER = "match no tool"

#: ``name_key`` with a cache: the same names are normalised on every resolution
_key = functools.lru_cache(maxsize=16384)(name_key)
FULL_PROFILE = "full"


# ----------------------------------------------------------------------------- public shapes


@dataclass(frozen=True)
class PolicyTool:
    """What the policy needs to know about one registered tool."""

    name: str
    aliases: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    optional: bool = False
    unavailable: str | None = None


@dataclass(frozen=True)
class PolicyCatalog:
    """Everything registered: tools, groups (bare name -> member names), profiles
    (name -> allow entries, ``None`` = no restriction) and provider policies."""

    tools: Sequence[PolicyTool]
    groups: Mapping[str, Sequence[str]] = field(default_factory=dict)
    profiles: Mapping[str, Sequence[str] | None] = field(default_factory=dict)
    provider_policies: Sequence[ProviderPolicy] = ()
    _index_cache: list[_Index] = field(default_factory=list, init=False, repr=False, compare=False)
    _unavailable_cache: list[dict[int, str]] = field(default_factory=list, init=False, repr=False, compare=False)

    def index(self) -> _Index:
        """The precomputed lookup tables: built once per catalog (the catalog is immutable), and
        shared by catalogs with the same tools, groups, profiles and policies (a host that
        builds a fresh catalog for every resolution reuses the tables and compiled lists)."""
        if not self._index_cache:
            self._index_cache.append(_shared_index(self))
        return self._index_cache[0]

    def unavailable(self) -> dict[int, str]:
        """``{tool index: reason}`` for this catalog's tools whose availability check failed."""
        if not self._unavailable_cache:
            index = self.index()
            reasons = [t.unavailable for t in self.tools]
            self._unavailable_cache.append(
                {i: r for i, r in enumerate(map(reasons.__getitem__, index.order)) if r}
            )
        return self._unavailable_cache[0]


_INDEXES: OrderedDict[tuple[Any, ...], _Index] = OrderedDict()
_INDEXES_MAX = 8
_INDEXES_LOCK = threading.Lock()


def _signature(catalog: PolicyCatalog) -> tuple[Any, ...] | None:
    """What the index depends on (everything but availability), or ``None`` if unhashable."""
    try:
        sig = (
            tuple([(t.name, t.aliases, t.groups, t.optional) for t in catalog.tools]),
            tuple((k, tuple(v)) for k, v in catalog.groups.items()),
            tuple((k, None if v is None else tuple(v)) for k, v in catalog.profiles.items()),
            # the cached index holds these policies, so their ids cannot be reused meanwhile
            tuple(map(id, catalog.provider_policies)),
        )
        hash(sig)
    except TypeError:
        return None
    return sig


def _shared_index(catalog: PolicyCatalog) -> _Index:
    sig = _signature(catalog)
    if sig is None:
        return _Index(catalog)
    with _INDEXES_LOCK:
        index = _INDEXES.get(sig)
        if index is not None:
            _INDEXES.move_to_end(sig)
            return index
    index = _Index(catalog)
    with _INDEXES_LOCK:
        _INDEXES[sig] = index
        while len(_INDEXES) > _INDEXES_MAX:
            _INDEXES.popitem(last=False)
    return index


class ToolDecision(NamedTuple):
    """One tool's verdict: enabled or not, the step that decided, and why (for people)."""

    name: str
    enabled: bool
    step: str
    reason: str


@dataclass
class PolicyResult:
    enabled: list[str]
    disabled: list[ToolDecision]
    warnings: list[str]
    decisions: list[ToolDecision]
    #: call-level rules a subagent's lists carry (``Bash(git *)``): ``{"allow": [...], "deny": [...]}``;
    #: the tool stays visible, the permission layer applies the rule to each call
    call_rules: dict[str, list[str]] = field(default_factory=dict)
    #: settings that failed closed (an unknown profile): the CLI exits non-zero on any
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": list(self.enabled),
            "disabled": [{"name": d.name, "reason": d.reason} for d in self.disabled],
            "warnings": list(self.warnings),
        }

    def explain_json(self) -> list[dict[str, Any]]:
        """Every decision with its step: ``[{"name","enabled","step","reason"}]``."""
        return [
            {"name": d.name, "enabled": d.enabled, "step": d.step, "reason": d.reason}
            for d in self.decisions
        ]

    def decision(self, name: str) -> ToolDecision | None:
        """The decision for ``name`` (a tool name, compared without case, ``_`` and ``-``)."""
        key = name_key(name)
        return next((d for d in self.decisions if name_key(d.name) == key), None)


def format_explain(result: PolicyResult) -> str:
    """``pegboard tools --explain`` text: one line per tool with the deciding step."""
    width = max((len(d.name) for d in result.decisions), default=4)
    lines = []
    for d in result.decisions:
        mark = "+" if d.enabled else "-"
        lines.append(f"{mark} {d.name:<{width}}  [{d.step}] {d.reason}")
    lines.extend(f"warning: {w}" for w in result.warnings)
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the index


class _Index:
    """Lookup tables for one catalog: tool keys, aliases, group members, profiles."""

    def __init__(self, catalog: PolicyCatalog) -> None:
        given = list(catalog.tools)
        folded = [t.name.casefold() for t in given]
        # registered names never differ only in case, so the case-folded name orders them fully
        order = sorted(range(len(given)), key=folded.__getitem__)
        self.order: list[int] = order  # sorted position -> position in catalog.tools
        tools = [given[j] for j in order]
        n = len(tools)
        self.tools: list[PolicyTool] = tools
        self.names: list[str] = [t.name for t in tools]
        self.optional: list[int] = [i for i, t in enumerate(tools) if t.optional]
        keys: list[str] = list(map(_key, (t.name for t in tools)))
        self.keys = keys
        # the first tool with a key owns it; aliases come after every canonical name
        by_key: dict[str, int] = dict(zip(reversed(keys), range(n - 1, -1, -1), strict=True))
        for i, aliases in [(i, t.aliases) for i, t in enumerate(tools) if t.aliases]:
            for alias in aliases:
                by_key.setdefault(_key(alias), i)
        by_declared: defaultdict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, declared_groups in [(i, t.groups) for i, t in enumerate(tools) if t.groups]:
            by_declared[declared_groups].append(i)
        self.by_key = by_key
        # every canonical key on its own line, for C-speed glob scans (keys hold no newline)
        self.joined = "\n" + "\n".join(keys) + "\n"
        self._casefold_names: list[str] | None = None
        # groups: registry groups plus the groups tools declare
        raw: dict[str, list[str]] = {}
        self.group_names: dict[str, str] = {}
        for gname, members in catalog.groups.items():
            bare = gname[len("group:"):] if gname.startswith("group:") else gname
            gkey = _key(bare)
            self.group_names.setdefault(gkey, bare)
            raw.setdefault(gkey, []).extend(members)
        declared: dict[str, set[int]] = {}
        for names, members_idx in by_declared.items():
            for gname in names:
                bare = gname[len("group:"):] if gname.startswith("group:") else gname
                gkey = _key(bare)
                self.group_names.setdefault(gkey, bare)
                declared.setdefault(gkey, set()).update(members_idx)
        self.groups: dict[str, tuple[int, ...]] = {}
        for gkey in self.group_names:
            self.groups[gkey] = tuple(sorted(self._expand_group(gkey, raw, declared, set())))
        # profiles, case-insensitive
        self.profiles: dict[str, tuple[str, tuple[str, ...] | None]] = {}
        for pname, allow in catalog.profiles.items():
            self.profiles[pname.casefold()] = (pname, None if allow is None else tuple(allow))
        self.provider_policies: tuple[ProviderPolicy, ...] = tuple(catalog.provider_policies)
        self._compiled: dict[tuple[str, tuple[str, ...]], _Compiled] = {}
        self._globs: dict[str, list[int]] = {}

    @property
    def casefold_names(self) -> list[str]:
        if self._casefold_names is None:
            self._casefold_names = [t.name.casefold() for t in self.tools]
        return self._casefold_names

    def _expand_group(
        self, gkey: str, raw: Mapping[str, list[str]], declared: Mapping[str, set[int]], seen: set[str]
    ) -> set[int]:
        seen.add(gkey)
        out: set[int] = set(declared.get(gkey, ()))
        for member in raw.get(gkey, ()):
            if member.startswith("group:"):
                sub = name_key(member[len("group:"):])
                if sub not in seen:
                    out |= self._expand_group(sub, raw, declared, seen)
                continue
            i = self.by_key.get(name_key(member))
            if i is not None:
                out.add(i)
        return out

    def glob(self, regex: str) -> list[int]:
        """Indices of the tools whose canonical key fully matches ``regex`` (cached)."""
        found = self._globs.get(regex)
        if found is None:
            # "\n" first: the regex engine then jumps from line start to line start
            keys = re.compile(f"\n((?:{regex}))(?=\n)").findall(self.joined)
            found = self._globs[regex] = list(map(self.by_key.__getitem__, keys))
        return found

    def valid_groups(self) -> str:
        return ", ".join(f"group:{n}" for n in sorted(self.group_names.values(), key=str.casefold)) or "(none)"

    def valid_profiles(self) -> str:
        names = {name for name, _ in self.profiles.values()} | {FULL_PROFILE}
        return ", ".join(sorted(names, key=str.casefold))

    def suggest(self, entry: str) -> str:
        """``"; did you mean 'X'?"`` for a tool name one edit away from ``entry``, else ``""``.

        Generates the edits of the entry (delete, swap, replace, insert) and looks each up, so
        the cost does not grow with the number of tools.
        """
        key = name_key(entry)
        if not key or "*" in key or len(key) > 64:
            return ""
        letters = "abcdefghijklmnopqrstuvwxyz0123456789"
        found: set[int] = set()
        for n in range(len(key) + 1):
            head, tail = key[:n], key[n:]
            candidates = [head + c + tail for c in letters]
            if tail:
                candidates.append(head + tail[1:])
                candidates.extend(head + c + tail[1:] for c in letters)
                if len(tail) > 1:
                    candidates.append(head + tail[1] + tail[0] + tail[2:])
            for candidate in candidates:
                i = self.by_key.get(candidate)
                if i is not None:
                    found.add(i)
        if not found:
            return ""
        best = min((self.tools[i].name for i in found), key=lambda n: (n.casefold(), n))
        return f"; did you mean {best!r}?"

    def compile(self, entries: Iterable[str], kind: str = "list") -> _Compiled:
        """Compile ``entries`` (cached per catalog; entry order does not matter).

        ``kind="calls"``: an entry with a specifier (``Bash(rm *)``) is a call-level rule and
        names no whole tool (a subagent's ``disallowedTools``); otherwise it names its tool.
        """
        cleaned = tuple(sorted({e.strip() for e in entries if isinstance(e, str) and e.strip()}))
        cache_key = (kind, cleaned)
        hit = self._compiled.get(cache_key)
        if hit is None:
            hit = _Compiled(self, cleaned, specifier_names_tool=kind != "calls")
            if len(self._compiled) < 4096:
                self._compiled[cache_key] = hit
        return hit


_SPECIFIER = re.compile(r"^\s*([^()\s]+)\s*\((.*)\)\s*$", re.DOTALL)


@dataclass(frozen=True)
class _Unknown:
    entry: str
    why: str


class _Compiled:
    """One list of entries, compiled: exact tools, group members, globs, ``*``."""

    def __init__(self, index: _Index, entries: tuple[str, ...], *, specifier_names_tool: bool = True) -> None:
        self.entries = entries
        self.exact: dict[int, str] = {}
        self.grouped: dict[int, str] = {}
        self.star: str | None = None
        self.unknown: list[_Unknown] = []
        self.missing_groups: list[str] = []
        self.specifiers: list[tuple[str, str]] = []  # (entry, tool name part)
        glob_entries: list[str] = []
        glob_parts: list[str] = []
        mcp_entries: list[str] = []
        mcp_prefixes: list[str] = []
        group_hits: list[tuple[str, tuple[int, ...]]] = []
        for entry in entries:  # sorted, so the entry a reason cites never depends on order
            target = entry
            m = _SPECIFIER.match(entry)
            if m:
                target = m.group(1)
                self.specifiers.append((entry, target))
                if not specifier_names_tool:
                    if index.by_key.get(name_key(target)) is None and "*" not in target:
                        self.unknown.append(_Unknown(entry, "no tool or alias by that name"))
                    continue
            if target.lower().startswith("group:"):
                gkey = name_key(target[len("group:"):])
                members = index.groups.get(gkey)
                if members is None:
                    self.missing_groups.append(entry)
                    self.unknown.append(_Unknown(entry, f"no group {target[len('group:'):]!r}; valid groups: "
                                                 f"{index.valid_groups()}"))
                    continue
                if not members:
                    self.unknown.append(_Unknown(entry, f"group {index.group_names[gkey]!r} has no installed "
                                                 "member"))
                    continue
                group_hits.append((entry, members))
                continue
            if "*" in target:
                key = name_key(target)
                if key.strip("*") == "":
                    self.star = self.star or entry
                    continue
                glob_entries.append(entry)
                glob_parts.append(".*".join(re.escape(p) for p in key.split("*")))
                continue
            lowered = target.casefold()
            if lowered.startswith("mcp__") and lowered.count("__") == 1 and len(lowered) > 5:
                # a bare MCP server name (``mcp__github``): every tool of that server
                mcp_entries.append(entry)
                mcp_prefixes.append(lowered + "__")
                continue
            found = index.by_key.get(name_key(target))
            if found is None:
                self.unknown.append(_Unknown(entry, "no tool or alias by that name" + index.suggest(target)))
            else:
                self.exact.setdefault(found, entry)
        for entry, members in reversed(group_hits):  # earlier entries win
            self.grouped.update(dict.fromkeys(members, entry))
        self.glob_hits: dict[int, str] = {}
        for entry, part in reversed(list(zip(glob_entries, glob_parts, strict=True))):  # earlier entries win
            matched = index.glob(part)
            if matched:
                self.glob_hits.update(dict.fromkeys(matched, entry))
            else:
                self.unknown.append(_Unknown(entry, "the pattern matches no tool name"))
        if mcp_prefixes:
            hit_prefix = [False] * len(mcp_prefixes)
            for i, cname in enumerate(index.casefold_names):
                for n, prefix in enumerate(mcp_prefixes):
                    if cname.startswith(prefix):
                        self.grouped.setdefault(i, mcp_entries[n])
                        hit_prefix[n] = True
            for n, entry in enumerate(mcp_entries):
                if not hit_prefix[n]:
                    self.unknown.append(_Unknown(entry, "no tool from that MCP server"))
        self.unknown.sort(key=lambda u: u.entry.casefold())
        self.empty = not entries
        self.known = bool(self.star or self.exact or self.grouped or self.glob_hits)
        self._size = len(index.tools)
        self._hits: dict[int, str] | None = None

    def hits(self) -> dict[int, str]:
        """Every tool index this list names, with the entry that names it (exact names first,
        then groups, globs, ``*``). Computed once; do not modify."""
        if self._hits is None:
            out: dict[int, str] = dict.fromkeys(range(self._size), self.star) if self.star is not None else {}
            out.update(self.glob_hits)
            out.update(self.grouped)
            out.update(self.exact)
            self._hits = out
        return self._hits

    def match(self, i: int) -> tuple[str, str] | None:
        """``(kind, entry)`` for the first entry naming tool ``i``; kind is exact/group/glob/star."""
        entry = self.exact.get(i)
        if entry is not None:
            return "exact", entry
        entry = self.grouped.get(i)
        if entry is not None:
            return "group", entry
        entry = self.glob_hits.get(i)
        if entry is not None:
            return "glob", entry
        if self.star is not None:
            return "star", self.star
        return None


# ----------------------------------------------------------------------------- helpers


def parse_tool_list(value: Sequence[str] | str | None) -> list[str] | None:
    """A subagent's ``tools`` / ``disallowedTools``: a list, or a comma-separated string
    (``"Read, Grep, Bash(git *)"``; commas inside parentheses do not split). ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        parts: list[str] = []
        depth = 0
        current = ""
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if ch == "," and depth == 0:
                parts.append(current)
                current = ""
            else:
                current += ch
        parts.append(current)
        return [p.strip() for p in parts if p.strip()]
    return [str(p).strip() for p in value if isinstance(p, str) and p.strip()]


def select_by_provider(
    by_provider: Mapping[str, ProviderToolPolicy], provider: str | None, model: str | None
) -> tuple[str, ProviderToolPolicy] | None:
    """The one ``byProvider`` entry that applies (``provider/model`` beats ``provider``;
    the two are never merged), as ``(key as written, entry)``."""
    if not by_provider:
        return None
    lowered: dict[str, tuple[str, ProviderToolPolicy]] = {}
    for key in sorted(by_provider, key=lambda k: (k.strip().lower(), k)):
        if key.strip():
            lowered.setdefault(key.strip().lower(), (key, by_provider[key]))
    for candidate in provider_keys(provider, model):
        if candidate in lowered:
            return lowered[candidate]
    return None


def provider_policy_applies(policy: ProviderPolicy, provider: str | None, model: str | None) -> bool:
    """True when ``policy`` names ``provider`` or ``provider/model`` (keys may use ``*``)."""
    return policy.applies_to(provider, model)


class _Warnings:
    """Warnings and errors of one resolution (an error is a setting that failed closed)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.errors: list[str] = []

    def add(self, text: str) -> None:
        if text not in self.items:
            self.items.append(text)

    def error(self, text: str) -> None:
        if text not in self.errors:
            self.errors.append(text)


def _entry_list(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in values)


def _unknown_warning(label: str, unknown: Sequence[_Unknown], tail: str = "") -> str:
    parts = "; ".join(f"{u.entry!r} ({u.why})" for u in unknown)
    noun = "entry" if len(unknown) == 1 else "entries"
    return f"{label}: unknown {noun} ({UNKNOWN_MARKER}): {parts}{tail}"


def _specifier_warning(label: str, specs: Sequence[tuple[str, str]]) -> str:
    return (
        f"{label}: {_entry_list(e for e, _ in specs)} carr{'ies' if len(specs) == 1 else 'y'} a specifier; "
        "tool policy decides whole tools, so only the tool name counts here "
        "(put call-level rules in permissions.allow / permissions.deny)"
    )


# ----------------------------------------------------------------------------- allowlists


@dataclass
class _Part:
    compiled: _Compiled
    label: str  # config key, e.g. "tools.allow"
    role: str  # "profile", "allow", "alsoAllow"


@dataclass
class _Allowlist:
    """A profile + allow + alsoAllow combination, as one (maybe restricting) allowlist."""

    label: str
    step: str  # step reported when it removes a tool
    restricting: bool
    parts: list[_Part]
    describe: str  # "profile 'coding' + tools.allow" etc.

    def match(self, i: int, *, exact_only: bool = False) -> tuple[_Part, str, str] | None:
        best: tuple[_Part, str, str] | None = None
        for part in self.parts:
            hit = part.compiled.match(i)
            if hit is None:
                continue
            kind, entry = hit
            if exact_only and kind != "exact":
                if best is None:
                    best = (part, "inexact", entry)
                continue
            if kind == "exact" or not exact_only:
                return part, kind, entry
        return best

    def explicit(self, i: int) -> bool:
        return any(part.compiled.exact.get(i) is not None for part in self.parts)


def _profile_entries(
    index: _Index, name: str | None, label: str, warnings: _Warnings
) -> tuple[str | None, tuple[str, ...] | None]:
    """The profile's display name and entries; ``None`` entries = no restriction.

    An unknown profile fails closed: it is an error and its allowlist is empty, so a typo
    never widens what an agent sees (only ``allow`` / ``alsoAllow`` entries still add tools).
    """
    if name is None or not str(name).strip():
        return None, None
    wanted = str(name).strip()
    found = index.profiles.get(wanted.casefold())
    if found is None:
        if wanted.casefold() == FULL_PROFILE:
            return FULL_PROFILE, None
        warnings.error(
            f"{label}: unknown profile {wanted!r}{suggest_profile(index, wanted)} "
            f"Valid profiles: {index.valid_profiles()}. No tool is enabled through it."
        )
        return wanted, ()
    return found


def suggest_profile(index: _Index, wanted: str) -> str:
    """``"; did you mean 'coding'?"`` for a near miss, else ``""``."""
    close = difflib.get_close_matches(wanted.casefold(), [*index.profiles, FULL_PROFILE], n=1, cutoff=0.6)
    if not close:
        return ""
    display = index.profiles[close[0]][0] if close[0] in index.profiles else FULL_PROFILE
    return f"; did you mean {display!r}?"


def _build_allowlist(
    index: _Index,
    block: ToolPolicyConfig | ProviderToolPolicy,
    label: str,
    warnings: _Warnings,
    *,
    step_when_profile: str,
    step_without_profile: str,
    profile_override: str | None = None,
    profile_label: str | None = None,
) -> _Allowlist:
    profile_name = profile_override if profile_override is not None else block.profile
    p_label = profile_label if profile_override is not None and profile_label else f"{label}.profile"
    display, profile_entries = _profile_entries(index, profile_name, p_label, warnings)
    allow_entries = [e for e in (block.allow or []) if isinstance(e, str) and e.strip()]
    also_entries = [e for e in (block.also_allow or []) if isinstance(e, str) and e.strip()]
    allow_c = index.compile(allow_entries)
    also_c = index.compile(also_entries)
    for compiled, key in ((allow_c, f"{label}.allow"), (also_c, f"{label}.alsoAllow")):
        if compiled.specifiers:
            warnings.add(_specifier_warning(key, compiled.specifiers))
    parts: list[_Part] = []
    if profile_entries is not None:
        profile_c = index.compile(profile_entries, "profile")  # a profile's own unknowns never warn
        known = display is not None and display.casefold() in index.profiles
        profile_text = f"profile {display!r}" if known else f"unknown profile {display!r}, which enables nothing"
        parts.append(_Part(profile_c, profile_text, "profile"))
        for compiled, key, role in ((allow_c, f"{label}.allow", "allow"), (also_c, f"{label}.alsoAllow",
                                                                          "alsoAllow")):
            if compiled.unknown:
                warnings.add(_unknown_warning(key, compiled.unknown))
            if not compiled.empty:
                parts.append(_Part(compiled, key, role))
        describe = profile_text + "".join(
            f" + {p.label}" for p in parts[1:]
        )
        return _Allowlist(label, step_when_profile, True, parts, describe)
    if also_c.unknown:
        warnings.add(_unknown_warning(f"{label}.alsoAllow", also_c.unknown))
    if not allow_c.empty:
        if not allow_c.known:
            warnings.add(
                _unknown_warning(
                    f"{label}.allow",
                    allow_c.unknown,
                    "; every entry is unknown, so this allowlist is ignored and the tools stay available "
                    f"(use {label}.alsoAllow to add plugin tools without restricting)",
                )
            )
            # ignored as a restriction; its entries still count as naming optional tools
            return _Allowlist(label, step_without_profile, False, [_Part(also_c, f"{label}.alsoAllow",
                                                                         "alsoAllow")], "")
        if allow_c.unknown:
            warnings.add(_unknown_warning(f"{label}.allow", allow_c.unknown))
        parts = [_Part(allow_c, f"{label}.allow", "allow")]
        if not also_c.empty:
            parts.append(_Part(also_c, f"{label}.alsoAllow", "alsoAllow"))
        return _Allowlist(label, step_without_profile, True, parts, " + ".join(p.label for p in parts))
    return _Allowlist(label, step_without_profile, False, [_Part(also_c, f"{label}.alsoAllow", "alsoAllow")],
                      "")


def _sets_allowlist(block: ToolPolicyConfig) -> bool:
    return block.profile is not None or block.allow is not None or block.also_allow is not None


@dataclass
class _Deny:
    compiled: _Compiled
    label: str


def _deny(index: _Index, entries: Sequence[str] | None, label: str, warnings: _Warnings) -> _Deny | None:
    if not entries:
        return None
    compiled = index.compile(entries)
    if compiled.empty:
        return None
    for entry in compiled.missing_groups:
        warnings.add(
            f"{label}: no group {entry.split(':', 1)[1]!r} (entry {entry!r}); valid groups: {index.valid_groups()}"
        )
    if compiled.specifiers:
        warnings.add(
            f"{label}: {_entry_list(e for e, _ in compiled.specifiers)} carr"
            f"{'ies' if len(compiled.specifiers) == 1 else 'y'} a specifier; tool policy removes the whole "
            "tool (to refuse only some calls, use permissions.deny instead)"
        )
    return _Deny(compiled, label)


def _find_agent(config: PegboardConfig, agent: str | None) -> tuple[ToolPolicyConfig | None, str]:
    if not agent:
        return None, ""
    entries = list(config.agents.entries)
    found = next((a for a in entries if a.id == agent), None)
    if found is None:
        found = next((a for a in entries if a.id.casefold() == agent.casefold()), None)
    if found is None:
        return None, ""
    return found.tools, f"agents.list[id={found.id}].tools"


def _find_subagent(config: PegboardConfig, name: str) -> tuple[str, SubagentConfig] | None:
    if name in config.subagents:
        return name, config.subagents[name]
    for key, value in config.subagents.items():
        if key.casefold() == name.casefold():
            return key, value
    return None


@dataclass
class _SubagentStep:
    name: str
    keep: _Compiled | None
    drop: _Compiled | None


def _subagent_chain(
    config: PegboardConfig, subagent: str, warnings: _Warnings
) -> tuple[list[tuple[str, SubagentConfig]], str | None]:
    """The subagent and its subagent ancestors (outermost first), and the agent at the root."""
    chain: list[tuple[str, SubagentConfig]] = []
    seen: set[str] = set()
    current: str | None = subagent
    while current is not None:
        found = _find_subagent(config, current)
        if found is None:
            if not chain:
                valid = ", ".join(sorted(config.subagents, key=str.casefold)) or "(none configured)"
                warnings.add(f"subagents: no subagent {current!r}; valid subagents: {valid}. "
                             "It gets its parent's tools.")
                return [], None
            return list(reversed(chain)), current
        key, sub = found
        if key in seen:
            warnings.add(f"subagents.{key}.parent: the parent chain loops back to {key!r}")
            return list(reversed(chain)), None
        seen.add(key)
        chain.append((key, sub))
        current = sub.parent
    return list(reversed(chain)), None


# ----------------------------------------------------------------------------- the engine


def resolve_policy(
    catalog: PolicyCatalog,
    config: PegboardConfig,
    *,
    provider: str | None = None,
    model: str | None = None,
    agent: str | None = None,
    profile: str | None = None,
    subagent: str | None = None,
) -> PolicyResult:
    """Decide, for every tool in ``catalog``, whether this agent on this provider/model sees it.

    ``profile`` overrides ``tools.profile`` (the command line's ``--profile``); it does not
    replace an agent's own allowlist. ``subagent`` names an entry of ``config.subagents``;
    its parent (``agent`` if given, else the chain's ``parent``) supplies the starting set.
    """
    index = catalog.index()
    warnings = _Warnings()
    call_rules: dict[str, list[str]] = {}

    # subagents first: their chain may name the agent
    chain: list[tuple[str, SubagentConfig]] = []
    if subagent:
        chain, root_agent = _subagent_chain(config, subagent, warnings)
        if agent is None and root_agent is not None:
            agent = root_agent

    global_block = config.tools
    agent_block, agent_label = _find_agent(config, agent)

    # 1. base allowlist: the agent's own block if it sets one, else the global block
    if agent_block is not None and _sets_allowlist(agent_block):
        base = _build_allowlist(
            index, agent_block, agent_label, warnings,
            step_when_profile=STEP_AGENT, step_without_profile=STEP_AGENT,
        )
    else:
        base = _build_allowlist(
            index, global_block, "tools", warnings,
            step_when_profile=STEP_PROFILE, step_without_profile=STEP_ALLOW,
            profile_override=profile, profile_label="--profile",
        )

    # 2. byProvider: global and agent entries, each narrowing independently
    narrows: list[_Allowlist] = []
    denies: list[_Deny] = []
    for block, label in ((global_block, "tools"), (agent_block, agent_label)):
        if block is None:
            continue
        d = _deny(index, block.deny, f"{label}.deny", warnings)
        if d:
            denies.append(d)
        selected = select_by_provider(block.by_provider, provider, model)
        if selected is None:
            continue
        key, entry = selected
        bp_label = f"{label}.byProvider.{key}"
        narrows.append(
            _build_allowlist(index, entry, bp_label, warnings,
                             step_when_profile=STEP_BY_PROVIDER, step_without_profile=STEP_BY_PROVIDER)
        )
        d = _deny(index, entry.deny, f"{bp_label}.deny", warnings)
        if d:
            denies.append(d)

    # 3. subagent steps
    sub_steps: list[_SubagentStep] = []
    for name, sub in chain:
        keep_entries = parse_tool_list(sub.tools)
        drop_entries = parse_tool_list(sub.disallowed_tools)
        keep = index.compile(keep_entries) if keep_entries else None
        drop = index.compile(drop_entries, "calls") if drop_entries else None
        if keep is not None:
            if keep.unknown:
                warnings.add(_unknown_warning(f"subagents.{name}.tools", keep.unknown))
            call_rules.setdefault("allow", []).extend(e for e, _ in keep.specifiers)
        if drop is not None:
            for missing in drop.missing_groups:
                warnings.add(f"subagents.{name}.disallowedTools: no group {missing.split(':', 1)[1]!r}; "
                             f"valid groups: {index.valid_groups()}")
            call_rules.setdefault("deny", []).extend(e for e, _ in drop.specifiers)
        sub_steps.append(_SubagentStep(name, keep, drop))

    # 4. provider policies
    removed = _provider_removals(index, provider, model, config)

    unavailable = catalog.unavailable()
    if sub_steps:
        decisions = [
            _decide(i, index, base, narrows, denies, sub_steps, removed, unavailable) for i in range(len(index.tools))
        ]
    else:
        decisions = _decide_all(index, base, narrows, denies, removed, unavailable)
    enabled = [d.name for d in decisions if d.enabled]
    if decisions and not enabled:
        warnings.add(_empty_warning(base, decisions))
    return PolicyResult(
        enabled=enabled,
        disabled=[d for d in decisions if not d.enabled],
        warnings=list(warnings.items),
        decisions=decisions,
        call_rules={k: sorted(set(v)) for k, v in call_rules.items() if v},
        errors=list(warnings.errors),
    )


def _empty_warning(base: _Allowlist, decisions: Sequence[ToolDecision]) -> str:
    """Why nothing is enabled, in one line: the allowlist and the step that removed most."""
    steps = sorted({d.step for d in decisions})
    where = f" by {base.describe}" if base.restricting and base.describe else ""
    profile = next((p for p in base.parts if p.role == "profile"), None) if base.restricting else None
    if profile is not None and profile.compiled.entries and not profile.compiled.known:
        where += f" (it allows {', '.join(profile.compiled.entries)}; no installed tool matches)"
    return (
        f"no tool is enabled{where}: all {len(decisions)} installed tools were removed "
        f"(steps: {', '.join(steps)}); see pegboard tools --explain"
    )


def config_flag(config: Any, key: str) -> bool:
    """Whether the dotted config ``key`` (camelCase as in config files) is ``true``; keys the
    config model does not declare are read from the sections' extra keys."""
    value: Any = config
    for part in key.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
            continue
        extra = getattr(value, "model_extra", None) or {}
        if part in extra:
            value = extra[part]
            continue
        fields = getattr(type(value), "model_fields", {})
        name = next((n for n, f in fields.items() if part in (n, f.alias)), None)
        if name is None:
            return False
        value = getattr(value, name)
    return value is True


def _provider_removals(
    index: _Index, provider: str | None, model: str | None, config: PegboardConfig | None = None
) -> dict[int, str]:
    removed: dict[int, str] = {}
    if not provider:
        return removed
    for policy in index.provider_policies:
        applies = provider_policy_applies(policy, provider, model)
        where = f"{provider}/{model}" if model and "/" not in model else (model or provider)
        if applies:
            for entry in sorted(policy.remove, key=str.casefold):
                for i in index.compile([entry]).hits():
                    removed.setdefault(
                        i, f"not available on {where} (provider policy {policy.name!r}): {policy.remove[entry]}"
                    )
        elif policy.exclusive:
            only = ", ".join(policy.providers)
            lifted = {e for e, key in policy.exclusive_unless.items()
                      if config is not None and config_flag(config, key)}
            entries = [e for e in policy.exclusive if e not in lifted]
            for i in index.compile(entries).hits() if entries else ():
                removed.setdefault(i, f"only available on {only}, not on {where} (provider policy {policy.name!r})")
    return removed


#: ``ToolDecision`` from a 4-tuple without the Python-level checks of ``_make`` (hot path)
_new_decision = functools.partial(tuple.__new__, ToolDecision)


def _part_texts(allowlist: _Allowlist, *, base: bool) -> dict[int, tuple[str, str]]:
    """For every tool an allowlist names: ``(step, note)`` from the first part that names it."""
    out: dict[int, tuple[str, str]] = {}
    for part in reversed(allowlist.parts):  # earlier parts win, so they are written last
        if base:
            step = STEP_AGENT if allowlist.step == STEP_AGENT else (
                STEP_PROFILE if part.role == "profile" else STEP_ALLOW)
        else:
            step = allowlist.step
        hits = part.compiled.hits()
        if part.role == "profile" and base:
            texts = {e: (step, f"in {part.label} (entry {e!r})") for e in set(hits.values())}
        elif base:
            texts = {e: (step, f"allowed by {part.label} entry {e!r}") for e in set(hits.values())}
        else:
            texts = {e: (step, f"kept by {part.label} entry {e!r}") for e in set(hits.values())}
        out.update({i: texts[e] for i, e in hits.items()})
    return out


def _decide_all(
    index: _Index,
    base: _Allowlist,
    narrows: Sequence[_Allowlist],
    denies: Sequence[_Deny],
    removed: Mapping[int, str],
    unavailable: Mapping[int, str],
) -> list[ToolDecision]:
    """Every tool's decision, computed list-wise (the same answers as :func:`_decide`, which
    handles the rarer cases: optional tools and subagents)."""
    deny_reason: dict[int, str] = {}
    for deny in reversed(denies):  # earlier lists win
        deny_hits = deny.compiled.hits()
        texts = {e: f"denied by {deny.label} entry {e!r}" for e in set(deny_hits.values())}
        deny_reason.update({i: texts[e] for i, e in deny_hits.items()})
    restricting = base.restricting
    base_hits = _part_texts(base, base=True) if restricting else {}
    base_miss = f"not in the allowlist ({base.describe})"
    base_step = base.step
    narrow_data = [
        (_part_texts(n, base=False), f"not in {n.label} ({n.describe}); byProvider can only narrow")
        for n in narrows
        if n.restricting
    ]
    # Layered from the weakest verdict to the strongest, with dict comprehensions and
    # updates rather than one Python step per tool: enabled, availability, byProvider,
    # the base allowlist, deny, provider policy; optional tools take the per-tool path.
    names = index.names
    final: dict[int, tuple[str, bool, str, str]]
    candidates: dict[int, tuple[str, str]]
    if restricting:
        final = {i: (name, False, base_step, base_miss) for i, name in enumerate(names)}
        candidates = base_hits
    else:
        final = {}
        candidates = dict.fromkeys(range(len(names)), (STEP_DEFAULT, "no allowlist restricts it"))
    for hits, miss in narrow_data:
        final.update({i: (names[i], False, STEP_BY_PROVIDER, miss) for i in candidates.keys() - hits.keys()})
        candidates = {i: (sn[0], f"{sn[1]}; {hits[i][1]}") for i, sn in candidates.items() if i in hits}
    final.update({i: (names[i], True, sn[0], sn[1]) for i, sn in candidates.items()})
    final.update(
        {i: (names[i], False, STEP_AVAILABILITY, f"unavailable: {reason}")
         for i, reason in unavailable.items() if i in candidates}
    )
    final.update({i: (names[i], False, STEP_DENY, reason) for i, reason in deny_reason.items()})
    final.update({i: (names[i], False, STEP_PROVIDER_POLICY, reason) for i, reason in removed.items()})
    for i in index.optional:
        final[i] = _decide(i, index, base, narrows, denies, (), removed, unavailable)
    out = map(final.__getitem__, range(len(names)))
    return list(map(_new_decision, out))


def _decide(
    i: int,
    index: _Index,
    base: _Allowlist,
    narrows: Sequence[_Allowlist],
    denies: Sequence[_Deny],
    sub_steps: Sequence[_SubagentStep],
    removed: Mapping[int, str],
    unavailable: Mapping[int, str],
) -> ToolDecision:
    tool = index.tools[i]
    name = tool.name
    reason = removed.get(i)
    if reason is not None:
        return ToolDecision(name, False, STEP_PROVIDER_POLICY, reason)
    for d in denies:
        hit = d.compiled.match(i)
        if hit is not None:
            return ToolDecision(name, False, STEP_DENY, f"denied by {d.label} entry {hit[1]!r}")

    # base allowlist
    notes: list[str] = []
    if base.restricting:
        hit3 = base.match(i, exact_only=tool.optional)
        if hit3 is None:
            return ToolDecision(name, False, base.step, f"not in the allowlist ({base.describe})")
        part, kind, entry = hit3
        if kind == "inexact":
            return ToolDecision(
                name, False, STEP_OPTIONAL,
                f"optional tool: {part.label} entry {entry!r} does not enable it; "
                "name it exactly in an allowlist or alsoAllow",
            )
        step = STEP_PROFILE if part.role == "profile" else STEP_ALLOW
        if base.step == STEP_AGENT:
            step = STEP_AGENT
        if part.role == "profile":
            notes.append(f"in {part.label} (entry {entry!r})")
        else:
            notes.append(f"allowed by {part.label} entry {entry!r}")
    else:
        step = STEP_DEFAULT
        if tool.optional:
            if not base.explicit(i):
                return ToolDecision(
                    name, False, STEP_OPTIONAL,
                    "optional tool: enabled only when named exactly in tools.allow or tools.alsoAllow",
                )
            part_hit = base.match(i, exact_only=True)
            assert part_hit is not None
            step = STEP_ALLOW if base.step != STEP_AGENT else STEP_AGENT
            notes.append(f"optional, named by {part_hit[0].label} entry {part_hit[2]!r}")
        else:
            notes.append("no allowlist restricts it")

    for narrow in narrows:
        if not narrow.restricting:
            continue
        hit4 = narrow.match(i)
        if hit4 is None:
            return ToolDecision(
                name, False, STEP_BY_PROVIDER,
                f"not in {narrow.label} ({narrow.describe}); byProvider can only narrow",
            )
        notes.append(f"kept by {hit4[0].label} entry {hit4[2]!r}")

    for sub in sub_steps:
        if sub.drop is not None:
            dhit = sub.drop.match(i)
            if dhit is not None:
                return ToolDecision(
                    name, False, STEP_SUBAGENT, f"disallowed by subagents.{sub.name}.disallowedTools entry {dhit[1]!r}"
                )
        if sub.keep is not None:
            khit = sub.keep.match(i)
            if khit is None:
                return ToolDecision(name, False, STEP_SUBAGENT, f"not listed in subagents.{sub.name}.tools")
            notes.append(f"listed in subagents.{sub.name}.tools ({khit[1]!r})")
            step = STEP_SUBAGENT

    reason = unavailable.get(i)
    if reason is not None:
        return ToolDecision(name, False, STEP_AVAILABILITY, f"unavailable: {reason}")
    return ToolDecision(name, True, step, "; ".join(notes))


# ----------------------------------------------------------------------------- validation


def validate_policy_config(catalog: PolicyCatalog, config: PegboardConfig) -> list[str]:
    """Every policy problem in ``config``, whatever agent/provider is selected: unknown
    profiles, missing groups, entries that match no tool (for ``pegboard config validate`` and tests)."""
    errors, warnings = policy_problems(catalog, config)
    return [*errors, *warnings]


def policy_problems(catalog: PolicyCatalog, config: PegboardConfig) -> tuple[list[str], list[str]]:
    """:func:`validate_policy_config` split into errors (unknown profiles) and warnings."""
    index = catalog.index()
    warnings = _Warnings()
    blocks: list[tuple[ToolPolicyConfig, str]] = [(config.tools, "tools")]
    for entry in config.agents.entries:
        if entry.tools is not None:
            blocks.append((entry.tools, f"agents.list[id={entry.id}].tools"))
    for block, label in blocks:
        _build_allowlist(index, block, label, warnings, step_when_profile=STEP_PROFILE,
                         step_without_profile=STEP_ALLOW)
        _deny(index, block.deny, f"{label}.deny", warnings)
        for key, bp in sorted(block.by_provider.items()):
            bp_label = f"{label}.byProvider.{key}"
            _build_allowlist(index, bp, bp_label, warnings, step_when_profile=STEP_BY_PROVIDER,
                             step_without_profile=STEP_BY_PROVIDER)
            _deny(index, bp.deny, f"{bp_label}.deny", warnings)
    for name, sub in sorted(config.subagents.items()):
        keep = parse_tool_list(sub.tools)
        if keep:
            compiled = index.compile(keep)
            if compiled.unknown:
                warnings.add(_unknown_warning(f"subagents.{name}.tools", compiled.unknown))
        if sub.parent and sub.parent not in config.subagents and not any(
            a.id == sub.parent for a in config.agents.entries
        ):
            warnings.add(f"subagents.{name}.parent: {sub.parent!r} is neither an agent in agents.list nor a "
                         "subagent; it is treated as an agent id with the global tools")
    return list(warnings.errors), list(warnings.items)


def iter_groups(catalog: PolicyCatalog) -> Iterator[tuple[str, list[str]]]:
    """``(group name, member tool names that are installed)`` for every group, sorted."""
    index = catalog.index()
    for gkey in sorted(index.group_names, key=lambda k: index.group_names[k].casefold()):
        yield index.group_names[gkey], [index.tools[i].name for i in index.groups.get(gkey, ())]
