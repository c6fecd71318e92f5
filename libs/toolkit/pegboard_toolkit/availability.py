"""Availability checks that tools name in ``Tool(availability=...)``.

They are module-level functions in a module that imports almost nothing, so a declaration file
can name them (``pegboard_toolkit.availability:bash_missing``) and listing tools asks them
without importing the tools themselves.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any


def shell_binary(name: str = "bash") -> str | None:
    """Where the shell binary is (``None``: not installed); looked up once per ``PATH``."""
    return _which(name, os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=32)
def _which(name: str, path: str) -> str | None:
    import shutil

    return shutil.which(name, path=path)


def bash_missing() -> str | None:
    """Why a tool that runs bash commands cannot run here, or ``None``."""
    return None if shell_binary() else "bash is not on PATH"


#: environment variables that switch off non-essential traffic (seed: Monitor is then unavailable)
TRAFFIC_SWITCHES = ("DISABLE_TELEMETRY", "FUXI_CODE_DISABLE_NONESSENTIAL_TRAFFIC")


def monitor_unavailable() -> str | None:
    """Why Monitor cannot run: a traffic switch set to a non-empty value, or no bash."""
    switched = [name for name in TRAFFIC_SWITCHES if os.environ.get(name, "").strip()]
    if switched:
        return f"Monitor is not available while {switched[0]} is set (unset it to use Monitor)"
    return bash_missing()


@dataclasses.dataclass(frozen=True)
class SwitchedOff:
    """Unavailable while ``<section>.enabled`` is false: ``Tool(availability=SwitchedOff(KEY))``.

    A plain-value check, so a declaration records it and listing tools asks it without
    importing the tool: it reads the raw config value, and only a value that is not a plain
    boolean is left to the section's model (which imports the plugin) to judge. ``default`` is
    the section model's own default for ``enabled``.
    """

    section: str
    default: bool = True

    def __call__(self, pegboard: Any) -> str | None:
        value = pegboard.configured(f"{self.section}.enabled")
        if value is None:
            enabled = self.default
        elif isinstance(value, bool):
            enabled = value
        else:
            enabled = bool(pegboard.settings(self.section).enabled)
        return None if enabled else f"turned off by {self.section}.enabled"


__all__ = ["TRAFFIC_SWITCHES", "SwitchedOff", "bash_missing", "monitor_unavailable", "shell_binary"]
