"""What the policy is asked about: the registered tools, groups, profiles and provider policies.

A catalog is immutable, so its lookup tables are built once; catalogs with the same contents
share them (``Pegboard.tools()`` builds a fresh catalog on every call and reuses the tables).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pegboard.core.config import default_profile
from pegboard.core.policy.index import ToolIndex
from pegboard.core.providers import ProviderPolicy


@dataclass(frozen=True)
class PolicyTool:
    """What the policy needs to know about one registered tool."""

    name: str
    aliases: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    optional: bool = False
    unavailable: str | None = None
    server: str | None = None  # ``Tool.server``: the policy entry ``mcp__<server>`` names the tool


def kernel_profiles() -> dict[str, Sequence[str] | None]:
    """The profile the embedded default config selects, as no restriction.

    The kernel's own default must never fail closed, so it stands in while no plugin
    registers a profile of that name; a registered one replaces it.
    """
    name = default_profile()
    return {} if name is None else {name: None}


@dataclass(frozen=True)
class PolicyCatalog:
    """Everything registered: tools, groups (bare name -> member names), profiles
    (name -> allow entries, ``None`` = no restriction) and provider policies.

    ``kernel_profiles`` are the profiles the kernel supplies under the registered ones."""

    tools: Sequence[PolicyTool]
    groups: Mapping[str, Sequence[str]] = field(default_factory=dict)
    profiles: Mapping[str, Sequence[str] | None] = field(default_factory=dict)
    provider_policies: Sequence[ProviderPolicy] = ()
    kernel_profiles: Mapping[str, Sequence[str] | None] = field(default_factory=kernel_profiles)
    _index_cache: list[ToolIndex] = field(default_factory=list, init=False, repr=False, compare=False)
    _unavailable_cache: list[dict[int, str]] = field(default_factory=list, init=False, repr=False, compare=False)

    def index(self) -> ToolIndex:
        """The lookup tables of this catalog, shared with equal catalogs."""
        if not self._index_cache:
            self._index_cache.append(shared_index(self))
        return self._index_cache[0]

    def unavailable(self) -> dict[int, str]:
        """``{tool position in the index: reason}`` for the tools whose availability check failed."""
        if not self._unavailable_cache:
            index = self.index()
            reasons = [t.unavailable for t in self.tools]
            self._unavailable_cache.append(
                {i: r for i, r in enumerate(map(reasons.__getitem__, index.order)) if r}
            )
        return self._unavailable_cache[0]


_SHARED_INDEXES: OrderedDict[tuple[Any, ...], ToolIndex] = OrderedDict()
_SHARED_INDEXES_MAX = 8
_SHARED_INDEXES_LOCK = threading.Lock()


def index_signature(catalog: PolicyCatalog) -> tuple[Any, ...] | None:
    """What the index depends on (everything but availability), or ``None`` if unhashable."""
    try:
        sig = (
            tuple([(t.name, t.aliases, t.groups, t.optional, t.server) for t in catalog.tools]),
            tuple((k, tuple(v)) for k, v in catalog.groups.items()),
            tuple((k, None if v is None else tuple(v)) for k, v in catalog.profiles.items()),
            tuple((k, None if v is None else tuple(v)) for k, v in catalog.kernel_profiles.items()),
            # the cached index holds these policies, so their ids cannot be reused meanwhile
            tuple(map(id, catalog.provider_policies)),
        )
        hash(sig)
    except TypeError:
        return None
    return sig


def shared_index(catalog: PolicyCatalog) -> ToolIndex:
    """The index of an equal catalog seen recently, or a new one (kept for the next)."""
    sig = index_signature(catalog)
    if sig is None:
        return ToolIndex(catalog)
    with _SHARED_INDEXES_LOCK:
        index = _SHARED_INDEXES.get(sig)
        if index is not None:
            _SHARED_INDEXES.move_to_end(sig)
            return index
    index = ToolIndex(catalog)
    with _SHARED_INDEXES_LOCK:
        _SHARED_INDEXES[sig] = index
        while len(_SHARED_INDEXES) > _SHARED_INDEXES_MAX:
            _SHARED_INDEXES.popitem(last=False)
    return index


def iter_groups(catalog: PolicyCatalog) -> Iterator[tuple[str, list[str]]]:
    """``(group name, member tool names that are installed)`` for every group, sorted."""
    index = catalog.index()
    display = index.group_display_names
    for gkey in sorted(display, key=lambda k: display[k].casefold()):
        yield display[gkey], [index.tools[i].name for i in index.group_members.get(gkey, ())]
