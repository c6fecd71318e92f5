"""``tools/list`` pages: an opaque cursor that names the last tool of the previous page.

Anchoring on a name rather than an offset means a tool that appears or goes away between
two pages neither repeats nor hides the tools around it; a cursor whose tool is gone is
refused, and the client lists again from the start.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

DEFAULT_PAGE_SIZE = 1000
PREFIX = "pb1."


class CursorError(ValueError):
    """A cursor this server did not hand out, or whose tool is no longer listed."""


def encode_cursor(name: str) -> str:
    return PREFIX + base64.urlsafe_b64encode(name.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    if not cursor.startswith(PREFIX):
        raise CursorError(f"Invalid params: unknown cursor {cursor[:80]!r}; list tools again without a cursor")
    body = cursor[len(PREFIX) :]
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        raise CursorError(
            f"Invalid params: unknown cursor {cursor[:80]!r}; list tools again without a cursor"
        ) from None


def page(tools: Sequence[dict[str, Any]], cursor: str | None, size: int) -> dict[str, Any]:
    """One ``ListToolsResult``: up to ``size`` tools after the cursor's tool, and ``nextCursor`` if more follow."""
    start = 0
    if cursor is not None:
        after = decode_cursor(cursor)
        names = [t["name"] for t in tools]
        if after not in names:
            raise CursorError(f"Invalid params: the cursor's tool {after!r} is no longer listed; list tools again")
        start = names.index(after) + 1
    chosen = list(tools[start : start + size])
    result: dict[str, Any] = {"tools": chosen}
    if start + size < len(tools) and chosen:
        result["nextCursor"] = encode_cursor(chosen[-1]["name"])
    return result
