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


__all__ = ["bash_missing", "shell_binary"]
