"""Where the Deno executable is: the one the ``deno`` wheel installed.

Kept apart from the runtime so that listing tools (which checks availability) imports
nothing heavy.
"""

from __future__ import annotations

import os


def deno_binary() -> str | None:
    """The Deno executable the ``deno`` wheel installed, or ``None``."""
    try:
        import deno
    except ImportError:
        return None
    try:
        found = str(deno.find_deno_bin())
    except Exception:
        return None
    return found if os.access(found, os.X_OK) else None


def deno_missing() -> str | None:
    """Why codemode cannot run here (no Deno runtime), or ``None``: its availability check."""
    if deno_binary() is None:
        return "the Deno runtime is missing: install the 'deno' package (pip install deno)"
    return None
