"""A plugin that records the tasks_changed events a session fires."""

from __future__ import annotations

from pegboard import Session, SessionEvent, hookimpl


class Events:
    def __init__(self) -> None:
        self.seen: list[SessionEvent] = []

    @hookimpl
    def on_event(self, event: SessionEvent, session: Session) -> None:
        if event.kind == "tasks_changed":
            self.seen.append(event)
