"""Helpers shared by the runtime tool tests (Bash, exec, background tasks, Monitor)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pegboard_background
import pegboard_bash
import pegboard_exec
import pegboard_monitor
from pegboard import Pegboard, SessionEvent, hookimpl
from pegboard.testing import isolated_pegboard

RUNTIME = (pegboard_bash, pegboard_exec, pegboard_background, pegboard_monitor)
ALLOW_ALL = {"permissions": {"allow": ["Bash", "exec", "Monitor"]}}


class Events:
    """A plugin that keeps every session event it sees (``on_event``), in order."""

    def __init__(self) -> None:
        self.seen: list[SessionEvent] = []

    @hookimpl
    def on_event(self, event: SessionEvent, session: Any) -> None:
        self.seen.append(event)

    def of(self, kind: str) -> list[SessionEvent]:
        return [e for e in self.seen if e.kind == kind]


def runtime_pegboard(
    cwd: Path,
    *plugins: object,
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    store: Any = None,
    modules: tuple[object, ...] = RUNTIME,
) -> Pegboard:
    merged: dict[str, Any] = {**ALLOW_ALL, **dict(config or {})}
    return isolated_pegboard(*modules, *plugins, config=merged, cwd=cwd, env=env, store=store)


def pid_gone(pid: int, within: float = 3.0) -> bool:
    """True once ``pid`` no longer runs (gone, or a zombie nobody reaped yet)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def wait_for_file(path: Path, within: float = 5.0) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} did not appear")
