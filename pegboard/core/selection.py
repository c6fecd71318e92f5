"""Which plugins may load: ``plugins.disabled`` in config and two environment variables.

Kept apart from plugin loading so that the CLI can filter plugin commands without
importing pluggy.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

DISABLE_ENV = "PEGBOARD_DISABLE_PLUGINS"
LOAD_ENV = "PEGBOARD_LOAD_PLUGINS"


def _split_env(value: str | None) -> set[str] | None:
    if value is None or not value.strip():
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


@dataclass(frozen=True)
class PluginSelection:
    """Which plugins may load: ``plugins.disabled`` config plus the two environment variables."""

    disabled: frozenset[str] = frozenset()
    only: frozenset[str] | None = None

    @classmethod
    def from_settings(cls, disabled: Iterable[str] = (), env: Mapping[str, str] | None = None) -> PluginSelection:
        env = os.environ if env is None else env
        blocked = set(disabled) | (_split_env(env.get(DISABLE_ENV)) or set())
        only = _split_env(env.get(LOAD_ENV))
        return cls(frozenset(blocked), frozenset(only) if only is not None else None)

    def blocked_reason(self, *names: str | None) -> str | None:
        labels = {n for n in names if n}
        if "*" in self.disabled:
            return f"blocked by {DISABLE_ENV}=*"
        if hit := labels & self.disabled:
            return f"blocked by plugins.disabled or {DISABLE_ENV} ({', '.join(sorted(hit))})"
        if self.only is not None and not labels & self.only:
            return f"not listed in {LOAD_ENV}"
        return None
