"""Deferred tools: offered by name only until a search loads their definitions.

A tool with ``deferred=True`` stays out of the definitions sent to the model while a tool
that can load it (``loads_deferred=True``, such as ToolSearch) is in the same tool set.
Once loaded for a session it is part of every later request of that session. Without a
loader nothing is deferred: a deferred tool would otherwise be unreachable.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from pegboard.core.tools import Tool


class DeferredTools:
    """Which deferred tools each session has loaded."""

    def __init__(self) -> None:
        self._loaded: dict[str | None, set[str]] = {}
        self._lock = threading.Lock()
        self.version = 0

    def loaded(self, session_id: str | None = None) -> set[str]:
        with self._lock:
            return set(self._loaded.get(session_id, ()))

    def load(self, names: Iterable[str], session_id: str | None = None) -> None:
        """Make ``names`` part of ``session_id``'s tool set from the next request on."""
        with self._lock:
            bucket = self._loaded.setdefault(session_id, set())
            before = len(bucket)
            bucket.update(names)
            if len(bucket) != before:
                self.version += 1

    def visible(self, tools: Sequence[Tool], session_id: str | None = None) -> list[Tool]:
        """The tools whose full definitions go into the next request."""
        if not any(t.loads_deferred for t in tools):
            return list(tools)
        loaded = self.loaded(session_id)
        return [t for t in tools if not t.deferred or t.name in loaded]

    def pending(self, tools: Sequence[Tool], session_id: str | None = None) -> list[str]:
        """Deferred tools not loaded yet, offered to the model by name only."""
        if not any(t.loads_deferred for t in tools):
            return []
        loaded = self.loaded(session_id)
        return sorted((t.name for t in tools if t.deferred and t.name not in loaded), key=str.casefold)
