"""Availability checks that tools name in ``Tool(availability=...)``.

They are module-level functions in a module that imports almost nothing, so a declaration file
can name them (``pegboard_toolkit.availability:bash_missing``) and listing tools asks them
without importing the tools themselves.
"""

from __future__ import annotations

import functools
import os


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


__all__ = ["TRAFFIC_SWITCHES", "bash_missing", "monitor_unavailable", "shell_binary"]
