"""A config block's ``profile`` / ``allow`` / ``alsoAllow`` as one allowlist, and its ``deny``
as one deny list, with the warnings their entries earn."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from pegboard.core.config import ProviderToolPolicy, ToolPolicyConfig
from pegboard.core.install_hints import profile_hint
from pegboard.core.policy.compile import CompiledEntries
from pegboard.core.policy.index import ToolIndex
from pegboard.core.policy.problems import Problems, specifier_warning, unknown_warning


@dataclass
class AllowlistPart:
    """One list that makes up an allowlist."""

    compiled: CompiledEntries
    label: str  # config key, e.g. "tools.allow"
    role: str  # "profile", "allow", "alsoAllow"


@dataclass
class Allowlist:
    """A profile + allow + alsoAllow combination, as one (maybe restricting) allowlist."""

    label: str
    step: str  # step reported when it removes a tool
    restricting: bool
    parts: list[AllowlistPart]
    describe: str  # "profile 'coding' + tools.allow" etc.

    def match(self, i: int, *, exact_only: bool = False) -> tuple[AllowlistPart, str, str] | None:
        """``(part, kind, entry)`` of the first part naming tool ``i``. With ``exact_only`` (an
        optional tool) a part naming it only through a group, glob or ``*`` gives kind
        ``"inexact"``, and only when no part names it exactly."""
        best: tuple[AllowlistPart, str, str] | None = None
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

    def names_exactly(self, i: int) -> bool:
        """Whether some part names tool ``i`` by its name or alias."""
        return any(part.compiled.exact_hits.get(i) is not None for part in self.parts)


@dataclass
class DenyList:
    compiled: CompiledEntries
    label: str


def profile_entries(
    index: ToolIndex, name: str | None, label: str, problems: Problems
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
        problems.error(
            f"{label}: unknown profile {wanted!r}{suggest_profile(index, wanted) or '.'}{profile_hint(wanted)} "
            f"Valid profiles: {index.valid_profiles()}. No tool is enabled through it."
        )
        return wanted, ()
    return found


def suggest_profile(index: ToolIndex, wanted: str) -> str:
    """``"; did you mean 'coding'?"`` for a near miss, else ``""``."""
    close = difflib.get_close_matches(wanted.casefold(), list(index.profiles), n=1, cutoff=0.6)
    return f"; did you mean {index.profiles[close[0]][0]!r}?" if close else ""


_ALLOW_SPECIFIER = (
    "tool policy decides whole tools, so only the tool name counts here "
    "(put call-level rules in permissions.allow / permissions.deny)"
)
#: how :meth:`ToolIndex.suggest` words a near miss: a deny entry one edit from an installed
#: tool is a typo that denies nothing, while one that names no installed tool at all is not
NEAR_MISS = "; did you mean "

_DENY_SPECIFIER = "tool policy removes the whole tool (to refuse only some calls, use permissions.deny instead)"


def build_allowlist(
    index: ToolIndex,
    block: ToolPolicyConfig | ProviderToolPolicy,
    label: str,
    problems: Problems,
    *,
    step_when_profile: str,
    step_without_profile: str,
    profile_override: str | None = None,
    profile_label: str | None = None,
) -> Allowlist:
    """The allowlist ``block`` sets. ``profile_override`` (``--profile``) replaces its profile."""
    profile_name = profile_override if profile_override is not None else block.profile
    p_label = profile_label if profile_override is not None and profile_label else f"{label}.profile"
    display, entries_of_profile = profile_entries(index, profile_name, p_label, problems)
    allow_entries = [e for e in (block.allow or []) if isinstance(e, str) and e.strip()]
    also_entries = [e for e in (block.also_allow or []) if isinstance(e, str) and e.strip()]
    allow_c = index.compile(allow_entries)
    also_c = index.compile(also_entries)
    for compiled, key in ((allow_c, f"{label}.allow"), (also_c, f"{label}.alsoAllow")):
        if compiled.specifiers:
            problems.warn(specifier_warning(key, compiled.specifiers, _ALLOW_SPECIFIER))
    also_part = AllowlistPart(also_c, f"{label}.alsoAllow", "alsoAllow")
    if entries_of_profile is not None:
        profile_c = index.compile(entries_of_profile, "profile")  # a profile's own unknowns never warn
        known = display is not None and display.casefold() in index.profiles
        profile_text = f"profile {display!r}" if known else f"unknown profile {display!r}, which enables nothing"
        parts = [AllowlistPart(profile_c, profile_text, "profile")]
        for part in (AllowlistPart(allow_c, f"{label}.allow", "allow"), also_part):
            if part.compiled.unknown:
                problems.warn(unknown_warning(part.label, part.compiled.unknown))
            if not part.compiled.empty:
                parts.append(part)
        describe = profile_text + "".join(f" + {p.label}" for p in parts[1:])
        return Allowlist(label, step_when_profile, True, parts, describe)
    if also_c.unknown:
        problems.warn(unknown_warning(f"{label}.alsoAllow", also_c.unknown))
    if not allow_c.empty:
        if not allow_c.known:
            problems.warn(
                unknown_warning(
                    f"{label}.allow",
                    allow_c.unknown,
                    "; every entry is unknown, so this allowlist is ignored and the tools stay available "
                    f"(use {label}.alsoAllow to add plugin tools without restricting)",
                )
            )
            # ignored as a restriction; its entries still count as naming optional tools
            return Allowlist(label, step_without_profile, False, [also_part], "")
        if allow_c.unknown:
            problems.warn(unknown_warning(f"{label}.allow", allow_c.unknown))
        parts = [AllowlistPart(allow_c, f"{label}.allow", "allow")]
        if not also_c.empty:
            parts.append(also_part)
        return Allowlist(label, step_without_profile, True, parts, " + ".join(p.label for p in parts))
    return Allowlist(label, step_without_profile, False, [also_part], "")


def sets_allowlist(block: ToolPolicyConfig) -> bool:
    """Whether ``block`` says anything about the allowlist (an agent's block then replaces the global one)."""
    return block.profile is not None or block.allow is not None or block.also_allow is not None


def build_deny(index: ToolIndex, entries: Sequence[str] | None, label: str, problems: Problems) -> DenyList | None:
    """The deny list ``entries`` make, or ``None`` when they name nothing."""
    if not entries:
        return None
    compiled = index.compile(entries)
    if compiled.empty:
        return None
    for entry in compiled.missing_groups:
        problems.warn(
            f"{label}: no group {entry.split(':', 1)[1]!r} (entry {entry!r}); valid groups: {index.valid_groups()}"
        )
    if compiled.specifiers:
        problems.warn(specifier_warning(label, compiled.specifiers, _DENY_SPECIFIER))
    near_misses = [u for u in compiled.unknown if NEAR_MISS in u.why]
    if near_misses:
        problems.warn(unknown_warning(label, near_misses, "; a typo denies nothing"))
    return DenyList(compiled, label)
