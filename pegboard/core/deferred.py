"""Deferred tools: offered by name only until a search loads their definitions.

A tool with ``deferred=True`` stays out of the definitions sent to the model while a tool
that can load it (``loads_deferred=True``, such as ToolSearch) is in the same tool set.
Once loaded for a session it is part of every later request of that session (the loaded
set is session state: ``Session.load_deferred``). Without a loader nothing is deferred: a
deferred tool would otherwise be unreachable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from pegboard.core.tools import Tool

if TYPE_CHECKING:
    from pegboard.core.session import Session


def deferred_tools_note(names: Sequence[str]) -> str:
    """The one line that names the deferred tools not loaded yet (a prompt, or the loader
    tool's description under ``pegboard serve``), or ``""`` when there are none."""
    if not names:
        return ""
    return "Deferred tools (search for them to load their definitions): " + ", ".join(names)


class DeferredTools:
    """Which deferred tools are visible, given a session's loaded set.

    ``load`` / ``loaded`` with a ``session_id`` act on the ``Pegboard``'s in-memory session
    of that id (the one ``Pegboard.call(session_id=...)`` uses); a ``Session`` object keeps
    its own set. ``version`` changes whenever any loaded set grows.
    """

    def __init__(self, memory_session: Callable[[str | None], Session] | None = None) -> None:
        self._memory_session = memory_session
        self._lock = threading.Lock()
        self.version = 0

    def bump(self) -> None:
        with self._lock:
            self.version += 1

    def loaded(self, session_id: str | None = None) -> set[str]:
        if self._memory_session is None:
            return set()
        return self._memory_session(session_id).loaded_deferred()

    def load(self, names: Iterable[str], session_id: str | None = None) -> list[str]:
        """Make ``names`` part of ``session_id``'s tool set from the next request on; returns
        the tools' own names. An unknown name raises ``SessionError`` (``Session.load_deferred``)."""
        if self._memory_session is None:
            return []
        return self._memory_session(session_id).load_deferred(list(names))

    def visible(
        self, tools: Sequence[Tool], session_id: str | None = None, *, loaded: set[str] | None = None
    ) -> list[Tool]:
        """The tools whose full definitions go into the next request."""
        if not any(t.loads_deferred for t in tools):
            return list(tools)
        have = self.loaded(session_id) if loaded is None else loaded
        return [t for t in tools if not t.deferred or t.name in have]

    def pending(
        self, tools: Sequence[Tool], session_id: str | None = None, *, loaded: set[str] | None = None
    ) -> list[str]:
        """Deferred tools not loaded yet, offered to the model by name only."""
        if not any(t.loads_deferred for t in tools):
            return []
        have = self.loaded(session_id) if loaded is None else loaded
        return sorted((t.name for t in tools if t.deferred and t.name not in have), key=str.casefold)
