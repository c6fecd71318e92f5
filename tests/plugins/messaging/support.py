"""Helpers for the messaging tests: Pegboards with the messaging tools and chosen channels,
an approver that records what it was asked, and the session events a test saw."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pegboard_messaging
from pegboard import Pegboard, hookimpl
from pegboard.core.config import ConfigLayer
from pegboard.core.store import MemorySessionStore


@dataclass
class Recorder:
    """An ``on_event`` plugin keeping every event a tool emitted, and an approver."""

    events: list[tuple[str, Any]] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    answer: bool = True

    @hookimpl
    def on_event(self, event: Any, session: Any) -> None:
        if event.kind.startswith("message_"):
            self.events.append((event.kind, event.data))

    def approve(self, call: Any, decision: Any) -> bool:
        self.asked.append(str(decision.reason))
        return self.answer


def board(*plugins: object, user: Mapping[str, Any] | None = None, project: Mapping[str, Any] | None = None,
          trusted: bool = True, cwd: Path | None = None, env: Mapping[str, str] | None = None,
          recorder: Recorder | None = None) -> Pegboard:
    """A Pegboard with the messaging tools, ``plugins`` (channels), a user and a project layer."""
    root = cwd or Path.cwd()
    layers: Sequence[ConfigLayer] = [
        ConfigLayer("user", dict(user or {}), root=root),
        ConfigLayer("project", dict(project or {}), root=root, trusted=trusted),
    ]
    extra = [recorder] if recorder is not None else []
    return Pegboard(plugins=[pegboard_messaging, *plugins, *extra], load_entrypoints=False, layers=list(layers),
                    cwd=root, env=dict(env or {}), store=MemorySessionStore())
