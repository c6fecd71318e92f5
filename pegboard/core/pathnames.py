"""``resolve_path``: which file a path in a call means (placeholder until the full parser lands)."""

from __future__ import annotations

import os
from pathlib import Path


def resolve_path(path: str, cwd: Path | str, home: str | Path | None = None) -> Path:
    """``path`` made absolute against ``cwd``, with ``~`` / ``~user`` expanded and ``..`` collapsed."""
    if "\x00" in path:
        raise ValueError("a path cannot contain a NUL character")
    if path == "~" or path.startswith("~/"):
        base = str(home) if home else os.path.expanduser("~")
        path = base + path[1:]
    elif path.startswith("~"):
        path = os.path.expanduser(path)
    joined = os.path.join(str(cwd), path)
    normal = os.path.normpath(joined)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return Path(normal)
