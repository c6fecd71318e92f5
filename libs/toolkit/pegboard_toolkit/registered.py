"""Named objects that plugins register through a hook a distribution declares (WebSearch's
backends, messaging's channels): collected once per ``Pegboard`` and cached in its stash.

An entry that is not of the expected protocol, a name registered twice and a hook
implementation that raises are reported as warnings, never raised."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pegboard import Pegboard, StashKey

T = TypeVar("T")


@dataclass
class Registered(Generic[T]):
    """What a registration hook collected: the entries by name, and what was wrong."""

    by_name: dict[str, T] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def collect_registered(
    pegboard: Pegboard,
    hook: str,
    key: StashKey[Registered[T]],
    kind: Any,
    *,
    kind_name: str,
    label: str,
    hook_args: Mapping[str, Any] | None = None,
) -> Registered[T]:
    """Call ``hook`` with a ``register`` callback (and ``hook_args``) once per ``pegboard``.

    ``kind`` is the runtime-checkable protocol every entry must satisfy (``kind_name`` names
    it in the warning: "a SearchBackend"); ``label`` words a name registered twice ("search
    backend"). The first entry of a name wins, in registration order."""
    found = pegboard.stash.get(key)
    if found is not None:
        return found
    found = Registered[T]()

    def register(entry: Any) -> None:
        if not isinstance(entry, kind):
            found.warnings.append(f"{hook}: {entry!r} is not {kind_name} (ignored)")
        elif entry.name in found.by_name:
            found.warnings.append(f"{label} {entry.name!r} is registered twice; the second is ignored")
        else:
            found.by_name[entry.name] = entry

    errors: list[Any] = []
    pegboard.hooks.all_sync(hook, errors, register=register, **(hook_args or {}))
    found.warnings += [f"plugin {e.plugin}: {hook} failed: {e.error}" for e in errors]
    pegboard.stash[key] = found
    return found


__all__ = ["Registered", "collect_registered"]
