"""The lookup tables of one catalog: tools in policy order, their keys and aliases, group
members, profiles, and caches of compiled entry lists and glob matches.

Tools are addressed by their position in :attr:`ToolIndex.tools` (sorted by case-folded name),
so every step works on small ints rather than names.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from pegboard.core.policy.compile import CompiledEntries
from pegboard.core.providers import ProviderPolicy
from pegboard.core.tools import name_key

if TYPE_CHECKING:
    from pegboard.core.policy.catalog import PolicyCatalog, PolicyTool

#: ``name_key`` with a cache: the same names are normalised on every resolution
cached_key = functools.lru_cache(maxsize=16384)(name_key)

_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _bare_group(name: str) -> str:
    return name[len("group:"):] if name.startswith("group:") else name


class ToolIndex:
    """Lookup tables for one catalog: tool keys, aliases, group members, profiles."""

    def __init__(self, catalog: PolicyCatalog) -> None:
        given = list(catalog.tools)
        folded = [t.name.casefold() for t in given]
        # registered names never differ only in case, so the case-folded name orders them fully
        order = sorted(range(len(given)), key=folded.__getitem__)
        #: position in the index -> position in ``catalog.tools``
        self.order: list[int] = order
        tools = [given[j] for j in order]
        self.tools: list[PolicyTool] = tools
        self.names: list[str] = [t.name for t in tools]
        self.optional_positions: list[int] = [i for i, t in enumerate(tools) if t.optional]
        #: a case-folded ``PolicyTool.server`` -> the positions of the tools that declare it
        self.server_members: dict[str, list[int]] = {}
        for i, server in [(i, t.server) for i, t in enumerate(tools) if t.server]:
            self.server_members.setdefault(server.casefold(), []).append(i)
        keys: list[str] = list(map(cached_key, (t.name for t in tools)))
        self.keys = keys
        #: a tool name or alias as written -> the tool's position
        self.position_by_name: dict[str, int] = {}
        #: a normal form -> the positions of the tools with a name or alias of that form
        self.positions_by_key: dict[str, list[int]] = {}
        for i, t in enumerate(tools):
            for label in (t.name, *t.aliases):
                self.position_by_name.setdefault(label, i)
                found = self.positions_by_key.setdefault(cached_key(label), [])
                if i not in found:
                    found.append(i)
        self._named_by_key: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            self._named_by_key.setdefault(key, []).append(i)
        #: a normal form only one tool has -> that tool's position
        self.position_by_key: dict[str, int] = {k: p[0] for k, p in self.positions_by_key.items() if len(p) == 1}
        # every canonical key on its own line, for C-speed glob scans (keys hold no newline)
        self.keys_text = "\n" + "\n".join(keys) + "\n"
        positions_by_declared: defaultdict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, declared_groups in [(i, t.groups) for i, t in enumerate(tools) if t.groups]:
            positions_by_declared[declared_groups].append(i)
        # groups: registry groups plus the groups tools declare
        registered: dict[str, list[str]] = {}
        #: a group key -> the group's name as first written
        self.group_display_names: dict[str, str] = {}
        for gname, members in catalog.groups.items():
            bare = _bare_group(gname)
            gkey = cached_key(bare)
            self.group_display_names.setdefault(gkey, bare)
            registered.setdefault(gkey, []).extend(members)
        declared: dict[str, set[int]] = {}
        for names, member_positions in positions_by_declared.items():
            for gname in names:
                bare = _bare_group(gname)
                gkey = cached_key(bare)
                self.group_display_names.setdefault(gkey, bare)
                declared.setdefault(gkey, set()).update(member_positions)
        #: a group key -> the positions of its installed members (nested groups expanded)
        self.group_members: dict[str, tuple[int, ...]] = {}
        for gkey in self.group_display_names:
            self.group_members[gkey] = tuple(sorted(self._expand_group(gkey, registered, declared, set())))
        #: a case-folded profile name -> (name as registered, entries or ``None`` for no restriction)
        self.profiles: dict[str, tuple[str, tuple[str, ...] | None]] = {}
        for pname, allow in [*catalog.kernel_profiles.items(), *catalog.profiles.items()]:
            self.profiles[pname.casefold()] = (pname, None if allow is None else tuple(allow))
        self.provider_policies: tuple[ProviderPolicy, ...] = tuple(catalog.provider_policies)
        self._compiled_lists: dict[tuple[str, tuple[str, ...]], CompiledEntries] = {}
        self._glob_matches: dict[str, list[int]] = {}

    def _expand_group(
        self, gkey: str, registered: Mapping[str, list[str]], declared: Mapping[str, set[int]], seen: set[str]
    ) -> set[int]:
        seen.add(gkey)
        out: set[int] = set(declared.get(gkey, ()))
        for member in registered.get(gkey, ()):
            if member.startswith("group:"):
                sub = name_key(member[len("group:"):])
                if sub not in seen:
                    out |= self._expand_group(sub, registered, declared, seen)
                continue
            i = self.position(member)
            if i is not None:
                out.add(i)
        return out

    def glob(self, regex: str) -> list[int]:
        """Positions of the tools whose canonical key fully matches ``regex`` (cached)."""
        found = self._glob_matches.get(regex)
        if found is None:
            # "\n" first: the regex engine then jumps from line start to line start
            keys = re.compile(f"\n((?:{regex}))(?=\n)").findall(self.keys_text)
            found = self._glob_matches[regex] = sorted({i for k in keys for i in self._named_by_key[k]})
        return found

    def position(self, entry: str) -> int | None:
        """The tool ``entry`` names: its exact name or alias wins; otherwise its normal form,
        if exactly one tool has it."""
        found = self.position_by_name.get(entry)
        if found is None:
            found = self.position_by_key.get(cached_key(entry))
        return found

    def ambiguous(self, entry: str) -> list[str]:
        """The tools an entry could mean when its normal form is shared (else ``[]``)."""
        if self.position(entry) is not None:
            return []
        found = self.positions_by_key.get(cached_key(entry), [])
        return sorted((self.tools[i].name for i in found), key=str.casefold) if len(found) > 1 else []

    def valid_groups(self) -> str:
        names = sorted(self.group_display_names.values(), key=str.casefold)
        return ", ".join(f"group:{n}" for n in names) or "(none)"

    def valid_profiles(self) -> str:
        return ", ".join(sorted(self.profile_names(), key=str.casefold))

    def profile_names(self) -> set[str]:
        return {name for name, _ in self.profiles.values()}

    def suggest(self, entry: str) -> str:
        """``"; did you mean 'X'?"`` for a tool name one edit away from ``entry``, else ``""``.

        Generates the edits of the entry (delete, swap, replace, insert) and looks each up, so
        the cost does not grow with the number of tools.
        """
        key = name_key(entry)
        if not key or "*" in key or len(key) > 64:
            return ""
        found: set[int] = set()
        for n in range(len(key) + 1):
            head, tail = key[:n], key[n:]
            candidates = [head + c + tail for c in _LETTERS]
            if tail:
                candidates.append(head + tail[1:])
                candidates.extend(head + c + tail[1:] for c in _LETTERS)
                if len(tail) > 1:
                    candidates.append(head + tail[1] + tail[0] + tail[2:])
            for candidate in candidates:
                i = self.position_by_key.get(candidate)
                if i is not None:
                    found.add(i)
        if not found:
            return ""
        best = min((self.tools[i].name for i in found), key=lambda n: (n.casefold(), n))
        return f"; did you mean {best!r}?"

    def compile(self, entries: Iterable[str], kind: str = "list") -> CompiledEntries:
        """Compile ``entries`` (cached per catalog; entry order does not matter).

        ``kind="calls"``: an entry with a specifier (``Bash(rm *)``) is a call-level rule and
        names no whole tool (a subagent's ``disallowedTools``); otherwise it names its tool.
        """
        cleaned = tuple(sorted({e.strip() for e in entries if isinstance(e, str) and e.strip()}))
        cache_key = (kind, cleaned)
        hit = self._compiled_lists.get(cache_key)
        if hit is None:
            hit = CompiledEntries(self, cleaned, specifier_names_tool=kind != "calls")
            if len(self._compiled_lists) < 4096:
                self._compiled_lists[cache_key] = hit
        return hit
