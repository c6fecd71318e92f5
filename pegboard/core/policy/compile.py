"""One list of policy entries (``Read``, ``group:fs``, ``web_*``, ``*``, ``mcp__github``,
``Bash(git *)``) compiled against a catalog into the tool positions it names, and what it
names nothing with."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pegboard.core.tools import name_key

if TYPE_CHECKING:
    from pegboard.core.policy.index import ToolIndex

_SPECIFIER = re.compile(r"^\s*([^()\s]+)\s*\((.*)\)\s*$", re.DOTALL)


@dataclass(frozen=True)
class UnknownEntry:
    """An entry that names no installed tool, and why."""

    entry: str
    why: str


class CompiledEntries:
    """One list of entries, compiled: exact tools, group members, globs, ``*``.

    Each ``*_hits`` table maps a tool position to the entry that names it (the first in sorted
    order, so the entry a reason cites never depends on how the list was written).
    """

    def __init__(self, index: ToolIndex, entries: tuple[str, ...], *, specifier_names_tool: bool = True) -> None:
        self.entries = entries
        self.exact_hits: dict[int, str] = {}
        self.group_hits: dict[int, str] = {}
        self.star: str | None = None
        self.unknown: list[UnknownEntry] = []
        self.missing_groups: list[str] = []
        self.specifiers: list[tuple[str, str]] = []  # (entry, tool name part)
        glob_entries: list[str] = []
        glob_regexes: list[str] = []
        mcp_entries: list[str] = []
        mcp_servers: list[str] = []
        named_groups: list[tuple[str, tuple[int, ...]]] = []
        for entry in entries:  # sorted, so the entry a reason cites never depends on order
            target = entry
            m = _SPECIFIER.match(entry)
            if m:
                target = m.group(1)
                self.specifiers.append((entry, target))
                if not specifier_names_tool:
                    if index.position(target) is None and "*" not in target:
                        self.unknown.append(UnknownEntry(entry, "no tool or alias by that name"))
                    continue
            if target.lower().startswith("group:"):
                gkey = name_key(target[len("group:"):])
                members = index.group_members.get(gkey)
                if members is None:
                    self.missing_groups.append(entry)
                    self.unknown.append(UnknownEntry(entry, f"no group {target[len('group:'):]!r}; valid groups: "
                                                     f"{index.valid_groups()}"))
                    continue
                if not members:
                    self.unknown.append(UnknownEntry(entry, f"group {index.group_display_names[gkey]!r} has no "
                                                     "installed member"))
                    continue
                named_groups.append((entry, members))
                continue
            if "*" in target:
                key = name_key(target)
                if key.strip("*") == "":
                    self.star = self.star or entry
                    continue
                glob_entries.append(entry)
                glob_regexes.append(".*".join(re.escape(p) for p in key.split("*")))
                continue
            lowered = target.casefold()
            if lowered.startswith("mcp__") and lowered.count("__") == 1 and len(lowered) > 5:
                # a bare MCP server name (``mcp__github``): every tool that declares that server
                mcp_entries.append(entry)
                mcp_servers.append(lowered[len("mcp__"):])
                continue
            found = index.position(target)
            if found is None and (could := index.ambiguous(target)):
                self.unknown.append(UnknownEntry(entry, f"it could mean {', '.join(map(repr, could))}; "
                                                 "write the exact name"))
            elif found is None:
                self.unknown.append(UnknownEntry(entry, "no tool or alias by that name" + index.suggest(target)))
            else:
                self.exact_hits.setdefault(found, entry)
        for entry, members in reversed(named_groups):  # earlier entries win
            self.group_hits.update(dict.fromkeys(members, entry))
        self.glob_hits: dict[int, str] = {}
        for entry, regex in reversed(list(zip(glob_entries, glob_regexes, strict=True))):  # earlier entries win
            matched = index.glob(regex)
            if matched:
                self.glob_hits.update(dict.fromkeys(matched, entry))
            else:
                self.unknown.append(UnknownEntry(entry, "the pattern matches no tool name"))
        if mcp_servers:
            server_matched = [False] * len(mcp_servers)
            for n, server in enumerate(mcp_servers):
                for i in index.server_members.get(server, ()):
                    self.group_hits.setdefault(i, mcp_entries[n])
                    server_matched[n] = True
            for n, entry in enumerate(mcp_entries):
                if not server_matched[n]:
                    self.unknown.append(UnknownEntry(entry, "no tool from that MCP server"))
        self.unknown.sort(key=lambda u: u.entry.casefold())
        self.empty = not entries
        self.known = bool(self.star or self.exact_hits or self.group_hits or self.glob_hits)
        self._size = len(index.tools)
        self._hits: dict[int, str] | None = None

    def hits(self) -> dict[int, str]:
        """Every tool position this list names, with the entry that names it (exact names
        first, then groups, globs, ``*``). Computed once; do not modify."""
        if self._hits is None:
            out: dict[int, str] = dict.fromkeys(range(self._size), self.star) if self.star is not None else {}
            out.update(self.glob_hits)
            out.update(self.group_hits)
            out.update(self.exact_hits)
            self._hits = out
        return self._hits

    def match(self, i: int) -> tuple[str, str] | None:
        """``(kind, entry)`` for the first entry naming tool ``i``; kind is exact/group/glob/star."""
        entry = self.exact_hits.get(i)
        if entry is not None:
            return "exact", entry
        entry = self.group_hits.get(i)
        if entry is not None:
            return "group", entry
        entry = self.glob_hits.get(i)
        if entry is not None:
            return "glob", entry
        if self.star is not None:
            return "star", self.star
        return None


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
