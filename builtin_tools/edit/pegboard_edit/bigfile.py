"""One replacement in a big UTF-8 file, done on its bytes.

Decoding 100 MB, splicing the text and encoding it again costs several copies of the file;
for a UTF-8 file with ``\\n`` line ends none of that is needed. UTF-8 is self-synchronising:
the bytes of a string occur in the file's bytes exactly where the string occurs in its text
(a character's encoding never starts inside another's), and bytes that are not valid UTF-8
stay as they are. So the match is found with ``bytes.find``, the new file is written as three
pieces (head, new bytes, tail; no join), and only the few lines around the change are decoded
for the structured patch. Anything else (CRLF, UTF-16, ``replace_all``) takes the text path.
"""

from __future__ import annotations

import codecs

from pegboard_toolkit import Hunk, structured_patch

#: files from this size on take the byte path when they can
MIN_BYTES = 1 << 20
_CONTEXT = 3


def usable(data: bytes, old: str, new: str, replace_all: bool) -> bytes | None:
    """``old`` as UTF-8 bytes when this edit can be made on ``data``'s bytes, else ``None``."""
    if len(data) < MIN_BYTES or replace_all or not old:
        return None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\r" in data:
        return None
    if "\r" in old or "\r" in new or "\ufeff" in old:
        return None
    try:
        new.encode("utf-8")
        return old.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _line_start(data: bytes, at: int, lines_before: int) -> int:
    start = data.rfind(b"\n", 0, at) + 1
    for _ in range(lines_before):
        if start == 0:
            break
        start = data.rfind(b"\n", 0, start - 1) + 1
    return start


def _line_end(data: bytes, at: int, lines_after: int) -> int:
    end = at
    if end > 0 and data[end - 1:end] == b"\n":
        lines_after -= 1
    for _ in range(lines_after + 1):
        if end >= len(data):
            return len(data)
        nl = data.find(b"\n", end)
        end = len(data) if nl < 0 else nl + 1
    return end


def window_patch(data: bytes, at: int, size: int, new: bytes) -> list[Hunk]:
    """The structured patch of replacing ``data[at:at + size]`` with ``new``, computed on the
    lines around the change only, numbered as in the whole file."""
    start = _line_start(data, at, _CONTEXT)
    end = _line_end(data, at + size, _CONTEXT)
    before = data[start:end].decode("utf-8", "surrogateescape")
    after = (data[start:at] + new + data[at + size:end]).decode("utf-8", "surrogateescape")
    base = data.count(b"\n", 0, start)
    hunks = structured_patch(before, after, _CONTEXT)
    for h in hunks:
        h["oldStart"] += base
        h["newStart"] += base
    return hunks


__all__ = ["MIN_BYTES", "usable", "window_patch"]
