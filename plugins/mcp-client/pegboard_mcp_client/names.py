"""Provider-safe names for MCP tools: ``mcp__<server>__<tool>``.

Names are cut to the charset every provider accepts (``^[A-Za-z0-9_-]{1,64}$``). A name that
had to be shortened, or that would collide with a tool already registered (Pegboard compares
names without case, ``_`` and ``-``), gets a short hash suffix of the original server and
tool name, so it stays the same from one run to the next.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

MAX_NAME = 64
PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitise(part: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_-]`` with ``_`` (empty becomes ``_``)."""
    return _UNSAFE.sub("_", part) or "_"


def _suffix(server: str, tool: str, n: int = 0) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}\0{n}".encode()).hexdigest()
    return digest[:8]


def tool_name(server: str, tool: str, taken: Callable[[str], bool] = lambda _n: False) -> str:
    """The exposed name of ``tool`` on ``server``; ``taken(name)`` says whether a name is used."""
    base = f"{PREFIX}{sanitise(server)}__{sanitise(tool)}"
    exact = base == f"{PREFIX}{server}__{tool}"
    if len(base) <= MAX_NAME and not taken(base):
        return base
    for n in range(100):
        tag = "_" + _suffix(server, tool, n)
        name = base[: MAX_NAME - len(tag)] + tag
        if not taken(name):
            return name
    raise ValueError(f"cannot find a free name for MCP tool {tool!r} on server {server!r} (exact={exact})")


def server_prefix(server: str) -> str:
    """The prefix every tool of ``server`` starts with (before any length cut)."""
    return f"{PREFIX}{sanitise(server)}__"
